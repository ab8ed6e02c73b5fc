import { afterEach, describe, expect, it, vi } from 'vitest';
import { METRICS_SERVICE } from '../../shared/metrics-contract';
import { apiGatewayEvent, lambdaContext } from './helpers/apigw-event';

afterEach(() => {
  vi.restoreAllMocks();
  vi.unstubAllEnvs();
});

/**
 * The stack and its logger loaded afresh at WARN (the logger reads its level once, at load; a full
 * test run inherits ERROR from the integration setup), with a route that fails as given.
 */
async function load() {
  vi.stubEnv('POWERTOOLS_LOG_LEVEL', 'WARN');
  vi.stubEnv('POWERTOOLS_DEV', '');
  vi.resetModules();
  const [{ UpstreamError }, { route }, { createHandler }, { logger }, z] = await Promise.all([
    import('../../shared/errors'),
    import('../../shared/http/route'),
    import('../../shared/http/stack'),
    import('../../shared/logger'),
    import('../../shared/schemas/zod'),
  ]);
  const handlerFailingWith = (error: Error) =>
    createHandler([
      route({
        method: 'GET',
        path: '/api/upstream',
        operationId: 'upstream',
        summary: 'Calls another service',
        tag: 'Test',
        callers: ['public'],
        response: { status: 200, schema: z.unknown(), description: 'Called' },
        handle: async () => {
          throw error;
        },
      }),
    ]);
  return { UpstreamError, logger, handlerFailingWith };
}

describe('the log line of a failed request', () => {
  it('is a warning naming the service when another service failed (502), with no stack', async () => {
    const { UpstreamError, logger, handlerFailingWith } = await load();
    const failed = vi.spyOn(logger, 'error').mockImplementation(() => undefined);
    vi.spyOn(logger, 'info').mockImplementation(() => undefined);
    const written: string[] = [];
    for (const stream of [process.stdout, process.stderr])
      vi.spyOn(stream, 'write').mockImplementation((chunk: string | Uint8Array) => {
        written.push(String(chunk));
        return true;
      });
    const handler = handlerFailingWith(
      new UpstreamError('Discord answered 500', { service: 'discord', status: 500 }),
    );
    const response = await handler(
      apiGatewayEvent({ method: 'GET', resource: '/api/upstream' }),
      lambdaContext(),
    );
    expect(response.statusCode).toBe(502);
    expect(JSON.parse(response.body).error).toMatchObject({
      code: 'UPSTREAM_ERROR',
      details: { service: 'discord' },
    });
    // The line as printed: a service name at the root would be dropped as the logger's own key.
    const lines = written
      .join('')
      .split('\n')
      .filter((line) => line.includes('"level":"WARN"'))
      .map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({
      message: 'upstream failed',
      service: METRICS_SERVICE,
      reason: 'Discord answered 500',
      upstream: { service: 'discord', status: 500 },
    });
    expect(lines[0]).not.toHaveProperty('stack');
    expect(failed).not.toHaveBeenCalled();
  });

  it('stays an error with the error itself for what nobody expected (500)', async () => {
    const { logger, handlerFailingWith } = await load();
    const failed = vi.spyOn(logger, 'error').mockImplementation(() => undefined);
    vi.spyOn(logger, 'info').mockImplementation(() => undefined);
    const handler = handlerFailingWith(new Error('a bug'));
    const response = await handler(
      apiGatewayEvent({ method: 'GET', resource: '/api/upstream' }),
      lambdaContext(),
    );
    expect(response.statusCode).toBe(500);
    expect(failed).toHaveBeenCalledWith(
      'request failed',
      expect.objectContaining({ error: expect.any(Error) }),
    );
  });
});
