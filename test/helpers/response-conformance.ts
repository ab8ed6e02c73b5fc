import { describeErrors, documentSchemas, isJsonMediaType, isObject, type Json } from './openapi-schemas';

/**
 * Whether an answer of the service is one its OpenAPI document declares, with the strictness of a
 * validating proxy (Stoplight Prism's `proxy` mode): the status must be declared for the operation
 * (method + path template), the body must validate against the schema declared for that status and
 * content type, and the declared headers marked `required` must be there and valid. Headers the
 * document does not declare are fine.
 */

/** One answer as a client received it. */
export interface ReceivedResponse {
  method: string;
  url: string;
  status: number;
  headers: Headers;
  /**
   * The body's text when it is to be checked against its schema: JSON that is not streamed. Other
   * bodies (CSV, PDF, HTML, scripts, streamed exports) are checked for status and content type only.
   */
  text?: string | undefined;
}

const METHODS = ['get', 'put', 'post', 'delete', 'patch', 'head', 'options', 'trace'];

interface Template {
  path: string;
  pattern: RegExp;
  /** Literal segments, in order: a path with a literal where another has a parameter wins. */
  literals: boolean[];
  item: Json;
}

function templatesOf(paths: unknown): Template[] {
  if (!isObject(paths)) return [];
  const templates = Object.entries(paths).flatMap(([path, item]) => {
    if (!isObject(item)) return [];
    const segments = path.split('/').filter(Boolean);
    const source = segments
      .map((segment) =>
        /^\{[^}]+\}$/.test(segment) ? '/[^/]+' : `/${segment.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}`,
      )
      .join('');
    const literals = segments.map((segment) => !/^\{[^}]+\}$/.test(segment));
    return [{ path, pattern: new RegExp(`^${source}$`), literals, item }];
  });
  // OpenAPI: "concrete" paths match before templated ones (`/bulk-close` before `/{id}`).
  const rank = (template: Template) => template.literals.map((literal) => (literal ? '0' : '1')).join('');
  return templates.sort((a, b) => (rank(a) < rank(b) ? -1 : rank(a) > rank(b) ? 1 : 0));
}

/** The media type without its parameters (`application/json; charset=utf-8` → `application/json`). */
const mediaTypeOf = (contentType: string | null): string =>
  (contentType ?? '').split(';')[0]?.trim().toLowerCase() ?? '';

/** Header values are text; a schema of numbers reads them as numbers, as OpenAPI's `simple` style. */
function headerValue(value: string, schema: unknown): unknown {
  const type = isObject(schema) ? schema.type : undefined;
  if ((type === 'integer' || type === 'number') && /^-?\d+(\.\d+)?$/.test(value)) return Number(value);
  return value;
}

/**
 * Checks answers against `document` (an OpenAPI 3.1 document as JSON). The answer to a request that
 * matches no operation cannot be declared by any document, so it is held to the routing rule the
 * document states instead: an unknown path is 404 and a known path with another method 405 (an
 * `OPTIONS` there is the CORS preflight, 204), each error with a body valid against the document's
 * envelope of that error when the document has one (`components.schemas.NotFoundError`, …).
 */
