/**
 * What some functions get beyond the construct's defaults: node flags on top of those Lambda's
 * runtime passes (through an exec wrapper, infra/bundles/exec-wrapper/node-flags.sh) and bundler
 * defines. Read by the CDK stack and by the bench, which builds and starts functions the same way:
 * no aws-cdk-lib here.
 */
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ROUTE_CATALOG_DEFINE } from '../shared/http/route-catalog';

/** The wrapper script in the project, and where it lands in the function's code. */
export const execWrapper = {
  source: join(fileURLToPath(new URL('../', import.meta.url)), 'infra/bundles/exec-wrapper/node-flags.sh'),
  target: 'node-flags.sh',
  /** Lambda extracts the code here. */
  lambdaPath: '/var/task/node-flags.sh',
  flagsVar: 'SERVICE_NODE_FLAGS',
} as const;

/**
 * Per function (route group or worker). Exports: Lambda sizes the young generation from memory
 * (semi-spaces of 25 MB at 512 MB), and a streamed export, which allocates a page's short-lived
 * strings and drops them, lets V8 grow it to the limit: 163 MB peak RSS for 100,000 messages. With
 * 1 MB semi-spaces it scavenges more often, and the same export peaks under 100 MB (`npm run
 * bench`, phase 7).
 */
export const nodeFlags: Readonly<Record<string, readonly string[]>> = {
  exports: ['--max-semi-space-size=1'],
};

/**
 * esbuild `define`s per function. Platform: it reads the route catalog its build writes next to
 * the bundle instead of importing the route table (shared/http/route-catalog.ts).
 */
export const bundleDefines: Readonly<Record<string, Readonly<Record<string, string>>>> = {
  platform: ROUTE_CATALOG_DEFINE,
};
