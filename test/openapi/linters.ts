import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { isObject, resolvePointer } from '../helpers/openapi-schemas';

/**
 * Runs the stock OpenAPI linters (Redocly CLI with `redocly.yaml`, Spectral with `.spectral.yaml`)
 * on a document, as their CLIs from node_modules/.bin, and reports what they find. Shared by
 * test/openapi/lint.test.ts and `npm run openapi:lint` (test/openapi/lint-served.ts).
 */

export const repoRoot = fileURLToPath(new URL('../..', import.meta.url));
const bin = (name: string): string => join(repoRoot, 'node_modules', '.bin', name);

/** Each CLI on its own; both together stay well under 30 s on a two-core machine. */
const CLI_TIMEOUT_MS = 60_000;

interface CliRun {
  stdout: string;
  stderr: string;
  exitCode: number;
  ms: number;
}

function runCli(name: string, args: readonly string[]): Promise<CliRun> {
  const started = performance.now();
  return new Promise((resolve, reject) => {
    execFile(
      bin(name),
      args,
      {
        cwd: repoRoot,
        timeout: CLI_TIMEOUT_MS,
        maxBuffer: 64 * 1024 * 1024,
        env: {
          ...process.env,
          // No telemetry, no update check, no colours: offline, quiet, parseable.
          REDOCLY_TELEMETRY: 'off',
          REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true',
          NO_COLOR: '1',
        },
      },
      (error, stdout, stderr) => {
        const ms = performance.now() - started;
        if (error && (error.killed || typeof error.code !== 'number')) {
          reject(
            new Error(
              `${name} ${args.join(' ')} failed after ${Math.round(ms)} ms: ${error.message}\n${stderr}`,
            ),
          );
          return;
        }
        resolve({ stdout, stderr, exitCode: typeof error?.code === 'number' ? error.code : 0, ms });
      },
    );
  });
}

// ---------------------------------------------------------------------------------------------
// Where a finding is: input (what clients send), output (what the service returns or sends), or
// the document itself. Components are classified by what reaches them through $ref.

export type Side = 'input' | 'output' | 'input+output' | 'document' | 'unreferenced';

const OPERATION_METHODS = ['get', 'put', 'post', 'delete', 'patch', 'head', 'options', 'trace'];

function collectRefs(node: unknown, into: string[]): void {
  if (Array.isArray(node)) {
    for (const item of node) collectRefs(item, into);
  } else if (isObject(node)) {
    for (const [key, value] of Object.entries(node)) {
      if (key === '$ref' && typeof value === 'string' && value.startsWith('#/')) into.push(value);
      else collectRefs(value, into);
    }
  }
}

