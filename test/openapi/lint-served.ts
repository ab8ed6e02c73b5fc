import { lintDocument, redoclyReport, spectralReport } from './linters';

/**
 * `npm run openapi:lint` lints the OpenAPI document a running service serves (http://localhost:3000
 * by default, as `npm start` runs it; or `npm run openapi:lint -- <base URL>`) with Redocly
 * (redocly.yaml) and Spectral (.spectral.yaml), exactly as test/openapi/lint.test.ts does.
 * `npm run openapi:lint -- --built` lints the document built from this checkout instead: no server.
 * Exits 1 when either linter reports an error or a warning.
 */

async function loadDocument(argument: string | undefined): Promise<{ source: string; document: unknown }> {
  if (argument === '--built') {
    const [{ allRoutes, apiTags }, { buildOpenApi }] = await Promise.all([
      import('../../functions/routes'),
      import('../../shared/http/openapi'),
    ]);
    return {
      source: 'buildOpenApi(allRoutes()) of this checkout',
      document: buildOpenApi(allRoutes(), 'local', apiTags()),
    };
  }
  const url = `${(argument ?? process.env.API ?? 'http://localhost:3000').replace(/\/+$/, '')}/api/openapi.json`;
  const response = await fetch(url).catch((error: unknown) => {
    throw new Error(`cannot fetch ${url} (is \`npm start\` running? or use --built): ${String(error)}`);
  });
  if (!response.ok) throw new Error(`GET ${url}: ${response.status}`);
  return { source: url, document: await response.json() };
}

const { source, document } = await loadDocument(process.argv[2]);
const results = await lintDocument(document);
console.log(`Linted ${source} in ${(results.ms / 1000).toFixed(1)} s`);
console.log(`\n${redoclyReport(results.redocly.blocking)}  (${(results.redocly.ms / 1000).toFixed(1)} s)`);
console.log(`\n${spectralReport(results.spectral.blocking)}  (${(results.spectral.ms / 1000).toFixed(1)} s)`);
const blocking = results.redocly.blocking.length + results.spectral.blocking.length;
console.log(blocking === 0 ? '\nNo errors, no warnings.' : `\n${blocking} error(s) and warning(s).`);
process.exitCode = blocking === 0 ? 0 : 1;
