import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { App, Stack } from 'aws-cdk-lib';
import { afterAll, describe, expect, it } from 'vitest';
import { groupEntry, routeCatalog, routeGroup } from '../../functions/routes';
import { projectRoot, ServiceFunction } from '../../infra/constructs/service-function';
import { lambdaContext, proxyEvent } from '../../infra/local/lambda-event';
import { groupBuildProps } from '../../infra/stacks/service-stack';
import packageJson from '../../package.json' with { type: 'json' };
import { ROUTE_CATALOG_FILE } from '../../shared/http/route-catalog';

// Inside the project: the bundle leaves @aws-sdk/* external, and node resolves them from here.
const cacheDir = join(projectRoot, 'node_modules/.cache');
const outdir = (() => {
  if (!existsSync(cacheDir)) execFileSync('mkdir', ['-p', cacheDir]);
  return mkdtempSync(join(cacheDir, 'platform-bundle-'));
})();
afterAll(() => rmSync(outdir, { recursive: true, force: true }));

/** The platform function built as the stack builds it: its define, its catalog next to the bundle. */
function buildPlatform(): string {
  const app = new App({ outdir });
  const stack = new Stack(app, 'Platform');
  new ServiceFunction(stack, 'Fn', {
    entry: groupEntry('platform'),
    ...groupBuildProps(routeGroup('platform')),
  });
  app.synth();
  const [asset] = readdirSync(outdir).filter((entry) => entry.startsWith('asset.'));
  return join(outdir, asset ?? '');
}

/** Invokes the bundled handler in plain node, as Lambda would, and returns its answer. */
function invoke(
  code: string,
  event: unknown,
): { statusCode: number; headers: Record<string, string>; body: string } {
  const script = `
    const { handler } = await import(${JSON.stringify(join(code, 'index.mjs'))});
    const { event, context } = JSON.parse(process.env.INVOCATION);
    process.stdout.write('@@' + JSON.stringify(await handler(event, context)));`;
  const out = execFileSync(process.execPath, ['--input-type=module', '-e', script], {
    cwd: code,
    encoding: 'utf8',
    env: {
      PATH: process.env.PATH,
      AWS_REGION: 'us-east-1',
      TABLE_NAME: 'platform-bundle-test',
      PLATFORM_ADMIN_TOKEN_SHA256: '0'.repeat(64),
      SERVICE_VERSION: packageJson.version,
      POWERTOOLS_LOG_LEVEL: 'ERROR',
      POWERTOOLS_METRICS_DISABLED: 'true',
      AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
      INVOCATION: JSON.stringify({ event, context: lambdaContext('platform') }),
    },
  });
  return JSON.parse(out.slice(out.lastIndexOf('@@') + 2));
}

describe('the platform function as deployed', () => {
  const code = buildPlatform();

  it('carries the route catalog, not the route table: no other group is in its bundle', () => {
    const catalog = JSON.parse(readFileSync(join(code, ROUTE_CATALOG_FILE), 'utf8'));
    expect(catalog).toEqual(JSON.parse(JSON.stringify(routeCatalog(packageJson.version))));
    // 643 KB with the route table (the exports' phone-number library alone was 213 KB).
    expect(statSync(join(code, 'index.mjs')).size).toBeLessThan(200 * 1024);
    expect(readFileSync(join(code, 'index.mjs'), 'utf8')).not.toContain('exportConversations');
  });

  it('serves the OpenAPI document of the whole API from the catalog', () => {
    const answer = invoke(code, proxyEvent({ method: 'GET', resource: '/api/openapi.json' }));
    expect(answer.statusCode).toBe(200);
    expect(JSON.parse(answer.body)).toEqual(
      JSON.parse(JSON.stringify(routeCatalog(packageJson.version).openApi)),
    );
  });

  it('answers 405 with the methods of a path of another group, and 404 for an unknown one', () => {
    const wrongMethod = invoke(
      code,
      proxyEvent({
        method: 'DELETE',
        resource: '/api/export/conversations',
        path: '/api/export/conversations',
      }),
    );
    expect(wrongMethod.statusCode).toBe(405);
    expect(wrongMethod.headers.Allow).toBe('GET');
    const unknown = invoke(
      code,
      proxyEvent({ method: 'GET', resource: '/{proxy+}', path: '/api/nothing-here' }),
    );
    expect(unknown.statusCode).toBe(404);
  });
});