const escapePointer = (segment: string): string => segment.replace(/~/g, '~0').replace(/\//g, '~1');

/** `#/components/schemas/Conversation/properties/id` → `#/components/schemas/Conversation`. */
const componentOf = (pointer: string): string => pointer.split('/').slice(0, 4).join('/');

/** Every component reachable, through $ref, from the given roots. */
function reachableComponents(document: unknown, roots: readonly unknown[]): Set<string> {
  const pending: string[] = [];
  for (const root of roots) collectRefs(root, pending);
  const seen = new Set<string>();
  for (let ref = pending.pop(); ref !== undefined; ref = pending.pop()) {
    const component = componentOf(ref);
    if (seen.has(component)) continue;
    seen.add(component);
    collectRefs(resolvePointer(document, component), pending);
  }
  return seen;
}

export function sideClassifier(document: unknown): (path: readonly (string | number)[]) => Side {
  const inputs: unknown[] = [];
  const outputs: unknown[] = [];
  const paths = isObject(document) && isObject(document.paths) ? document.paths : {};
  for (const item of Object.values(paths)) {
    if (!isObject(item)) continue;
    inputs.push(item.parameters);
    for (const method of OPERATION_METHODS) {
      const operation = item[method];
      if (!isObject(operation)) continue;
      inputs.push(operation.parameters, operation.requestBody);
      outputs.push(operation.responses);
    }
  }
  // Webhook payloads, and the receiver's answers, are what the service sends and reads back: outputs.
  if (isObject(document)) outputs.push(document.webhooks);
  const fromInputs = reachableComponents(document, inputs);
  const fromOutputs = reachableComponents(document, outputs);
  return (path) => {
    const [root] = path;
    if (root === 'webhooks') return 'output';
    if (root === 'paths') {
      const segments = path.map(String);
      if (segments.includes('responses')) return 'output';
      if (segments.includes('parameters') || segments.includes('requestBody')) return 'input';
      return 'document';
    }
    if (root === 'components' && path.length >= 3) {
      const component = `#/${path.slice(0, 3).map(String).map(escapePointer).join('/')}`;
      const input = fromInputs.has(component);
      const output = fromOutputs.has(component);
      if (input && output) return 'input+output';
      if (input) return 'input';
      if (output) return 'output';
      return 'unreferenced';
    }
    return 'document';
  };
}

// ---------------------------------------------------------------------------------------------
// Redocly

export interface RedoclyProblem {
  ruleId: string;
  severity: string;
  message: string;
  location: { pointer?: string; source?: { ref?: string } }[];
}

export interface RedoclyResult {
  problems: RedoclyProblem[];
  /** Errors and warnings: what fails the check. */
  blocking: RedoclyProblem[];
  ms: number;
}

/**
 * Findings of a rule at one place that the contract makes unavoidable, each with its reason (as
 * .spectral.yaml's overrides carry theirs). Keyed `ruleId pointer`.
 */
const REDOCLY_EXEMPTIONS: Readonly<Record<string, string>> = {
  // The contract fixes both `PUT /api/visitors/by-external-id/{externalId}` and `POST
  // /api/visitors/{id}/merge`. Only `/api/visitors/by-external-id/merge` fits both templates, and
  // never for one request: the methods differ and `{id}` is a uuid.
  'no-ambiguous-paths #/paths/~1api~1visitors~1{id}~1merge': 'paths fixed by the contract',
};

const exempt = (problem: RedoclyProblem): boolean =>
  problem.location.some((place) => `${problem.ruleId} ${place.pointer}` in REDOCLY_EXEMPTIONS);

export async function runRedocly(documentPath: string): Promise<RedoclyResult> {
  const run = await runCli('redocly', [
    'lint',
    documentPath,
    '--config',
    join(repoRoot, 'redocly.yaml'),
    '--format=json',
    '--max-problems=100000',
    '--lint-config=error',
  ]);
  let parsed: unknown;
  try {
    parsed = JSON.parse(run.stdout);
  } catch {
    throw new Error(`redocly printed no JSON report (exit ${run.exitCode}):\n${run.stdout}\n${run.stderr}`);
  }
  const problems = (
    isObject(parsed) && Array.isArray(parsed.problems) ? parsed.problems : []
  ) as RedoclyProblem[];
  return {
    problems,
    blocking: problems.filter(
      (problem) => (problem.severity === 'error' || problem.severity === 'warn') && !exempt(problem),
    ),
    ms: run.ms,
  };
}

// ---------------------------------------------------------------------------------------------
// Spectral

export interface SpectralFinding {
  code: string;
  message: string;
  path: (string | number)[];
  /** 0 error, 1 warn, 2 info, 3 hint. */
  severity: number;
}

export interface ClassifiedFinding extends SpectralFinding {
  side: Side;
}

export interface SpectralResult {
  findings: ClassifiedFinding[];
  /** Errors and warnings: what fails the check (suppressions are already applied by the ruleset). */
  blocking: ClassifiedFinding[];
  ms: number;
}

export const SPECTRAL_SEVERITY = ['error', 'warn', 'info', 'hint'] as const;

export async function runSpectral(documentPath: string, document: unknown): Promise<SpectralResult> {
  const output = `${documentPath}.spectral.json`;
  const run = await runCli('spectral', [
    'lint',
    documentPath,
    '--ruleset',
    join(repoRoot, '.spectral.yaml'),
    '--format',
    'json',
    '--output',
    output,
    '--quiet',
  ]);
  let parsed: unknown;
  try {
    parsed = JSON.parse(await readFile(output, 'utf8'));
  } catch {
    throw new Error(`spectral wrote no JSON report (exit ${run.exitCode}):\n${run.stdout}\n${run.stderr}`);
  }
  const sideOf = sideClassifier(document);
  const findings = (Array.isArray(parsed) ? (parsed as SpectralFinding[]) : []).map((finding) => ({
    ...finding,
    side: sideOf(finding.path),
  }));
  return { findings, blocking: findings.filter((finding) => finding.severity <= 1), ms: run.ms };
}

// ---------------------------------------------------------------------------------------------
// Both, on one document written to a temporary `openapi.json` (the name `.spectral.yaml` overrides match).

export interface LintResults {
  redocly: RedoclyResult;
  spectral: SpectralResult;
  ms: number;
}

export async function lintDocument(document: unknown): Promise<LintResults> {
  const started = performance.now();
  const dir = await mkdtemp(join(tmpdir(), 'openapi-lint-'));
  try {
    const documentPath = join(dir, 'openapi.json');
    await writeFile(documentPath, JSON.stringify(document, null, 2));
    const [redocly, spectral] = await Promise.all([
      runRedocly(documentPath),
      runSpectral(documentPath, document),
    ]);
    return { redocly, spectral, ms: performance.now() - started };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

// ---------------------------------------------------------------------------------------------
// Reports: counts by rule, then a few locations of each.

const pointerOf = (path: readonly (string | number)[]): string =>
  `#/${path.map((segment) => escapePointer(String(segment))).join('/')}`;

function byKey<T>(items: readonly T[], key: (item: T) => string): [string, T[]][] {
  const groups = new Map<string, T[]>();
  for (const item of items) {
    const name = key(item);
    groups.set(name, [...(groups.get(name) ?? []), item]);
  }
  return [...groups.entries()].sort((a, b) => b[1].length - a[1].length || a[0].localeCompare(b[0]));
}

export function redoclyReport(problems: readonly RedoclyProblem[], examples = 5): string {
  const lines = [`Redocly: ${problems.length} problem(s)`];
  for (const [rule, group] of byKey(problems, (problem) => `${problem.severity} ${problem.ruleId}`)) {
    lines.push(`  ${rule} ×${group.length}`);
    for (const problem of group.slice(0, examples)) {
      lines.push(`      ${problem.location[0]?.pointer ?? '(document)'}  ${problem.message}`);
    }
    if (group.length > examples) lines.push(`      … and ${group.length - examples} more`);
  }
  return lines.join('\n');
}

export function spectralReport(findings: readonly ClassifiedFinding[], examples = 5): string {
  const lines = [`Spectral: ${findings.length} finding(s)`];
  const severity = (finding: ClassifiedFinding) =>
    SPECTRAL_SEVERITY[finding.severity] ?? String(finding.severity);
  for (const [rule, group] of byKey(findings, (finding) => `${severity(finding)} ${finding.code}`)) {
    const sides = byKey(group, (finding) => finding.side)
      .map(([side, members]) => `${side} ${members.length}`)
      .join(', ');
    lines.push(`  ${rule} ×${group.length} (${sides})`);
    for (const finding of group.slice(0, examples)) {
      lines.push(`      [${finding.side}] ${pointerOf(finding.path)}  ${finding.message}`);
    }
    if (group.length > examples) lines.push(`      … and ${group.length - examples} more`);
  }
  return lines.join('\n');
}