export function responseConformance(document: Json): (response: ReceivedResponse) => string[] {
  const schemas = documentSchemas(document);
  const templates = templatesOf(document.paths);
  const componentSchemas = isObject(document.components) ? document.components.schemas : undefined;
  const envelopeOf = (name: string): unknown =>
    isObject(componentSchemas) && componentSchemas[name] !== undefined
      ? { $ref: `#/components/schemas/${name}` }
      : undefined;

  function checkBody(
    where: string,
    response: ReceivedResponse,
    mediaType: string,
    schema: unknown,
  ): string[] {
    if (response.text === undefined || schema === undefined || !isJsonMediaType(mediaType)) return [];
    let body: unknown;
    try {
      body = JSON.parse(response.text);
    } catch {
      return [`${where}: the body is not JSON: ${response.text.slice(0, 200)}`];
    }
    const validate = schemas.validatorOf(schema);
    return validate(body)
      ? []
      : [`${where}: the body does not match its schema: ${describeErrors(validate.errors)}`];
  }

  function unrouted(response: ReceivedResponse, path: string, knownPath: Template | undefined): string[] {
    const where = `${response.method} ${path} → ${response.status} (no operation)`;
    if (knownPath && response.method === 'OPTIONS') {
      return response.status === 204 ? [] : [`${where}: a preflight on a known path should be 204`];
    }
    const expected = knownPath ? 405 : 404;
    if (response.status !== expected) {
      return [
        `${where}: ${knownPath ? 'a known path with another method' : 'an unknown path'} should be ${expected}`,
      ];
    }
    const mediaType = mediaTypeOf(response.headers.get('content-type'));
    if (mediaType !== 'application/json') return [`${where}: content type ${mediaType || 'none'}, not JSON`];
    return checkBody(
      where,
      response,
      mediaType,
      envelopeOf(expected === 404 ? 'NotFoundError' : 'MethodNotAllowedError'),
    );
  }

  return (response) => {
    // The gateway serves `/api/docs/` as `/api/docs` (infra/local/gateway.ts): so does this match.
    const requested = new URL(response.url).pathname;
    const path = requested.length > 1 ? requested.replace(/\/+$/, '') : requested;
    const method = response.method.toLowerCase();
    const matching = templates.filter((template) => template.pattern.test(path));
    const template = matching.find((candidate) => isObject(candidate.item[method]));
    const operation = template?.item[method];
    if (!template || !isObject(operation) || !METHODS.includes(method)) {
      return unrouted(response, path, matching[0]);
    }
    const where = `${response.method} ${template.path} → ${response.status}`;
    const responses = isObject(operation.responses) ? operation.responses : {};
    const status = String(response.status);
    const declared = schemas.deref(responses[status] ?? responses[`${status[0]}XX`] ?? responses.default);
    if (!isObject(declared)) {
      return [`${where}: status ${status} is not declared (declared: ${Object.keys(responses).join(', ')})`];
    }
    const problems: string[] = [];
    const headers = isObject(declared.headers) ? declared.headers : {};
    for (const [name, entry] of Object.entries(headers)) {
      const header = schemas.deref(entry);
      if (!isObject(header)) continue;
      const value = response.headers.get(name);
      if (value === null) {
        if (header.required === true) problems.push(`${where}: the required header ${name} is missing`);
        continue;
      }
      if (header.schema === undefined) continue;
      const validate = schemas.validatorOf(header.schema);
      if (!validate(headerValue(value, header.schema))) {
        problems.push(
          `${where}: header ${name}: ${JSON.stringify(value)} ${describeErrors(validate.errors)}`,
        );
      }
    }
    const content = isObject(declared.content) ? declared.content : undefined;
    const mediaType = mediaTypeOf(response.headers.get('content-type'));
    if (!content) {
      if (response.text) problems.push(`${where}: a body where the document declares none`);
      return problems;
    }
    const media = content[mediaType];
    if (!isObject(media)) {
      problems.push(
        `${where}: content type ${mediaType || 'none'} is not declared (declared: ${Object.keys(content).join(', ')})`,
      );
      return problems;
    }
    return [...problems, ...checkBody(where, response, mediaType, media.schema)];
  };
}

/** An answer the document does not declare: thrown where the test awaits the request. */
export class UndeclaredResponseError extends Error {
  override name = 'UndeclaredResponseError';
}

/**
 * `fetch`, with every answer from the service's origins checked against the document before the
 * caller gets it; an answer that does not conform rejects with `UndeclaredResponseError`, so the
 * test that made the request fails, naming method, path, status and what is wrong. The caller's
 * body is untouched: a clone is read, and only when it is JSON that is not streamed.
 */
export function conformingFetch(
  base: typeof fetch,
  options: {
    /** Whether a URL is the service's (only its answers are checked). */
    isService: (url: URL) => boolean;
    /** The document to hold answers to, loaded on the first checked answer. */
    document: () => Promise<Json>;
  },
): typeof fetch {
  let checker: Promise<(response: ReceivedResponse) => string[]> | undefined;
  return async (input, init) => {
    const request = input instanceof Request ? input : undefined;
    const url = new URL(request?.url ?? String(input));
    const response = await base(input, init);
    if (!options.isService(url)) return response;
    checker ??= options.document().then(responseConformance);
    const check = await checker;
    // A streamed answer (chunked: exports) is checked for status and content type only: reading a
    // copy to its end before handing the answer over would hide from the test how it streams.
    const streamed = response.headers.get('transfer-encoding')?.includes('chunked') === true;
    const text =
      isJsonMediaType(mediaTypeOf(response.headers.get('content-type'))) && !streamed
        ? await response.clone().text()
        : undefined;
    const method = (init?.method ?? request?.method ?? 'GET').toUpperCase();
    const problems = check({
      method,
      url: url.href,
      status: response.status,
      headers: response.headers,
      text,
    });
    if (problems.length > 0) {
      throw new UndeclaredResponseError(
        `The answer is not one the OpenAPI document declares:\n  ${problems.join('\n  ')}`,
      );
    }
    return response;
  };
}
