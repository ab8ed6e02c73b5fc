import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { projectRoot } from '../../bench/options';
import { synthesize } from './synth';

/**
 * AWS's CloudFormation linter on the templates CDK synthesizes (the stack and its nested stacks, as
 * `npm run synth` writes them, bundling skipped), with the project's .cfnlintrc.yaml: any error or
 * warning fails. cfn-lint is a Python tool, not an npm package: where it is missing the test says
 * so and is skipped, except in CI (CI=true), where it is required.
 */

const version = spawnSync('cfn-lint', ['--version'], { encoding: 'utf8' });
const installed = version.error === undefined && version.status === 0;
const inCi = process.env.CI === 'true';

interface Finding {
  Level: 'Error' | 'Warning' | 'Informational';
  Filename: string;
  Message: string;
  Rule: { Id: string };
  Location: { Path: (string | number)[] };
}

/** cfn-lint's findings (its JSON output), run from the project root so that it reads .cfnlintrc.yaml. */
function lint(templates: readonly string[]): Finding[] {
  const run = spawnSync('cfn-lint', ['--format', 'json', '--', ...templates], {
    cwd: projectRoot,
    encoding: 'utf8',
    maxBuffer: 64 * 1024 * 1024,
  });
  // Exit status: a bit per level found (2 error, 4 warning, 8 informational); 1 is cfn-lint failing.
  if (run.error || run.status === null || (run.status & 1) === 1) {
    throw new Error(`cfn-lint did not run: ${run.error?.message ?? run.stderr}`);
  }
  return JSON.parse(run.stdout || '[]') as Finding[];
}

const failing = (findings: readonly Finding[]) =>
  findings
    .filter((finding) => finding.Level !== 'Informational')
    .map(
      (finding) =>
        `${finding.Rule.Id} ${basename(finding.Filename)} ${finding.Location.Path.join('/')}: ${finding.Message}`,
    );

const scratch = mkdtempSync(join(tmpdir(), 'cfn-lint-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

describe('cfn-lint', () => {
  it('finds no error or warning in the synthesized templates', ({ skip }) => {
    if (!installed && inCi) {
      throw new Error(`CI=true and cfn-lint is not on PATH (${version.error?.message ?? version.stderr})`);
    }
    if (!installed) {
      const why = 'cfn-lint is not installed (Python: pip install cfn-lint): CloudFormation lint SKIPPED';
      console.warn(`\n⚠ ${why}\n`);
      skip(why);
    }
    const assembly = synthesize().app.synth();
    const templates = readdirSync(assembly.directory)
      .filter((file) => file.endsWith('.template.json'))
      .map((file) => join(assembly.directory, file));
    // The stack, its per-route alarms and its per-function alarms.
    expect(templates.map((file) => basename(file).replace(/[0-9A-F]{8}\./, '.'))).toEqual(
      expect.arrayContaining([
        'TestStack.template.json',
        'TestStackFunctionAlarms.nested.template.json',
        'TestStackRouteAlarms.nested.template.json',
      ]),
    );
    expect(failing(lint(templates))).toEqual([]);
  }, 180_000);

  it('fails on an error and on a warning, and leaves out only the rules .cfnlintrc.yaml ignores', ({
    skip,
  }) => {
    if (!installed) skip('cfn-lint is not installed');
    const template = join(scratch, 'flawed.template.json');
    writeFileSync(
      template,
      JSON.stringify({
        Resources: {
          Queue: { Type: 'AWS::SQS::Queue', Properties: { Unknown: 1, QueueName: { 'Fn::Sub': 'plain' } } },
          Policy: {
            Type: 'AWS::SQS::QueuePolicy',
            DependsOn: 'Queue',
            Properties: { Queues: [{ Ref: 'Queue' }], PolicyDocument: { Statement: [] } },
          },
        },
      }),
    );
    const rules = failing(lint([template])).map((finding) => finding.split(' ')[0]);
    expect(rules).toEqual(expect.arrayContaining(['E3002', 'W1020']));
    expect(rules).not.toContain('W3005');
  }, 60_000);
});
