import { inject } from 'vitest';
import { isServiceUrl } from '../helpers/api';
import { conformingFetch } from '../helpers/response-conformance';

/**
 * Every answer an integration test receives from the service is held to the OpenAPI document the
 * service serves (GET /api/openapi.json), as a validating proxy would hold it: `fetch` itself is
 * wrapped, so `call` (test/helpers/api.ts), raw `fetch` calls and clients built on `fetch` in the
 * test's process (openapi-fetch) all go through the check, and a drift fails the test that
 * received the answer. Child processes get the same check by importing
 * test/helpers/response-conformance.register.ts.
 */
const base = globalThis.fetch;
globalThis.fetch = conformingFetch(base, {
  isService: isServiceUrl,
  document: async () => {
    const response = await base(`${inject('baseUrl')}/api/openapi.json`);
    if (response.status !== 200) throw new Error(`GET /api/openapi.json: ${response.status}`);
    return (await response.json()) as Record<string, unknown>;
  },
});
