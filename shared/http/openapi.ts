import type { $ZodType } from 'zod/v4/core';
import { toJSONSchema } from 'zod/v4/core';
import { type ErrorCode, errorCodes } from '../errors';
import { errorDetailsSchemas } from '../schemas/error-details';
import { eventDataSchemas } from '../schemas/event-data';
import { domainEvent } from '../schemas/event-feed';
import { type DomainEventType, domainEventTypes } from '../schemas/events';
import { eventExample } from '../schemas/examples';
import { schemaNames } from '../schemas/names';
import { eventCatalog } from '../schemas/webhook';
import { statusOfCode } from './errors';
import type { AnyRoute } from './route';

type JsonSchema = Record<string, unknown>;
type Io = 'input' | 'output';

const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });

/** `VALIDATION_ERROR` → `ValidationError`, `NOT_FOUND` → `NotFoundError`. */
const errorSchemaName = (code: ErrorCode) => {
  const name = pascal(code);
  return name.endsWith('Error') ? name : `${name}Error`;
};

/** `PRECONDITION_FAILED` → `PreconditionFailed`. */
const pascal = (text: string) =>
  text
    .split(/[^a-zA-Z0-9]+/)
    .filter(Boolean)
    .map((word) => word[0]?.toUpperCase() + word.slice(1).toLowerCase())
    .join('');

/**
 * Facts JSON Schema keeps implicit but API linters and generators ask for: integer widths, and the
 * length a UUID or an instant can have (their pattern already fixes it).
 */
function harden(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(harden);
  if (typeof node !== 'object' || node === null) return node;
  const schema: JsonSchema = {};
  for (const [key, value] of Object.entries(node)) schema[key] = key === 'const' ? value : harden(value);
  if (schema.type === 'integer' && schema.format === undefined) {
    const min = typeof schema.minimum === 'number' ? schema.minimum : Number.MIN_SAFE_INTEGER;
    const max = typeof schema.maximum === 'number' ? schema.maximum : Number.MAX_SAFE_INTEGER;
    schema.format = min >= -(2 ** 31) && max <= 2 ** 31 - 1 ? 'int32' : 'int64';
  }
  if (schema.type === 'string' && schema.maxLength === undefined) {
    if (schema.format === 'uuid') schema.maxLength = 36;
    if (schema.format === 'date-time') schema.maxLength = 24;
  }
  return schema;
}

/** Replaces `#/$defs/X` references by component references, through `names`. */
function rewriteRefs(node: unknown, names: ReadonlyMap<string, string>): unknown {
  if (Array.isArray(node)) return node.map((child) => rewriteRefs(child, names));
  if (typeof node !== 'object' || node === null) return node;
  const out: JsonSchema = {};
  for (const [key, value] of Object.entries(node)) {
    if (key === '$ref' && typeof value === 'string' && value.startsWith('#/$defs/')) {
      const id = value.slice('#/$defs/'.length);
      out.$ref = `#/components/schemas/${names.get(id) ?? id}`;
    } else out[key] = rewriteRefs(value, names);
  }
  return out;
}

/** Structure only: two schemas that differ only in where their references point compare equal. */
const shapeOf = (schema: unknown) =>
  JSON.stringify(schema, (key, value) =>
    key === '$ref' && typeof value === 'string' ? value.split('/').pop() : value,
  );

/**
 * Named schemas (`shared/schemas/names.ts`) become components; every other schema is inlined
 * where it is used. Requests and answers of the same named schema differ at times (defaults make
 * a field optional in a request, answers close their objects): the request side then takes the
 * name with an `Input` suffix.
 */
class Components {
  readonly schemas: Record<string, JsonSchema> = {};
  private readonly origin = new Map<string, Io>();

  convert(schema: $ZodType, io: Io): JsonSchema {
    const generated = toJSONSchema(schema, {
      io,
      metadata: schemaNames,
      unrepresentable: 'any',
      reused: 'inline',
    }) as JsonSchema;
    const { $schema: _dialect, $defs, ...json } = generated;
    const defs = ($defs ?? {}) as Record<string, JsonSchema>;
    const names = new Map<string, string>();
    for (const [id, def] of Object.entries(defs)) {
      const existing = this.schemas[id];
      const clash =
        existing !== undefined && this.origin.get(id) !== io && shapeOf(existing) !== shapeOf(def);
      names.set(id, clash ? `${id}${io === 'input' ? 'Input' : 'Output'}` : id);
    }
    for (const [id, def] of Object.entries(defs)) {
      const name = names.get(id) ?? id;
      if (this.schemas[name]) continue;
      this.schemas[name] = harden(rewriteRefs(def, names)) as JsonSchema;
      this.origin.set(name, io);
    }
    return harden(rewriteRefs(json, names)) as JsonSchema;
  }

