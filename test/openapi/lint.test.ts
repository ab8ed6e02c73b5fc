import { beforeAll, describe, expect, it } from 'vitest';
import { allRoutes, apiTags } from '../../functions/routes';
import { buildOpenApi } from '../../shared/http/openapi';
import { type LintResults, lintDocument, redoclyReport, spectralReport } from './linters';

/**
 * The OpenAPI document is for stock tools, used as they come: Redocly's `recommended` rules
 * (redocly.yaml) and Spectral's `spectral:oas` with the OWASP API Security ruleset (.spectral.yaml,
 * whose few exemptions each carry their reason) find no error and no warning in it.
 */
describe('the OpenAPI document under stock linters', () => {
  let results: LintResults;

  beforeAll(async () => {
    results = await lintDocument(buildOpenApi(allRoutes(), 'test', apiTags()));
  }, 90_000);

  it('passes Redocly lint (recommended) with no error and no warning', () => {
    const { blocking } = results.redocly;
    expect(blocking.length, redoclyReport(blocking)).toBe(0);
  });

  it('passes Spectral lint (spectral:oas + OWASP) with no error and no warning', () => {
    const { blocking } = results.spectral;
    expect(blocking.length, spectralReport(blocking)).toBe(0);
  });
});
