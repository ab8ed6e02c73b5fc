import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { execWrapper } from '../../infra/function-tuning';

/** Stands in for the runtime's entry script (/var/runtime/index.mjs), the command line's last word. */
const dir = mkdtempSync(join(tmpdir(), 'exec-wrapper-'));
const entryScript = join(dir, 'entry.cjs');
writeFileSync(
  entryScript,
  'console.log(JSON.stringify({ argv: process.execArgv, limitMb: require("v8").getHeapStatistics().heap_size_limit / 1048576 }))',
);
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** What node reports about itself when started through the wrapper the way Lambda's bootstrap does. */
function startThroughWrapper(flags: string | undefined, runtimeArgs: readonly string[]) {
  const env: NodeJS.ProcessEnv = { PATH: process.env.PATH };
  if (flags !== undefined) env[execWrapper.flagsVar] = flags;
  const out = execFileSync(execWrapper.source, [process.execPath, ...runtimeArgs, entryScript], {
    env,
    encoding: 'utf8',
  });
  return JSON.parse(out) as { argv: string[]; limitMb: number };
}

describe('the exec wrapper (AWS_LAMBDA_EXEC_WRAPPER)', () => {
  const lambdaArgs = ['--expose-gc', '--max-semi-space-size=25', '--max-old-space-size=461'];

  it("puts its flags after the runtime's, so they win, before the entry script", () => {
    const wrapped = startThroughWrapper('--max-semi-space-size=1', lambdaArgs);
    const plain = startThroughWrapper(undefined, lambdaArgs);
    expect(wrapped.argv).toEqual([...lambdaArgs, '--max-semi-space-size=1']);
    // The young generation's share of the heap limit goes from ~95 MB (25 MB semi-spaces) to a few.
    expect(plain.limitMb - wrapped.limitMb).toBeGreaterThan(60);
  });

  it('passes the command line through unchanged without flags, and several flags as separate words', () => {
    expect(startThroughWrapper('', lambdaArgs).argv).toEqual(lambdaArgs);
    expect(startThroughWrapper('--max-semi-space-size=2  --stack-size=900', lambdaArgs).argv).toEqual([
      ...lambdaArgs,
      '--max-semi-space-size=2',
      '--stack-size=900',
    ]);
  });

  it('refuses to run without a command line to wrap', () => {
    const result = spawnSync(execWrapper.source, [], { encoding: 'utf8' });
    expect(result.status).toBe(64);
    expect(result.stderr).toContain('expected the runtime');
  });
});