  add(name: string, schema: JsonSchema): JsonSchema {
    this.schemas[name] = schema;
    return ref(name);
  }
}

/* ---------------------------------------------------------------- errors */

/** What `details` holds, per error code (absent codes carry none): the schemas errors are typed by. */
const detailsSchemas: Partial<Record<ErrorCode, $ZodType>> = errorDetailsSchemas;

const errorDescriptions: Record<ErrorCode, string> = {
  BAD_REQUEST: 'Malformed JSON, a body nested too deeply, or a malformed or foreign cursor',
  UNAUTHORIZED: 'Credential missing, invalid, revoked or expired, or sent in two headers',
  INTEGRATION_MODULE_REQUIRED:
    'The organization lacks the module this feature needs (API keys need `automation_api`)',
  FORBIDDEN: 'Credential kind, scope or role not allowed',
  NOT_FOUND: 'Not found, or belongs to another organization',
  METHOD_NOT_ALLOWED: 'A known path with another method',
  CONFLICT: 'Conflicts with the current state, or an `Idempotency-Key` reused with another body',
  PRECONDITION_FAILED: '`If-Match` does not match the current version',
  PAYLOAD_TOO_LARGE: 'Body over 256 KiB',
  UNSUPPORTED_MEDIA_TYPE: 'The body is not `application/json`',
  VALIDATION_ERROR: 'A value parses but is not allowed, or a field is unknown',
  RATE_LIMITED: 'Too many requests for this credential: retry after `Retry-After` seconds',
  INTERNAL_ERROR: 'An unexpected error: nothing internal is disclosed; report the `correlationId`',
  UPSTREAM_ERROR: 'A third-party service this request needed failed',
  SERVICE_UNAVAILABLE:
    'Temporarily unavailable (throttling, or a write that kept losing to concurrent writes)',
};

/** A status's envelope, with `code` a single value of `ErrorCode` so a client narrows on it. */
function errorSchema(components: Components, code: ErrorCode): JsonSchema {
  components.add('ErrorCode', {
    type: 'string',
    enum: [...errorCodes],
    description: 'Every error code of the API',
  });
  const detailsSchema = detailsSchemas[code];
  const details = detailsSchema ? components.convert(detailsSchema, 'output') : undefined;
  const detailsRequired = Array.isArray(details?.required) && details.required.length > 0;
  return components.add(errorSchemaName(code), {
    type: 'object',
    description: errorDescriptions[code],
    required: ['error'],
    additionalProperties: false,
    properties: {
      error: {
        type: 'object',
        required: ['code', 'message', 'correlationId', ...(detailsRequired ? ['details'] : [])],
        additionalProperties: false,
        properties: {
          code: { allOf: [ref('ErrorCode')], enum: [code] },
          message: { type: 'string', maxLength: 1000, description: 'For people; do not parse it' },
          ...(code === 'VALIDATION_ERROR'
            ? {
                fields: {
                  type: 'object',
                  description: 'Every offending field (dotted path) and its message',
                  maxProperties: 100,
                  additionalProperties: { type: 'string', maxLength: 1000 },
                },
              }
            : {}),
          ...(details ? { details } : {}),
          correlationId: {
            type: 'string',
            maxLength: 128,
            description: 'Equals the `X-Request-Id` response header',
          },
        },
      },
    },
  });
}

/* ---------------------------------------------------------------- headers */

const int32 = (description: string) => ({
  description,
  required: true,
  schema: { type: 'integer', format: 'int32', minimum: 0, maximum: 2 ** 31 - 1 },
});

/**
 * Marked `required` where they are used: each is sent on every answer that declares it, except
 * `Idempotent-Replayed` (replays only) and the `RateLimit-*` headers of errors (see `mayCarry`).
 */
