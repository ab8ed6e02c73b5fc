import { afterEach, describe, expect, it, vi } from 'vitest';
import { UpstreamError } from '../../shared/errors';
import { route } from '../../shared/http/route';
import { createHandler } from '../../shared/http/stack';
import { log } from '../../shared/logger';
import * as z from '../../shared/schemas/zod';
import { apiGatewayEvent, lambdaContext } from './helpers/apigw-event';

afterEach(() => vi.restoreAllMocks());

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

describe('the log line of a failed request', () => {
  it('is a warning naming the service when another service failed (502), with no stack', async () => {
    const warned = vi.spyOn(log, 'warn').mockImplementation(() => undefined);
    const failed = vi.spyOn(log, 'error').mockImplementation(() => undefined);
    vi.spyOn(log, 'info').mockImplementation(() => undefined);
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
    expect(warned).toHaveBeenCalledWith(
      'upstream failed',
      expect.objectContaining({ reason: 'Discord answered 500', service: 'discord', status: 500 }),
    );
    expect(failed).not.toHaveBeenCalled();
  });

  it('stays an error with the error itself for what nobody expected (500)', async () => {
    const failed = vi.spyOn(log, 'error').mockImplementation(() => undefined);
    vi.spyOn(log, 'info').mockImplementation(() => undefined);
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
