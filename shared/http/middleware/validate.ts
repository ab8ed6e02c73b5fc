import { safeParse } from 'zod/v4/core';
import { NotFoundError, ValidationError } from '../../errors';
import type { HttpMiddleware } from '../context';
import { parseOrThrow } from '../validation';

/**
 * Strict validation of path, query and body against the route's own schemas. A path parameter that
 * does not parse (not a UUID) names nothing that exists: 404, as the contract says. A body sent to
 * a route that takes none is refused rather than ignored.
 */
export const validate = (): HttpMiddleware => ({
  before: (request) => {
    const { state } = request.context;
    const route = state.route;
    if (!route) return;
    const rawParams = request.event.pathParameters ?? {};
    let params: unknown = rawParams;
    if (route.params) {
      const parsed = safeParse(route.params, rawParams);
      if (!parsed.success) throw new NotFoundError('Resource not found');
      params = parsed.data;
    }
    const rawQuery = request.event.queryStringParameters ?? {};
    const query = route.query ? parseOrThrow(route.query, rawQuery, 'query') : rawQuery;
    let body: unknown;
    if (route.body) {
      body = parseOrThrow(route.body, bodyOf(route.method, state.body), 'body');
    } else if (state.body !== undefined && !isEmptyObject(state.body)) {
      throw ValidationError.field('body', 'This endpoint takes no request body');
    }
    state.input = { params, query, body };
  },
});

/**
 * The JSON document a route with a body validates. A body must be an object: `null`, arrays and
 * scalars are 422 like any other wrong type. No body at all is an empty object for POST and DELETE
 * (their schema says whether any field is required) and a mistake for PATCH and PUT, which exist
 * only to carry one.
 */
function bodyOf(method: string, body: unknown): unknown {
  if (body === null || (body !== undefined && (typeof body !== 'object' || Array.isArray(body)))) {
    throw ValidationError.field('body', 'The body must be a JSON object');
  }
  if (body !== undefined) return body;
  if (method === 'PATCH' || method === 'PUT') {
    throw ValidationError.field('body', 'This endpoint needs a JSON object body');
  }
  return {};
}

function isEmptyObject(value: unknown): boolean {
  return (
    typeof value === 'object' && value !== null && !Array.isArray(value) && Object.keys(value).length === 0
  );
}
