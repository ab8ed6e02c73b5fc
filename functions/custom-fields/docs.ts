/** Texts several custom-field routes state in the API description. */

export const RESOLUTION = [
  'Resolution (the same for every localized resource): `label`, `placeholder` and `validationMessage` come from one translation of the field, the published one in the requested `locale`, else in the organization’s default locale, else the first published one in stored order; `locale` names the one that answered and `fallbackUsed` is true when the requested locale (the default locale when none is requested) had none.',
  'Each option’s `label` is resolved the same way from the option’s own translations, so an option may fall back where its field does not. Drafts never answer. A `locale` the organization has not enabled is 422 naming `locale`. `translations` always lists every stored translation, drafts included.',
].join(' ');

export const WRITE_RULES = [
  '`translations` (one per locale the organization has enabled, at most 100; a locale not enabled, or a second translation of one, is 422 naming it) needs at least one `published` entry; `label` ≤ 200 characters, `placeholder` ≤ 200 and `validationMessage` ≤ 500, plain text.',
  'Lifecycle: `sourceLocale` and `machineTranslatedAt` are recorded as sent (a machine-translation pipeline sets them); `reviewed: true` records `reviewedAt` (now) and `reviewedBy` (the operator, or the API key’s id), `reviewed: false` withdraws a review, and a review lasts while the text it confirmed stays the same. `createdAt`, `updatedAt` and the ids are the service’s; a locale already stored keeps its id.',
  '`select` and `multiselect` fields need at least one option (422 naming `options`); other types take none. An option has a `value` (≤ 100 characters: what conversations store), a `sortOrder` (default: its position in `options`) and at least one published translation of its `label`; values are distinct.',
  'A definition is at most 300 000 bytes as JSON (422 `details.reason = "definition_too_large"`), and all definitions of an organization at most 2 000 000 bytes together (409 `details.reason = "custom_field_budget_exceeded"`).',
].join(' ');
