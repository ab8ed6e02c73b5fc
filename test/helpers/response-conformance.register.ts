import { conformingFetch } from './response-conformance';

/**
 * The integration tests' response check for a child process (`tsx --import` this file): programs
 * an integration test runs against the stack, such as the programs of `examples/`, get their answers from `CONFORMANCE_BASE_URL` held to the
 * document it serves, and fail (a rejected `fetch`) on an answer it does not declare.
 */
const baseUrl = process.env.CONFORMANCE_BASE_URL;
if (!baseUrl) throw new Error('CONFORMANCE_BASE_URL is not set');
const origin = new URL(baseUrl).origin;
const base = globalThis.fetch;
globalThis.fetch = conformingFetch(base, {
  isService: (url) => url.origin === origin,
  document: async () => {
    const response = await base(`${baseUrl}/api/openapi.json`);
    if (response.status !== 200) throw new Error(`GET /api/openapi.json: ${response.status}`);
    return (await response.json()) as Record<string, unknown>;
  },
});
