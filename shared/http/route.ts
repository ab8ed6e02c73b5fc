import type { Readable } from 'node:stream';
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

/**
 * An answer written as it is produced (exports): only routes of a group built with
 * `createStreamingHandler` may return one. Its errors after the first byte break the response.
 */
export interface StreamedReply {
  status: number;
  body: Readable;
  headers: Record<string, string>;
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
  /**
   * Where this API is served as the caller reached it: scheme, host and any stage or base path
   * (`https://abc.execute-api.eu-west-1.amazonaws.com/v1`, `http://localhost:3000`). Undefined when
   * the request names no host.
   */
  baseUrl?: string | undefined;
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
  A extends $ZodType = $ZodType,
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
    /**
     * Defaults to JSON; the reference page answers HTML, its assets scripts or stylesheets, exports
     * CSV (or JSON, by their `format`).
     */
    contentType?:
      | 'application/json'
      | 'text/html'
      | 'text/csv'
      | readonly ('text/javascript' | 'text/css' | 'text/csv' | 'application/json')[];
    /** Headers the success answer carries beyond the shared ones (an attachment's file name). */
    headers?: readonly 'Content-Disposition'[];
  };
  /**
   * A second success answer (a PDF transcript is 202 with its job, where CSV is 200 with the file),
   * documented beside the first; its example is checked like the first one's.
   */
  alternative?: { status: number; schema: A; description: string; example: input<A> };
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
  /**
   * A cookie the route sets or clears (`Set-Cookie` on its answer) and reads (a cookie parameter):
   * declared in the OpenAPI document. No route takes a credential from a cookie.
   */
  cookie?: { name: string; description: string; sets?: boolean; reads?: boolean; pattern: string };
  handle: (
    input: RouteInput<K, output<P>, output<Q>, output<B>>,
  ) => Promise<Reply<input<R>> | Reply<input<A>> | StreamedReply>;
}

/** Erased form stored in tables: the handler is called with input already validated by the route's own schemas. */
export type AnyRoute = RouteDefinition<CallerKind, $ZodType, $ZodType, $ZodType, $ZodType, $ZodType>;

/**
 * An erased route that keeps its OpenAPI tag's literal: its group (functions/routes.ts) must
 * describe that tag, or the table does not compile.
 */
export type TaggedRoute<T extends string = string> = AnyRoute & { readonly tag: T };

export function route<
  K extends CallerKind,
  P extends $ZodType = $ZodType<Record<string, never>>,
  Q extends $ZodType = $ZodType<Record<string, never>>,
  B extends $ZodType = $ZodType<undefined>,
  R extends $ZodType = $ZodType,
  A extends $ZodType = $ZodType<never>,
  const T extends string = string,
>(definition: RouteDefinition<K, P, Q, B, R, A> & { tag: T }): TaggedRoute<T> {
  return definition as unknown as TaggedRoute<T>;
}

export function reply<Body>(status: number, body: Body, headers?: Record<string, string>): Reply<Body> {
  return headers ? { status, body, headers } : { status, body };
}

export const ok = <Body>(body: Body, headers?: Record<string, string>): Reply<Body> =>
  reply(200, body, headers);
export const created = <Body>(body: Body, headers?: Record<string, string>): Reply<Body> =>
  reply(201, body, headers);
