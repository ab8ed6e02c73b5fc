import { join } from 'node:path';
import type { RouteGroup } from '../../../functions/routes';
import type { WorkerDefinition } from '../../../functions/workers';
import packageJson from '../../../package.json' with { type: 'json' };
import { ROUTE_CATALOG_FILE } from '../../../shared/http/route-catalog';
import { projectRoot, type ServiceFunctionProps } from '../../constructs/service-function';
import { writeRouteCatalog } from '../../route-catalog-file';

/**
 * How a route group's function is built beyond the construct's defaults, from its definition: files
 * next to its bundle (and the route catalog, written at synth from the route table), node flags
 * (exec wrapper), bundler defines. Exported for the test that builds one as deployed.
 */
export function groupBuildProps(
  group: RouteGroup,
): Pick<ServiceFunctionProps, 'bundledFiles' | 'nodeFlags' | 'bundling'> {
  const bundledFiles = [
    ...(group.bundledFiles ?? []).map(({ from, to }) => ({ from: join(projectRoot, from), to })),
    ...(group.bundlesRouteCatalog
      ? [{ from: writeRouteCatalog(packageJson.version), to: ROUTE_CATALOG_FILE }]
      : []),
  ];
  return {
    ...(bundledFiles.length > 0 && { bundledFiles }),
    ...(group.nodeFlags && { nodeFlags: group.nodeFlags }),
    ...((group.define || group.searchIndex) && {
      bundling: {
        ...(group.define && { define: { ...group.define } }),
        ...(group.searchIndex && { externalModules: [...SEARCH_EXTERNAL_MODULES] }),
      },
    }),
  };
}

/**
 * The search index's clients bundle the RDS IAM token signer (and what it needs) rather than count
 * on the runtime's copy of the SDK, which holds the clients; the clients stay external as everywhere.
 */
const SEARCH_EXTERNAL_MODULES = ['@aws-sdk/client-*', '@aws-sdk/lib-*', '@aws-sdk/util-dynamodb'] as const;

/** How a worker's function is built beyond the construct's defaults: files next to its bundle, aliases. */
export function workerBuildProps(
  worker: WorkerDefinition,
): Pick<ServiceFunctionProps, 'bundledFiles' | 'aliases' | 'bundling'> {
  return {
    ...(worker.searchIndex && { bundling: { externalModules: [...SEARCH_EXTERNAL_MODULES] } }),
    ...(worker.bundledFiles && {
      bundledFiles: worker.bundledFiles.map(({ from, to }) => ({ from: join(projectRoot, from), to })),
    }),
    ...(worker.aliases && { aliases: worker.aliases }),
  };
}
