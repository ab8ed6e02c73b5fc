import Ajv2020, { type ErrorObject, type ValidateFunction } from 'ajv/dist/2020';
import addFormats from 'ajv-formats';

/**
 * The schemas of an OpenAPI 3.1 document under JSON Schema 2020-12 (Ajv), formats included: the one
 * validator the document's examples (test/openapi/examples.test.ts) and the answers the integration
 * tests receive (test/helpers/response-conformance.ts) are checked with.
 */

export type Json = Record<string, unknown>;
export const isObject = (value: unknown): value is Json =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

const unescapePointer = (segment: string): string => segment.replace(/~1/g, '/').replace(/~0/g, '~');

/** The node a local JSON pointer (`#/components/schemas/X`) names, if any. */
export function resolvePointer(document: unknown, ref: string): unknown {
  let node: unknown = document;
  for (const segment of ref.replace(/^#\/?/, '').split('/').filter(Boolean)) {
    if (!isObject(node) && !Array.isArray(node)) return undefined;
    node = (node as Json)[unescapePointer(segment)];
  }
  return node;
}

export const isJsonMediaType = (mediaType: string): boolean =>
  /^application\/(?:[\w.+-]+\+)?json\b/i.test(mediaType);

export const describeErrors = (errors: readonly ErrorObject[] | null | undefined): string =>
  (errors ?? [])
    .slice(0, 5)
    .map((error) => `${error.instancePath || '/'} ${error.message ?? ''} ${JSON.stringify(error.params)}`)
    .join('; ');

/**
 * OpenAPI's integer widths, as OpenAPI tools (Prism among them) check them: without them Ajv would
 * ignore the format and an out-of-range count would pass.
 */
const INTEGER_FORMATS = {
  int32: { min: -(2 ** 31), max: 2 ** 31 - 1 },
  int64: { min: Number.MIN_SAFE_INTEGER, max: Number.MAX_SAFE_INTEGER },
};

export interface DocumentSchemas {
  /** A `$ref` to another part of the document, followed (a few hops at most). */
  deref(node: unknown): unknown;
  /** The compiled validator of a schema found in the document (its refs resolve in the document). */
  validatorOf(schema: unknown): ValidateFunction;
}

export function documentSchemas(document: Json): DocumentSchemas {
  // The document's components are registered once under an id; a schema is compiled with its local
  // refs (`#/components/...`) pointed at that id. OpenAPI's own keywords (`example`, `discriminator`,
  // `xml`, `externalDocs`) are not JSON Schema: strict mode off, so they are ignored.
  const id = 'https://openapi.invalid/document.json';
  const ajv = new Ajv2020({ strict: false, allErrors: true, logger: false });
  addFormats(ajv);
  for (const [name, range] of Object.entries(INTEGER_FORMATS)) {
    ajv.addFormat(name, {
      type: 'number',
      validate: (value: number) => Number.isInteger(value) && value >= range.min && value <= range.max,
    });
  }
  ajv.addSchema({ $id: id, components: isObject(document.components) ? document.components : {} });

  const withDocumentRefs = (node: unknown): unknown => {
    if (Array.isArray(node)) return node.map(withDocumentRefs);
    if (!isObject(node)) return node;
    return Object.fromEntries(
      Object.entries(node).map(([key, value]) =>
        key === '$ref' && typeof value === 'string' && value.startsWith('#/')
          ? [key, `${id}${value}`]
          : [key, withDocumentRefs(value)],
      ),
    );
  };

  const validators = new Map<unknown, ValidateFunction>();
  return {
    deref(node) {
      let current = node;
      for (let hops = 0; hops < 10 && isObject(current) && typeof current.$ref === 'string'; hops++) {
        current = resolvePointer(document, current.$ref);
      }
      return current;
    },
    validatorOf(schema) {
      let validate = validators.get(schema);
      if (!validate) {
        validate = ajv.compile(withDocumentRefs(schema) as Json);
        validators.set(schema, validate);
      }
      return validate;
    },
  };
}
