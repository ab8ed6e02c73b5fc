import { build, type Metafile } from 'esbuild';
import { cdkBuildOptions, projectRoot } from '../../../bench/options';
import { workerDefinitions } from '../../../functions/workers';
import { bundleDefines } from '../../../infra/function-tuning';

export interface FunctionBundle {
  /** The module graph. */
  metafile: Metafile;
  /** The code, tree-shaken as deployed but not minified: names and `// <module>` headers kept. */
  code: string;
}

/**
 * One function's bundle, built as CDK builds it (its defines, and a worker's aliases), unminified
 * and in memory: what the bundle-content tests inspect.
 */
export async function bundleOf(name: string, entry: string): Promise<FunctionBundle> {
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
  return { metafile: result.metafile, code: result.outputFiles[0]?.text ?? '' };
}

/** The module graph of one function's bundle (see `bundleOf`). */
export async function bundleMetafile(name: string, entry: string): Promise<Metafile> {
  return (await bundleOf(name, entry)).metafile;
}
