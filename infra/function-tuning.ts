/**
 * How functions get node flags on top of those Lambda's runtime passes (an exec wrapper,
 * infra/bundles/exec-wrapper/node-flags.sh), and the flags and bundler defines of the route groups
 * that have them. Read by the CDK stack and by the bench, which builds and starts functions the
 * same way: no aws-cdk-lib here.
 */
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { routeTable } from '../functions/routes';

/** The wrapper script in the project, and where it lands in the function's code. */
export const execWrapper = {
  source: join(fileURLToPath(new URL('../', import.meta.url)), 'infra/bundles/exec-wrapper/node-flags.sh'),
  target: 'node-flags.sh',
  /** Lambda extracts the code here. */
  lambdaPath: '/var/task/node-flags.sh',
  flagsVar: 'SERVICE_NODE_FLAGS',
} as const;

/**
 * Node flags per route group, as its definition gives them (functions/routes.ts): read by the bench,
 * which builds and starts functions the way CDK does.
 */
export const nodeFlags: Readonly<Record<string, readonly string[]>> = Object.fromEntries(
  routeTable().flatMap((group) => (group.nodeFlags ? [[group.name, group.nodeFlags]] : [])),
);

/** esbuild `define`s per route group, as its definition gives them (the bench, the local stack). */
export const bundleDefines: Readonly<Record<string, Readonly<Record<string, string>>>> = Object.fromEntries(
  routeTable().flatMap((group) => (group.define ? [[group.name, group.define]] : [])),
);
