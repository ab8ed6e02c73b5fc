import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { App, Stack } from 'aws-cdk-lib';
import { afterAll, describe, expect, it } from 'vitest';
import { workerDefinitions } from '../../functions/workers';
import { projectRoot, ServiceFunction } from '../../infra/constructs/service-function';
import { workerBuildProps } from '../../infra/stacks/service-stack';

/**
 * The PDF transcript renderer bundled as the pdf-transcript worker is (its fonts beside the bundle,
 * fontkit replaced by a stub: functions/workers.ts), run in plain node: it still renders, with the
 * standard fonts, from a bundle without fontkit and brotli.
 */

// Inside the project: the bundle leaves @aws-sdk/* external, and node resolves them from here.
const cacheDir = join(projectRoot, 'node_modules/.cache');
const outdir = (() => {
  if (!existsSync(cacheDir)) execFileSync('mkdir', ['-p', cacheDir]);
  return mkdtempSync(join(cacheDir, 'pdf-bundle-'));
})();
afterAll(() => rmSync(outdir, { recursive: true, force: true }));

const worker = workerDefinitions.find((definition) => definition.name === 'pdf-transcript');

function buildRenderer(): string {
  const app = new App({ outdir });
  const stack = new Stack(app, 'Pdf');
  new ServiceFunction(stack, 'Fn', {
    entry: 'test/infra/fixtures/pdf-render-entry.ts',
    ...(worker && workerBuildProps(worker)),
  });
  app.synth();
  const [asset] = readdirSync(outdir).filter((entry) => entry.startsWith('asset.'));
  return join(outdir, asset ?? '');
}

const now = '2026-11-21T10:00:00.000Z';
const messages = [
  { senderType: 'visitor', senderId: 'v-1', content: 'Hello, my order is late', createdAt: now },
  { senderType: 'operator', senderId: 'op-1', content: 'Let me check: café, naïve, 10 €', createdAt: now },
].map((message, i) => ({ id: `m-${i}`, type: 'text', ...message }));

describe('the PDF transcript renderer as the worker bundles it', () => {
  it('renders with the standard fonts from a bundle that holds neither fontkit nor brotli', () => {
    expect(worker?.aliases).toHaveProperty('fontkit');
    const code = buildRenderer();
    const bundle = join(code, 'index.mjs');
    // fontkit and brotli were ~700 KB of the worker's ~1,000.
    expect(statSync(bundle).size).toBeLessThan(400 * 1024);
    const script = `
      const { handler } = await import(${JSON.stringify(bundle)});
      process.stdout.write('@@' + await handler(JSON.parse(process.env.INPUT)));`;
    const out = execFileSync(process.execPath, ['--input-type=module', '-e', script], {
      cwd: code,
      encoding: 'utf8',
      env: {
        PATH: process.env.PATH,
        POWERTOOLS_LOG_LEVEL: 'ERROR',
        INPUT: JSON.stringify({
          conversation: { id: 'c-1', title: 'Late order', createdAt: now },
          messages,
        }),
      },
    });
    const pdf = Buffer.from(out.slice(out.lastIndexOf('@@') + 2), 'base64');
    expect(pdf.subarray(0, 5).toString('latin1')).toBe('%PDF-');
    const text = pdf.toString('latin1');
    expect(text).toContain('/BaseFont /Helvetica-Bold');
    expect(text).toContain('/BaseFont /Helvetica');
    expect(text).toContain('(Transcript: Late order)');
  });
});