const headerComponents = {
  'X-Request-Id': {
    description: 'The request id (yours when you sent a well-formed one); error envelopes repeat it',
    required: true,
    schema: { type: 'string', maxLength: 128 },
  },
  'Access-Control-Allow-Origin': {
    description: 'Any origin may call: credentials travel in headers, never in cookies',
    required: true,
    schema: { type: 'string', enum: ['*'] },
  },
  ETag: {
    description: 'The resource version, for `If-Match` on the next write',
    required: true,
    schema: { type: 'string', pattern: '^"[0-9]+"$', maxLength: 17 },
  },
  'RateLimit-Limit': int32(
    'Requests a minute allowed: the credential’s limit, or its organization’s ceiling when that one is closer to running out',
  ),
  'RateLimit-Remaining': int32('Requests left in the current window'),
  'RateLimit-Reset': int32('Seconds until the window resets'),
  'Retry-After': int32('Seconds to wait before trying again'),
  'Idempotent-Replayed': {
    description: 'Present when this answer replays the first response to the same `Idempotency-Key`',
    required: false,
    schema: { type: 'string', enum: ['true'] },
  },
  'Content-Disposition': {
    description: 'An attachment, with the file name to save it under',
    required: true,
    schema: { type: 'string', maxLength: 200, pattern: '^attachment; filename="[A-Za-z0-9._-]+"$' },
  },
  'Set-Cookie': {
    description:
      'The cookie the operation sets or clears (see its description); `HttpOnly; Secure; SameSite=Strict; Path=/`',
    required: true,
    schema: { type: 'string', maxLength: 1024 },
  },
} as const;
type HeaderName = keyof typeof headerComponents;

const headerRefs = (names: readonly HeaderName[]) =>
  Object.fromEntries(names.map((name) => [name, { $ref: `#/components/headers/${name}` }]));

/**
 * Headers an answer may carry or not: the component's own text and schema, inline, not required
 * (a reference cannot change `required`).
 */
const mayCarry = (names: readonly HeaderName[]) =>
  Object.fromEntries(names.map((name) => [name, { ...headerComponents[name], required: false }]));

const parameterComponents = {
  IfMatch: {
    name: 'If-Match',
    in: 'header',
    required: false,
    description:
      'The `ETag` you read: the write happens only if the resource is still at that version, else 412 with `details.currentVersion`. `*` or no header writes whatever the version.',
    schema: { type: 'string', maxLength: 20, pattern: '^(\\*|(W/)?"?[0-9]{1,15}"?)$' },
    example: '"3"',
  },
  IdempotencyKey: {
    name: 'Idempotency-Key',
    in: 'header',
    required: false,
    description:
      'Makes a POST safe to retry: the same key with the same body within 24 h replays the first response (with `Idempotent-Replayed: true`); with another body it is 409.',
    schema: { type: 'string', minLength: 1, maxLength: 255, pattern: '^[\\x21-\\x7E]+$' },
  },
  RequestId: {
    name: 'X-Request-Id',
    in: 'header',
    required: false,
    description: 'Your own correlation id (8–128 of `A-Z a-z 0-9 . _ : -`), echoed in the answer',
    schema: { type: 'string', minLength: 8, maxLength: 128, pattern: '^[A-Za-z0-9._:-]{8,128}$' },
  },
} as const;

/* ---------------------------------------------------------------- operations */

interface Context {
  components: Components;
  /** Error response components the operations refer to, by name. */
  errorResponses: Map<string, { status: number; limited: boolean }>;
}

const codeOfStatus = new Map<number, ErrorCode>(
  errorCodes.map((code) => [statusOfCode[code], code] as const),
);

/** The error answers an operation can give, from what it takes and who may call it. */
function errorStatusesOf(route: AnyRoute): number[] {
  const callers = route.callers.filter((caller) => caller !== 'public');
  return [
    ...new Set([
      // A body that does not parse is 400 everywhere; one sent to a route that takes none is 422.
      400,
      422,
      ...(route.body ? [413, 415] : []),
      // A path id that names nothing, or is not even well-formed, is 404 whatever the route.
      ...(route.params ? [404] : []),
      ...(callers.length ? [401, 403, 429] : []),
      ...(callers.includes('apiKey') ? [402] : []),
      ...(route.method === 'POST' && callers.length ? [409] : []),
      ...(route.versioned === 'write' ? [412] : []),
      ...(route.errors ?? []),
      500,
      503,
    ]),
  ].sort((a, b) => a - b);
}

const securityOf: Record<string, string[]> = {
  apiKey: ['apiKey', 'apiKeyHeader'],
  operator: ['operatorSession'],
  visitor: ['visitorToken'],
  platform: ['platformAdmin'],
  widget: ['widgetKey'],
};

