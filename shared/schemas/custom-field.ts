import { idParams, isoInstant, plainText, uuid } from './common';
import { lazily, named } from './names';
import {
  localeQueryParam,
  MAX_TRANSLATIONS,
  resolutionFields,
  translationHead,
  translationInputFields,
  translationLifecycle,
} from './translation';
import * as z from './zod';

export const customFieldTypes = [
  'text',
  'textarea',
  'number',
  'boolean',
  'date',
  'select',
  'multiselect',
] as const;
export const customFieldType = named(
  'CustomFieldType',
  () => z.enum(customFieldTypes),
  'What a value must be: `text` a single-line string, `textarea` a string, `number` a JSON number, `boolean` true or false, `date` a calendar date `YYYY-MM-DD`, `select` one option value, `multiselect` an array of distinct option values. `null` clears a value of any type.',
);
export type CustomFieldType = z.infer<typeof customFieldType>;

export const customFieldTarget = named(
  'CustomFieldTarget',
  () => z.enum(['conversation', 'visitor']),
  'What the field describes: conversation fields are checked in `customFields` of conversations',
);
export type CustomFieldTarget = z.infer<typeof customFieldTarget>;

/** Types whose values are option values: they need at least one option. */
export const optionTypes: readonly CustomFieldType[] = ['select', 'multiselect'];

export const customFieldTranslation = named('CustomFieldTranslation', () =>
  z.object({
    ...translationHead,
    label: z.string(),
    placeholder: z.nullable(z.string()),
    validationMessage: z.nullable(z.string()),
    ...translationLifecycle,
  }),
);
export type CustomFieldTranslation = z.infer<typeof customFieldTranslation>;

export const customFieldOptionTranslation = named('CustomFieldOptionTranslation', () =>
  z.object({ ...translationHead, label: z.string(), ...translationLifecycle }),
);
export type CustomFieldOptionTranslation = z.infer<typeof customFieldOptionTranslation>;

export const customFieldOption = named('CustomFieldOption', () =>
  z.object({
    id: uuid,
    /** What a conversation stores: a `select` value is one of these, a `multiselect` value several. */
    value: z.string(),
    sortOrder: z.int(),
    label: z.string(),
    ...resolutionFields,
    translations: z.array(customFieldOptionTranslation),
  }),
);
export type CustomFieldOption = z.infer<typeof customFieldOption>;

export const customField = named('CustomField', () =>
  z.object({
    id: uuid,
    orgId: uuid,
    /** The key of the value in `customFields`: immutable, unique in the organization. */
    name: z.string(),
    type: customFieldType,
    /** For forms (widget, dashboard): ask for a value. The API does not demand one. */
    required: z.boolean(),
    target: customFieldTarget,
    sortOrder: z.int(),
    /** Only active fields accept new values. */
    active: z.boolean(),
    label: z.string(),
    placeholder: z.nullable(z.string()),
    validationMessage: z.nullable(z.string()),
    ...resolutionFields,
    options: z.array(customFieldOption),
    translations: z.array(customFieldTranslation),
    createdAt: isoInstant,
    updatedAt: isoInstant,
  }),
);
export type CustomField = z.infer<typeof customField>;

export const customFieldList = named('CustomFieldList', () => z.object({ data: z.array(customField) }));

/* ---------------------------------------------------------------- requests */

const label = z.string().check(z.trim(), z.minLength(1), z.maxLength(200), plainText());
const placeholder = z.nullable(z.string().check(z.trim(), z.minLength(1), z.maxLength(200), plainText()));
const validationMessage = z.nullable(
  z.string().check(z.trim(), z.minLength(1), z.maxLength(500), plainText()),
);
export const sortOrder = z.int().check(z.minimum(-1_000_000), z.maximum(1_000_000));

/** A field's name is the key integrators write values under, so it is an identifier. */
export const fieldName = z
  .string()
  .check(
    z.maxLength(64),
    z.regex(
      /^[A-Za-z][A-Za-z0-9_]{0,63}$/,
      'Expected an identifier: a letter, then letters, digits or underscores',
    ),
  );

export const MAX_OPTIONS = 250;

const fieldTranslationInput = lazily(() =>
  z.strictObject({
    ...translationInputFields,
    label,
    placeholder: z.optional(placeholder),
    validationMessage: z.optional(validationMessage),
  }),
);
export type CustomFieldTranslationInput = z.infer<typeof fieldTranslationInput>;

const optionTranslationInput = lazily(() => z.strictObject({ ...translationInputFields, label }));

const optionInput = lazily(() =>
  z.strictObject({
    value: z.string().check(z.minLength(1), z.maxLength(100), plainText()),
    /** Default: the option's position in `options`. */
    sortOrder: z.optional(sortOrder),
    translations: z.array(optionTranslationInput).check(z.minLength(1), z.maxLength(MAX_TRANSLATIONS)),
  }),
);
export type CustomFieldOptionInput = z.infer<typeof optionInput>;

const translations = lazily(() =>
  z.array(fieldTranslationInput).check(z.minLength(1), z.maxLength(MAX_TRANSLATIONS)),
);
const options = lazily(() => z.array(optionInput).check(z.maxLength(MAX_OPTIONS)));

export const createCustomFieldBody = named('CreateCustomFieldRequest', () =>
  z.strictObject({
    name: fieldName,
    type: customFieldType,
    /** Default `conversation`. */
    target: z.optional(customFieldTarget),
    /** Default false. */
    required: z.optional(z.boolean()),
    /** Default 0. */
    sortOrder: z.optional(sortOrder),
    /** Default true. */
    active: z.optional(z.boolean()),
    translations,
    /** Required (at least one) for `select` and `multiselect`, refused for other types. */
    options: z.optional(options),
  }),
);
export type CreateCustomFieldInput = z.infer<typeof createCustomFieldBody>;

export const updateCustomFieldBody = named('UpdateCustomFieldRequest', () =>
  z.strictObject({
    target: z.optional(customFieldTarget),
    required: z.optional(z.boolean()),
    sortOrder: z.optional(sortOrder),
    active: z.optional(z.boolean()),
    /** The whole new set: locales left out are removed. */
    translations: z.optional(translations),
    /** The whole new set, matched to the stored options by `value`. */
    options: z.optional(options),
  }),
);
export type UpdateCustomFieldInput = z.infer<typeof updateCustomFieldBody>;

export const listCustomFieldsQuery = lazily(() =>
  z.strictObject({
    locale: localeQueryParam,
    target: z.optional(customFieldTarget),
  }),
);

export const getCustomFieldQuery = lazily(() => z.strictObject({ locale: localeQueryParam }));

export const customFieldParams = idParams;
