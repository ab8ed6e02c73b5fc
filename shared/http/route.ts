import type { $ZodType, input, output } from 'zod/v4/core';
import type { CallerKind, CallerOf } from '../auth/caller';
import type { Scope } from '../auth/scopes';
import type { Organization } from '../schemas/organization';

export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

export interface Reply<Body> {
  status: number;
  body: Body;
  headers?: Record<string, string>;
}

/** Organization callers always come with their organization; platform and public ones never do. */
type OrganizationOf<K extends CallerKind> = [Exclude<K, 'platform' | 'public'>] extends [never]
  ? undefined
  : Organization;

export interface RouteInput<K extends CallerKind, P, Q, B> {
  caller: CallerOf<K>;
  organization: OrganizationOf<K>;
  params: P;
  query: Q;
  body: B;
  /** Lower-cased request headers. */
  headers: Readonly<Record<string, string>>;
  requestId: string;
}

/**
 * One endpoint, as a single fact: the group's router, the API Gateway resources in CDK, the local
 * gateway, the OpenAPI document and the authorization-matrix tests all read this object.
 */
export interface RouteDefinition<
  K extends CallerKind = CallerKind,
  P extends $ZodType = $ZodType,
  Q extends $ZodType = $ZodType,
  B extends $ZodType = $ZodType,
  R extends $ZodType = $ZodType,
> {
  method: HttpMethod;
  path: `/api${string}`;
  operationId: string;
  summary: string;
  description?: string;
  tag: string;
  /** Needed by API keys with a restricted scope list; operator sessions get every scope of their role. */
  scope?: Scope;
  /** Operator sessions must be admins; API keys need only the scope. */
  adminOnly?: boolean;
  callers: readonly K[];
  params?: P;
  query?: Q;
  body?: B;
  response: {
    status: number;
    schema: R;
    description: string;
    /** Defaults to JSON; the reference page answers HTML, its assets scripts or stylesheets, exports CSV. */
    contentType?: 'application/json' | 'text/html' | 'text/csv' | readonly ('text/javascript' | 'text/css')[];
  };
  /**
   * The resource carries a `version`: answers send it as `ETag` (`read`), and a `write` also honours
   * `If-Match` (412 with `details.currentVersion` when it does not match).
   */
  versioned?: 'read' | 'write';
  /**
   * What the OpenAPI document shows, checked against the route's own schemas by a test: a request
   * body (for routes with one) and the success answer.
   */
  examples?: { request?: input<B>; response: input<R> };
  /** Other documented outcomes beyond the shared ones (401/403/422/429…), for the OpenAPI document. */
  errors?: readonly number[];
  handle: (input: RouteInput<K, output<P>, output<Q>, output<B>>) => Promise<Reply<input<R>>>;
}

/** Erased form stored in tables: the handler is called with input already validated by the route's own schemas. */
export type AnyRoute = RouteDefinition<CallerKind, $ZodType, $ZodType, $ZodType, $ZodType>;

export function route<
  K extends CallerKind,
  P extends $ZodType = $ZodType<Record<string, never>>,
  Q extends $ZodType = $ZodType<Record<string, never>>,
  B extends $ZodType = $ZodType<undefined>,
  R extends $ZodType = $ZodType,
>(definition: RouteDefinition<K, P, Q, B, R>): AnyRoute {
  return definition as unknown as AnyRoute;
}

export function reply<Body>(status: number, body: Body, headers?: Record<string, string>): Reply<Body> {
  return headers ? { status, body, headers } : { status, body };
}

export const ok = <Body>(body: Body, headers?: Record<string, string>): Reply<Body> =>
  reply(200, body, headers);
export const created = <Body>(body: Body, headers?: Record<string, string>): Reply<Body> =>
  reply(201, body, headers);
