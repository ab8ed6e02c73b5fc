import * as z from '../schemas/zod';
import { type AnyRoute, reply, route } from './route';

/**
 * Browsers call the API from customers' sites (the chat widget with its widget key and visitor
 * token). Credentials travel in headers, never cookies, so any origin may call: a page cannot act
 * for a user without holding the token itself.
 */
export const corsHeaders = {
  'Access-Control-Allow-Origin': '*',
  'Access-Control-Expose-Headers':
    'X-Request-Id, ETag, Retry-After, RateLimit-Limit, RateLimit-Remaining, RateLimit-Reset, Idempotent-Replayed',
} as const;

const ALLOWED_HEADERS =
  'Authorization, Content-Type, X-API-Key, X-Widget-Key, Idempotency-Key, If-Match, X-Request-Id';

const preflights = new Map<string, AnyRoute>();

/**
 * The answer to an `OPTIONS` preflight on a known path: public, no body, the path's methods. It runs
 * through the same stack as any route, so it gets a request id and the security headers too.
 */
export function preflightRoute(path: string, methods: readonly string[]): AnyRoute {
  const allowed = [...methods, 'OPTIONS'].join(', ');
  const key = `${path} ${allowed}`;
  let preflight = preflights.get(key);
  if (!preflight) {
    preflight = route({
      method: 'GET',
      path: path as `/api${string}`,
      operationId: 'preflight',
      summary: 'CORS preflight',
      tag: 'Service',
      callers: ['public'],
      response: { status: 204, schema: z.undefined(), description: 'Allowed methods and headers' },
      handle: async () =>
        reply(204, undefined, {
          'Access-Control-Allow-Methods': allowed,
          'Access-Control-Allow-Headers': ALLOWED_HEADERS,
          'Access-Control-Max-Age': '600',
        }),
    });
    preflights.set(key, preflight);
  }
  return preflight;
}
