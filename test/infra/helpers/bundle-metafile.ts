import { build, type Metafile } from 'esbuild';
import { workerDefinitions } from '../../../functions/workers';
import { bundleDefines } from '../../../infra/function-tuning';
import { cdkBuildOptions, projectRoot } from '../../bench/options';

/**
 * The module graph of one function's bundle, built as CDK builds it (its defines, and a worker's
 * aliases), unminified and in memory: what the bundle-content tests inspect.
 */
export async function bundleMetafile(name: string, entry: string): Promise<Metafile> {
  const worker = workerDefinitions.find((definition) => definition.name === name);
  const result = await build({
    ...cdkBuildOptions,
    absWorkingDir: projectRoot,
    entryPoints: [entry],
    outfile: 'index.mjs',
    write: false,
    metafile: true,
    minify: false,
    ...(worker?.aliases && { alias: { ...worker.aliases } }),
    ...(bundleDefines[name] && { define: { ...bundleDefines[name] } }),
  });
  return result.metafile;
}
