import { describe, expect, it } from 'vitest';
import { allRoutes, apiTags } from '../../functions/routes';
import { ConflictError, ForbiddenError, RateLimitedError, ValidationError } from '../../shared/errors';
import { buildOpenApi } from '../../shared/http/openapi';
import { conformingFetch, UndeclaredResponseError } from '../helpers/response-conformance';

/**
 * The check every integration test's answers go through (test/integration/response-conformance.setup.ts)
 * can fail: answers the document does not declare are refused, with what is wrong, and answers it
 * declares pass with their body still unread. The document is the one the service serves.
 */

const document = buildOpenApi(allRoutes(), 'test', apiTags()) as Record<string, unknown>;
const SERVICE = 'http://127.0.0.1:3000';
const ID = '0190a3c4-7e51-7000-8000-0000000000aa';

const baseHeaders = {
  'X-Request-Id': 'req-00000001',
  'Access-Control-Allow-Origin': '*',
};

/** `fetch` answering every request with `answer`, wrapped in the check. */
function fetchAnswering(answer: () => Response): typeof fetch {
  return conformingFetch(async () => answer(), {
    isService: (url) => url.origin === SERVICE,
    document: async () => document,
  });
}

const json = (status: number, body: unknown, headers: Record<string, string> = {}) =>
  new Response(JSON.stringify(body), {
    status,
    headers: { 'Content-Type': 'application/json; charset=utf-8', ...baseHeaders, ...headers },
  });

const envelope = (code: string, details?: Record<string, unknown>) => ({
  error: { code, message: 'Refused', ...(details ? { details } : {}), correlationId: 'req-00000001' },
});

describe('the response conformance check', () => {
  it('passes a declared error with declared details, leaving the body to the caller', async () => {
    const request = fetchAnswering(() =>
      json(403, envelope('FORBIDDEN', { requiredScope: 'conversations:write' })),
    );
    const response = await request(`${SERVICE}/api/conversations`, { method: 'POST' });
    expect(response.status).toBe(403);
    expect(await response.json()).toMatchObject({
      error: { details: { requiredScope: 'conversations:write' } },
    });
  });

  it('refuses a details field the document does not declare, naming method, path, status and the error', async () => {
    const request = fetchAnswering(() =>
      json(403, envelope('FORBIDDEN', { requiredScope: 'conversations:write', hint: 'ask an admin' })),
    );
    const refused = request(`${SERVICE}/api/conversations/${ID}?x=1`, { method: 'GET' });
    await expect(refused).rejects.toThrow(UndeclaredResponseError);
    await expect(refused).rejects.toThrow(
      /GET \/api\/conversations\/\{id\} → 403: .*\/error\/details must NOT have additional properties .*"additionalProperty":"hint"/,
    );
  });

  it('refuses a status the operation does not declare', async () => {
    const request = fetchAnswering(() => json(409, envelope('CONFLICT', { reason: 'name_taken' })));
    await expect(request(`${SERVICE}/api/conversations/${ID}`)).rejects.toThrow(
      /GET \/api\/conversations\/\{id\} → 409: status 409 is not declared/,
    );
  });

  it('refuses a body that is not the schema of its status, and a required header that is missing', async () => {
    const wrongCode = fetchAnswering(() => json(404, envelope('CONFLICT')));
    await expect(wrongCode(`${SERVICE}/api/conversations/${ID}`)).rejects.toThrow(
      /\/error\/code must be equal to one of/,
    );
    const noRequestId = fetchAnswering(
      () =>
        new Response(JSON.stringify(envelope('NOT_FOUND')), {
          status: 404,
          headers: { 'Content-Type': 'application/json', 'Access-Control-Allow-Origin': '*' },
        }),
    );
    await expect(noRequestId(`${SERVICE}/api/conversations/${ID}`)).rejects.toThrow(
      /the required header X-Request-Id is missing/,
    );
  });

  it('checks a streamed or non-JSON answer for its status and content type, not its body', async () => {
    const headers = {
      ...baseHeaders,
      'RateLimit-Limit': '1200',
      'RateLimit-Remaining': '1199',
      'RateLimit-Reset': '60',
      'Content-Disposition': 'attachment; filename="conversations.csv"',
    };
    const path = `${SERVICE}/api/export/conversations`;
    const csv = fetchAnswering(
      () => new Response('id\n1\n', { status: 200, headers: { ...headers, 'Content-Type': 'text/csv' } }),
    );
    expect(await (await csv(path)).text()).toBe('id\n1\n');
    const pdf = fetchAnswering(
      () => new Response('%PDF', { status: 200, headers: { ...headers, 'Content-Type': 'application/pdf' } }),
    );
    await expect(pdf(path)).rejects.toThrow(/content type application\/pdf is not declared/);
  });

  it('holds answers to requests no operation matches to the routing rule: 404, or 405 on a known path', async () => {
    const notFound = fetchAnswering(() => json(404, envelope('NOT_FOUND')));
    await expect(notFound(`${SERVICE}/api/nothing-here`)).resolves.toHaveProperty('status', 404);
    const answered = fetchAnswering(() => json(200, { ok: true }));
    await expect(answered(`${SERVICE}/api/nothing-here`)).rejects.toThrow(/an unknown path should be 404/);
    await expect(answered(`${SERVICE}/api/health`, { method: 'DELETE' })).rejects.toThrow(
      /a known path with another method should be 405/,
    );
  });

  it('leaves answers from elsewhere alone', async () => {
    const request = fetchAnswering(() => json(418, { anything: true }));
    await expect(request('http://127.0.0.1:9/api/conversations')).resolves.toHaveProperty('status', 418);
  });
});

describe('error details', () => {
  it('can be thrown only as the document declares them', () => {
    // Each line compiles only because its details are declared (shared/schemas/error-details.ts).
    expect(new ForbiddenError('x', { requiredScope: 'conversations:read' }).details).toBeDefined();
    expect(new ConflictError('x', { surveyId: ID }).details).toBeDefined();
    expect(ValidationError.field('url', 'x', { reason: 'https_required' }).details).toBeDefined();
    expect(new RateLimitedError(5, { details: { reason: 'transcript_email_limit' } }).details).toBeDefined();
    // @ts-expect-error an undeclared details field does not compile
    expect(new ForbiddenError('x', { hint: 'ask an admin' }).details).toBeDefined();
    // @ts-expect-error nor does an undeclared reason
    expect(new ConflictError('x', { reason: 'already_there' }).details).toBeDefined();
  });
});
