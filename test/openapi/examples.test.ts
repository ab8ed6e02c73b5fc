import { describe, expect, it } from 'vitest';
import { allRoutes, apiTags } from '../../functions/routes';
import { buildOpenApi } from '../../shared/http/openapi';
import {
  describeErrors,
  documentSchemas,
  isJsonMediaType,
  isObject,
  type Json,
} from '../helpers/openapi-schemas';

/**
 * Every request body and every 2xx JSON response of the document carries an example (`example`, or
 * `examples` with a `value`, on the media type), and every example validates against its schema
 * (JSON Schema 2020-12, formats included): the examples are what integrators copy, and what
 * mock servers and the reference page show. Webhook payloads (the `webhooks` section) too.
 */

const document: Json = buildOpenApi(allRoutes(), 'test', apiTags());
const { deref, validatorOf } = documentSchemas(document);

/** The problems with the examples of one media type: missing when required, or not valid. */
function checkMedia(where: string, mediaType: string, media: unknown, required: boolean): string[] {
  if (!isObject(media)) return [`${where} ${mediaType}: not a media type object`];
  const examples: [string, unknown][] = [];
  if ('example' in media) examples.push(['example', media.example]);
  if (isObject(media.examples)) {
    for (const [name, entry] of Object.entries(media.examples)) {
      const example = deref(entry);
      if (isObject(example) && 'value' in example) examples.push([`examples.${name}`, example.value]);
      else examples.push([`examples.${name}`, undefined]);
    }
  }
  if (examples.length === 0) return required ? [`${where} ${mediaType}: no example`] : [];
  if (media.schema === undefined) return [`${where} ${mediaType}: examples but no schema to check them`];
  const validate = validatorOf(media.schema);
  const problems: string[] = [];
  for (const [name, value] of examples) {
    if (value === undefined) problems.push(`${where} ${mediaType} ${name}: no inline value`);
    else if (!validate(value)) {
      problems.push(
        `${where} ${mediaType} ${name} does not match its schema: ${describeErrors(validate.errors)}`,
      );
    }
  }
  return problems;
}

function checkOperation(operation: Json): string[] {
  const problems: string[] = [];
  const body = deref(operation.requestBody);
  if (isObject(body)) {
    const content = isObject(body.content) ? body.content : {};
    if (Object.keys(content).length === 0) problems.push('request body: no content');
    for (const [mediaType, media] of Object.entries(content)) {
      problems.push(...checkMedia('request body', mediaType, media, true));
    }
  }
  const responses = isObject(operation.responses) ? operation.responses : {};
  for (const [status, entry] of Object.entries(responses)) {
    const response = deref(entry);
    if (!isObject(response) || !isObject(response.content)) continue;
    const success = /^2(?:\d\d|XX)$/.test(status);
    for (const [mediaType, media] of Object.entries(response.content)) {
      // 2xx JSON answers need an example; any other example present must still be valid.
      problems.push(
        ...checkMedia(`response ${status}`, mediaType, media, success && isJsonMediaType(mediaType)),
      );
    }
  }
  return problems;
}

const METHODS = ['get', 'put', 'post', 'delete', 'patch', 'head', 'options', 'trace'];

interface Entry {
  name: string;
  operation: Json;
}

function operationsOf(items: unknown, label: (key: string, method: string) => string): Entry[] {
  if (!isObject(items)) return [];
  return Object.entries(items).flatMap(([key, item]) => {
    const resolved = deref(item);
    if (!isObject(resolved)) return [];
    return METHODS.flatMap((method) => {
      const operation = resolved[method];
      if (!isObject(operation)) return [];
      const id = typeof operation.operationId === 'string' ? `${operation.operationId} ` : '';
      return [{ name: `${id}(${label(key, method)})`, operation }];
    });
  });
}

const operations = operationsOf(document.paths, (path, method) => `${method.toUpperCase()} ${path}`);
const webhooks = operationsOf(
  document.webhooks,
  (name, method) => `webhook ${name}, ${method.toUpperCase()}`,
);

describe('examples in the OpenAPI document', () => {
  it('documents operations', () => {
    expect(operations.length).toBeGreaterThan(0);
  });

  it.each(operations)(
    '$name: every request body and 2xx response has a valid example',
    ({ name, operation }) => {
      const problems = checkOperation(operation);
      expect(problems.length, `${name}:\n  ${problems.join('\n  ')}`).toBe(0);
    },
  );

  // The contract puts the webhook payloads under `webhooks`; checked when the section is there.
  if (webhooks.length > 0) {
    it.each(webhooks)('$name: the payload has a valid example', ({ name, operation }) => {
      const problems = checkOperation(operation);
      expect(problems.length, `${name}:\n  ${problems.join('\n  ')}`).toBe(0);
    });
  }
});