function parametersOf(ctx: Context, schema: $ZodType | undefined, where: 'path' | 'query') {
  if (!schema) return [];
  const json = ctx.components.convert(schema, 'input');
  const properties = (json.properties ?? {}) as Record<string, JsonSchema>;
  const required = new Set((json.required as string[] | undefined) ?? []);
  return Object.entries(properties).map(([name, property]) => {
    const { description, ...rest } = property;
    return {
      name,
      in: where,
      required: where === 'path' || required.has(name),
      ...(typeof description === 'string' ? { description } : {}),
      schema: rest,
    };
  });
}

function operationOf(ctx: Context, route: AnyRoute) {
  const callers = route.callers.filter((caller) => caller !== 'public');
  const limited = callers.length > 0;
  const access = [
    limited ? `Callers: ${callers.join(', ')}.` : 'No credential needed.',
    route.scope
      ? `Scope: \`${route.scope}\`${route.adminOnly ? ' and an admin session (API keys need only the scope)' : ''}.`
      : '',
  ]
    .filter(Boolean)
    .join(' ');
  const successHeaders: HeaderName[] = [
    'X-Request-Id',
    'Access-Control-Allow-Origin',
    ...(route.versioned ? (['ETag'] as const) : []),
    ...(limited ? (['RateLimit-Limit', 'RateLimit-Remaining', 'RateLimit-Reset'] as const) : []),
    ...(route.method === 'POST' && limited ? (['Idempotent-Replayed'] as const) : []),
    ...(route.response.headers ?? []),
    ...(route.cookie?.sets ? (['Set-Cookie'] as const) : []),
  ];
  const contentTypes = [route.response.contentType ?? 'application/json'].flat();
  const statuses = errorStatusesOf(route);
  for (const status of statuses) ctx.errorResponses.set(responseName(status, limited), { status, limited });
  return {
    operationId: route.operationId,
    summary: route.summary,
    description: [route.description, access].filter(Boolean).join('\n\n'),
    tags: [route.tag],
    ...(route.scope ? { 'x-scope': route.scope } : {}),
    ...(route.adminOnly ? { 'x-admin-only': true } : {}),
    security: limited
      ? callers.flatMap((caller) => (securityOf[caller] ?? [caller]).map((s) => ({ [s]: [] })))
      : [],
    parameters: [
      ...parametersOf(ctx, route.params, 'path'),
      ...parametersOf(ctx, route.query, 'query'),
      ...(route.versioned === 'write' ? [{ $ref: '#/components/parameters/IfMatch' }] : []),
      ...(route.method === 'POST' && limited ? [{ $ref: '#/components/parameters/IdempotencyKey' }] : []),
      ...(route.cookie?.reads
        ? [
            {
              name: route.cookie.name,
              in: 'cookie',
              required: false,
              description: route.cookie.description,
              schema: { type: 'string', maxLength: 512, pattern: route.cookie.pattern },
            },
          ]
        : []),
      { $ref: '#/components/parameters/RequestId' },
    ],
    ...(route.body
      ? {
          requestBody: {
            required: true,
            content: {
              'application/json': {
                schema: ctx.components.convert(route.body, 'input'),
                ...(route.examples?.request !== undefined ? { example: route.examples.request } : {}),
              },
            },
          },
        }
      : {}),
    responses: {
      [route.response.status]: {
        description: route.response.description,
        headers: headerRefs(successHeaders),
        content: Object.fromEntries(
          contentTypes.map((type) => [
            type,
            {
              schema: ctx.components.convert(route.response.schema, 'output'),
              ...(route.examples?.response !== undefined ? { example: route.examples.response } : {}),
            },
          ]),
        ),
      },
      ...(route.alternative
        ? {
            [route.alternative.status]: {
              description: route.alternative.description,
              headers: headerRefs(successHeaders.filter((name) => name !== 'Content-Disposition')),
              content: {
                'application/json': {
                  schema: ctx.components.convert(route.alternative.schema, 'output'),
                  example: route.alternative.example,
                },
              },
            },
          }
        : {}),
      ...Object.fromEntries(
        statuses.map((status) => [
          status,
          { $ref: `#/components/responses/${responseName(status, limited)}` },
        ]),
      ),
    },
  };
}

/**
 * Errors of credentialed routes carry the rate limit headers once the credential was counted: not a
 * 401, nor a 413/415 (refused before authentication); a 400 or 422 carries them unless the body
 * failed to parse (headers are optional in the document: "may carry").
 */
