import type { $ZodType } from 'zod/v4/core';
import { toJSONSchema } from 'zod/v4/core';
import type { AnyRoute } from './route';

type JsonSchema = Record<string, unknown>;

const errorEnvelope: JsonSchema = {
  type: 'object',
  required: ['error'],
  properties: {
    error: {
      type: 'object',
      required: ['code', 'message'],
      properties: {
        code: { type: 'string', description: 'Machine code, e.g. VALIDATION_ERROR' },
        message: { type: 'string' },
        fields: {
          type: 'object',
          additionalProperties: { type: 'string' },
          description: 'Every offending field (dotted path) and its message',
        },
        details: {
          type: 'object',
          description: 'Structured details; `field` names the first offending field of a 422',
        },
        correlationId: { type: 'string', description: 'Equals the X-Request-Id response header' },
      },
    },
  },
};

const sharedErrors: Record<number, string> = {
  400: 'Malformed JSON, or a malformed or foreign cursor (BAD_REQUEST)',
  401: 'Credential missing, invalid, revoked or expired, or sent in two headers (UNAUTHORIZED)',
  402: 'The organization lacks the automation_api module (INTEGRATION_MODULE_REQUIRED, details.module and details.feature)',
  403: 'Credential kind, scope or role not allowed (FORBIDDEN)',
  404: 'Not found, or belongs to another organization (NOT_FOUND)',
  409: 'Conflicts with the current state, or Idempotency-Key reused with another request (CONFLICT)',
  412: 'If-Match does not match (PRECONDITION_FAILED, details.currentVersion)',
  413: 'Body over 256 KiB (PAYLOAD_TOO_LARGE)',
  415: 'Body is not application/json (UNSUPPORTED_MEDIA_TYPE)',
  422: 'A value parses but is not allowed, or an unknown field (VALIDATION_ERROR, details.field and fields)',
  429: 'Too many requests for this credential (RATE_LIMITED, Retry-After)',
  503: 'Temporarily unavailable; retry after Retry-After (SERVICE_UNAVAILABLE)',
};

const securityOf: Record<string, string> = {
  apiKey: 'apiKey',
  operator: 'operatorSession',
  visitor: 'visitorToken',
  platform: 'platformAdmin',
  widget: 'widgetKey',
};

function schemaOf(schema: $ZodType, io: 'input' | 'output'): JsonSchema {
  const { $schema: _ignored, ...json } = toJSONSchema(schema, { io, unrepresentable: 'any' }) as JsonSchema;
  return json;
}

function parametersOf(schema: $ZodType | undefined, where: 'path' | 'query') {
  if (!schema) return [];
  const json = schemaOf(schema, 'input');
  const properties = (json.properties ?? {}) as Record<string, JsonSchema>;
  const required = new Set((json.required as string[] | undefined) ?? []);
  return Object.entries(properties).map(([name, property]) => ({
    name,
    in: where,
    required: where === 'path' || required.has(name),
    schema: property,
  }));
}

function operationOf(route: AnyRoute) {
  const callers = route.callers.filter((caller) => caller !== 'public');
  const statuses = new Set<number>([
    ...(route.body ? [400, 413, 415, 422] : []),
    ...(route.query ? [422] : []),
    ...(callers.length ? [401, 403, 429] : []),
    ...(callers.includes('apiKey') ? [402] : []),
    ...(route.method === 'POST' && callers.length ? [409] : []),
    ...(route.errors ?? []),
    503,
  ]);
  const access = [
    callers.length ? `Callers: ${callers.join(', ')}.` : 'No credential needed.',
    route.scope
      ? `Scope: \`${route.scope}\`${route.adminOnly ? ' and an admin session (API keys need only the scope)' : ''}.`
      : '',
  ]
    .filter(Boolean)
    .join(' ');
  return {
    operationId: route.operationId,
    summary: route.summary,
    description: [route.description, access].filter(Boolean).join('\n\n'),
    tags: [route.tag],
    ...(route.scope ? { 'x-scope': route.scope } : {}),
    ...(route.adminOnly ? { 'x-admin-only': true } : {}),
    security: callers.length ? callers.map((caller) => ({ [securityOf[caller] ?? caller]: [] })) : [],
    parameters: [
      ...parametersOf(route.params, 'path'),
      ...parametersOf(route.query, 'query'),
      ...(route.method === 'POST' && callers.length
        ? [
            {
              name: 'Idempotency-Key',
              in: 'header',
              required: false,
              schema: { type: 'string', maxLength: 255 },
              description: 'Replays the first response for 24 h',
            },
          ]
        : []),
    ],
    ...(route.body
      ? {
          requestBody: {
            required: true,
            content: { 'application/json': { schema: schemaOf(route.body, 'input') } },
          },
        }
      : {}),
    responses: {
      [route.response.status]: {
        description: route.response.description,
        content: { 'application/json': { schema: schemaOf(route.response.schema, 'output') } },
      },
      ...Object.fromEntries(
        [...statuses].sort().map((status) => [
          status,
          {
            description: sharedErrors[status] ?? 'Error',
            content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } },
          },
        ]),
      ),
    },
  };
}

/** The OpenAPI 3.1 document, built from the same route objects and schemas that serve requests. */
export function buildOpenApi(routes: readonly AnyRoute[], version: string) {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const route of routes) {
    paths[route.path] ??= {};
    const entry = paths[route.path];
    if (entry) entry[route.method.toLowerCase()] = operationOf(route);
  }
  return {
    openapi: '3.1.0',
    info: {
      title: 'Customer Conversation Service API',
      version,
      description: [
        'Live chat and support: conversations, messages, notes, custom fields, teams, knowledge base, surveys, exports, signed webhooks.',
        'Conventions: ids are UUIDs (v7), timestamps ISO 8601 UTC with milliseconds. Every response carries `X-Request-Id`, and errors carry the same value as `error.correlationId`. Unknown body fields are rejected (422). Cursor pages are `{ data, nextCursor }`; cursors are opaque, signed and bound to the organization and the listing. Responses carry `RateLimit-Limit`, `RateLimit-Remaining` and `RateLimit-Reset`; a 429 carries `Retry-After`.',
        'Routing is decided before authentication: an unknown path is 404, a known path with another method 405. A path id that is not a UUID is 404.',
        'CORS: any origin may call (credentials travel in headers, never cookies); `OPTIONS` on a known path answers the preflight with its methods.',
        'Realtime: operators and visitors connect a WebSocket with `?token=` their session or visitor token and receive `message_edited`, `note_invalidated` (operators only) and `conversation_snoozed` (operators only) notices; the protocol is described in docs/realtime.md.',
        'Warm instances cache a verified credential and its organization for 10 s: a revoked key or a changed organization takes effect at once on the instance that made the change and within 10 s everywhere.',
      ].join('\n\n'),
    },
    servers: [{ url: '/' }],
    paths,
    components: {
      schemas: { Error: errorEnvelope },
      securitySchemes: {
        apiKey: {
          type: 'http',
          scheme: 'bearer',
          description: 'Organization API key `svc_sk_…` (or header `X-API-Key`, never both)',
        },
        operatorSession: { type: 'http', scheme: 'bearer', description: 'Operator session `svc_os_…`' },
        visitorToken: { type: 'http', scheme: 'bearer', description: 'Visitor token `svc_vt_…`' },
        platformAdmin: { type: 'http', scheme: 'bearer', description: 'Platform admin token `svc_pa_…`' },
        widgetKey: {
          type: 'apiKey',
          in: 'header',
          name: 'X-Widget-Key',
          description: 'Public widget key `svc_wpk_…`',
        },
      },
    },
  };
}
