import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { build, type Metafile } from 'esbuild';
import { workerDefinitions } from '../functions/workers';
import { bundleDefines } from '../infra/function-tuning';
import { cdkBuildOptions, projectRoot } from './options';

export interface Contributor {
  name: string;
  bytes: number;
  files: number;
}

export interface Bundle {
  /** Function group, `worker:<name>` for a background worker, or `baseline`. */
  name: string;
  file: string;
  bytes: number;
  /** Bytes in the output by package (node_modules) or project folder, largest first. */
  contributors: Contributor[];
  /** The largest contributor's own breakdown by sub-folder, largest first. */
  largestDetail: Contributor[];
}

export const BASELINE = 'baseline';

/** The reference point of the cold-import ratio: nothing but the DynamoDB DocumentClient. */
const BASELINE_SOURCE = `import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
export const db = DynamoDBDocumentClient.from(new DynamoDBClient({}));
`;

const PACKAGE = /(?:^|\/)node_modules\/((?:@[^/]+\/)?[^/]+)\/(.*)$/;

/** `node_modules/zod/v4/core/x.js` → zod; `shared/http/stack.ts` → shared/http. */
function ownerOf(path: string): { owner: string; rest: string } {
  const match = PACKAGE.exec(path);
  if (match?.[1]) return { owner: match[1], rest: match[2] ?? '' };
  if (path.startsWith('../') || path.startsWith('/')) return { owner: '(bench entry)', rest: '' };
  const parts = path.split('/');
  const owner = parts.length > 2 ? `${parts[0]}/${parts[1]}` : (parts[0] ?? path);
  return { owner, rest: parts.slice(2).join('/') };
}

function tally(entries: Iterable<[string, number]>): Contributor[] {
  const totals = new Map<string, Contributor>();
  for (const [name, bytes] of entries) {
    const entry = totals.get(name) ?? { name, bytes: 0, files: 0 };
    entry.bytes += bytes;
    entry.files += 1;
    totals.set(name, entry);
  }
  return [...totals.values()].sort((a, b) => b.bytes - a.bytes);
}

function analyse(metafile: Metafile): Pick<Bundle, 'contributors' | 'largestDetail'> {
  const output = Object.values(metafile.outputs)[0];
  if (!output) return { contributors: [], largestDetail: [] };
  const inputs = Object.entries(output.inputs).map(([path, input]) => ({
    ...ownerOf(path),
    bytes: input.bytesInOutput,
  }));
  const contributors = tally(inputs.map((input) => [input.owner, input.bytes]));
  const largest = contributors[0]?.name;
  const largestDetail = tally(
    inputs
      .filter((input) => input.owner === largest)
      .map((input) => {
        const folders = input.rest.split('/').slice(0, -1);
        return [folders.slice(0, 2).join('/') || '(package root)', input.bytes];
      }),
  );
  return { contributors, largestDetail };
}

/** A worker's aliases (`worker:<name>`), as its definition gives them to CDK. */
const aliasesOf = (name: string) =>
  workerDefinitions.find((worker) => `worker:${worker.name}` === name)?.aliases;

async function bundle(name: string, entry: string, outDir: string): Promise<Bundle> {
  const file = join(outDir, `${name.replace(':', '-')}.mjs`);
  const result = await build({
    ...cdkBuildOptions,
    absWorkingDir: projectRoot,
    entryPoints: [entry],
    outfile: file,
    metafile: true,
    // As CDK builds that function (infra/function-tuning.ts, a worker's aliases).
    ...(bundleDefines[name] && { define: { ...bundleDefines[name] } }),
    ...(aliasesOf(name) && { alias: { ...aliasesOf(name) } }),
  });
  const output = Object.values(result.metafile.outputs)[0];
  return { name, file, bytes: output?.bytes ?? 0, ...analyse(result.metafile) };
}

/** The background workers, each a Lambda function of its own (`functions/workers/<name>.ts`). */
export const workerBundles = (): { name: string; entry: string }[] =>
  workerDefinitions.map((worker) => ({
    name: `worker:${worker.name}`,
    entry: `functions/workers/${worker.name}.ts`,
  }));

/**
 * Every group's entry with CDK's options, then every worker's (they are functions too, with the
 * same targets), plus the baseline, into `outDir`.
 */
export async function buildBundles(
  groups: readonly { name: string; entry: string }[],
  outDir: string,
  workers: readonly { name: string; entry: string }[] = workerBundles(),
): Promise<{ groups: Bundle[]; baseline: Bundle }> {
  const baselineEntry = join(outDir, 'baseline-entry.ts');
  await writeFile(baselineEntry, BASELINE_SOURCE);
  const [baseline, ...built] = await Promise.all([
    bundle(BASELINE, baselineEntry, outDir),
    ...[...groups, ...workers].map((group) => bundle(group.name, join(projectRoot, group.entry), outDir)),
  ]);
  if (!baseline) throw new Error('baseline bundle missing');
  return { groups: built, baseline };
}