const responseName = (status: number, limited: boolean) => {
  const code = codeOfStatus.get(status) ?? 'INTERNAL_ERROR';
  return `${pascal(code)}${limited && rateLimitedStatus(status) ? 'Limited' : ''}`;
};
const rateLimitedStatus = (status: number) => ![401, 413, 415, 500, 503].includes(status);

function responseComponents(ctx: Context) {
  const responses: Record<string, unknown> = {};
  const ordered = [...ctx.errorResponses].sort(([a], [b]) => (a < b ? -1 : 1));
  for (const [name, { status, limited }] of ordered) {
    const code = codeOfStatus.get(status) ?? 'INTERNAL_ERROR';
    const headers: HeaderName[] = [
      'X-Request-Id',
      'Access-Control-Allow-Origin',
      ...(status === 429 || status === 503 ? (['Retry-After'] as const) : []),
    ];
    responses[name] = {
      description: errorDescriptions[code],
      headers: {
        ...headerRefs(headers),
        ...(limited && rateLimitedStatus(status)
          ? mayCarry(['RateLimit-Limit', 'RateLimit-Remaining', 'RateLimit-Reset'])
          : {}),
        ...(status === 401
          ? { 'WWW-Authenticate': { required: true, schema: { type: 'string', enum: ['Bearer'] } } }
          : {}),
      },
      content: { 'application/json': { schema: errorSchema(ctx.components, code) } },
    };
  }
  return responses;
}

/* ---------------------------------------------------------------- webhooks */

/** Each event type as a Standard Webhooks delivery, so a receiver can be generated too. */
function webhooksOf(ctx: Context) {
  const envelope = ctx.components.convert(domainEvent, 'output');
  const signatureHeaders = [
    {
      name: 'webhook-id',
      in: 'header',
      required: true,
      description: 'The event id: the same on every retry, so repeats can be recognized',
      schema: { type: 'string', format: 'uuid', maxLength: 36 },
    },
    {
      name: 'webhook-timestamp',
      in: 'header',
      required: true,
      description: 'Unix seconds of this attempt; refuse deliveries too far from now',
      schema: { type: 'string', pattern: '^[0-9]{1,12}$', maxLength: 12 },
    },
    {
      name: 'webhook-signature',
      in: 'header',
      required: true,
      description:
        '`v1,<base64 HMAC-SHA256>` of `{webhook-id}.{webhook-timestamp}.{body}` with the webhook secret; two signatures separated by a space while a rotated secret is still valid',
      schema: { type: 'string', maxLength: 500 },
    },
  ];
  const description = new Map(eventCatalog.map((entry) => [entry.event, entry.description]));
  return Object.fromEntries(
    domainEventTypes.map((type: DomainEventType) => {
      const name = `${pascal(type)}Event`;
      ctx.components.add(name, {
        allOf: [
          envelope,
          {
            type: 'object',
            properties: {
              type: { type: 'string', enum: [type] },
              data: ctx.components.convert(eventDataSchemas[type], 'output'),
            },
            // Every event carries its resource (the envelope's `data` is open: any of them).
            required: ['type', 'data'],
          },
        ],
      });
      return [
        type,
        {
          post: {
            operationId: `on${pascal(type)}`,
            summary: description.get(type) ?? type,
            tags: ['Webhooks'],
            // Signed by the service (the headers below), not authenticated by a scheme.
            security: [],
            parameters: signatureHeaders,
            requestBody: {
              required: true,
              content: { 'application/json': { schema: ref(name), example: eventExample(type) } },
            },
            responses: {
              '200': {
                description: 'Any 2xx within 10 s acknowledges the delivery; anything else is retried',
              },
            },
          },
        },
      ];
    }),
  );
}

/**
 * The events feed's entries typed as the webhook payloads are: one of the `<Type>Event` components
 * (webhooksOf), told apart by `type`, so a client narrows `data` on it and one type serves the feed
 * and the webhooks alike.
 */
function typeFeedEntries(ctx: Context): void {
  const page = ctx.components.schemas.EventPage as
    | { properties?: { data?: { type?: string; items?: unknown } } }
    | undefined;
  const list = page?.properties?.data;
  if (list?.type !== 'array') throw new Error('EventPage has no data array to type');
  const mapping = Object.fromEntries(
    domainEventTypes.map((type: DomainEventType) => [type, `#/components/schemas/${pascal(type)}Event`]),
  );
  list.items = {
    oneOf: Object.values(mapping).map(($ref) => ({ $ref })),
    discriminator: { propertyName: 'type', mapping },
  };
}

/* ---------------------------------------------------------------- document */

/**
 * The OpenAPI 3.1 document, built from the same route objects and schemas that serve requests; the
 * tags' descriptions come from the route groups (functions/routes.ts, `apiTags`).
 */
export function buildOpenApi(
  routes: readonly AnyRoute[],
  version: string,
  tagDescriptions: Readonly<Record<string, string>>,
) {
  const ctx: Context = { components: new Components(), errorResponses: new Map() };
  const paths: Record<string, Record<string, unknown>> = {};
  for (const route of routes) {
    paths[route.path] ??= {};
    const entry = paths[route.path];
    if (entry) entry[route.method.toLowerCase()] = operationOf(ctx, route);
  }
  const webhooks = webhooksOf(ctx);
  typeFeedEntries(ctx);
  const responses = responseComponents(ctx);
  const usedTags = [...new Set(routes.map((route) => route.tag))];
  return {
    openapi: '3.1.0',
    info: {
      title: 'Customer Conversation Service API',
      version,
      contact: { name: 'Conversation Service team', url: 'https://github.com/conversation-service' },
      license: { name: 'Apache-2.0', identifier: 'Apache-2.0' },
      description: [
        'Live chat and support: conversations, messages, internal notes, an events feed and signed webhooks, with platform provisioning of organizations, API keys and operators.',
        'Conventions: ids are UUIDs (v7), timestamps ISO 8601 UTC with milliseconds. Every response carries `X-Request-Id`, and errors carry the same value as `error.correlationId`. Unknown body fields are rejected (422). Cursor pages are `{ data, nextCursor }`; cursors are opaque, signed and bound to the organization and the listing. Responses carry `RateLimit-Limit`, `RateLimit-Remaining` and `RateLimit-Reset` (of the credential’s limit, or of the organization’s ceiling when one is set and closer to running out); a 429 carries `Retry-After`.',
        'Errors: `{ error: { code, message, details, correlationId } }`; `code` is one of `ErrorCode`, and each status has its own schema with its `details` (412: `currentVersion`, 405: `allowed`, 402: `module` and `feature`, 422: `field` and `fields`).',
        'Versioned resources (conversations) answer with `ETag`; send it back as `If-Match` to write only if nothing changed meanwhile (412 otherwise). Free-form JSON values (`metadata`, custom-field values) are at most 8 levels deep and 16 KiB each.',
        'Routing is decided before authentication: an unknown path is 404, a known path with another method 405. A path id that is not a UUID is 404.',
        'CORS: any origin may call (credentials travel in headers, never cookies); `OPTIONS` on a known path answers the preflight with its methods.',
        'Realtime: operators and visitors connect a WebSocket with `?token=` their session or visitor token and receive `message_edited`, `note_invalidated` (operators only) and `conversation_snoozed` (operators only) notices; the protocol is described in docs/realtime.md.',
        'Warm instances cache a verified credential and its organization for 10 s: a revoked key or a changed organization takes effect at once on the instance that made the change and within 10 s everywhere.',
      ].join('\n\n'),
    },
    // A URL a generated SDK can use as it is. The document served by a deployment
    // (GET /api/openapi.json) names that deployment instead: the origin and stage it was fetched at.
    servers: [
      {
        url: '{baseUrl}',
        description:
          'Where the API is served: the local stack (npm start) by default, or a deployment’s invoke URL with its stage. The document a deployment serves names that deployment.',
        variables: {
          baseUrl: {
            default: 'http://localhost:3000',
            description: 'Scheme, host and stage, e.g. https://abc123.execute-api.eu-west-1.amazonaws.com/v1',
          },
        },
        'x-internal': false,
      },
    ],
    tags: usedTags.map((name) => {
      const description = tagDescriptions[name];
      if (description === undefined) throw new Error(`The tag ${name} has no description`);
      return { name, description };
    }),
    paths,
    webhooks,
    components: {
      schemas: ctx.components.schemas,
      responses,
      parameters: parameterComponents,
      headers: headerComponents,
      securitySchemes: {
        apiKey: {
          type: 'http',
          scheme: 'bearer',
          description:
            'Organization API key `svc_sk_…` in `Authorization: Bearer` (or `X-API-Key`; both headers may carry the same key, two different keys are 401)',
        },
        apiKeyHeader: {
          type: 'apiKey',
          in: 'header',
          name: 'X-API-Key',
          description:
            'Organization API key `svc_sk_…` (or `Authorization: Bearer`; both headers may carry the same key, two different keys are 401)',
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
