import type { CustomFieldDefinition } from '../db/custom-fields';
import type { LocaleResolver } from '../locale/resolve';
import type { CustomField } from '../schemas/custom-field';

const bySortOrder = <T extends { sortOrder: number }>(a: T, b: T) => a.sortOrder - b.sortOrder;

/** The order of a list: `sortOrder`, then `name`. */
export const fieldOrder = (a: CustomFieldDefinition, b: CustomFieldDefinition): number =>
  a.sortOrder - b.sortOrder || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0);

/**
 * A definition as the API answers it, resolved for one read: the field's texts from one of its
 * translations, each option's label from one of the option's, every translation listed as stored.
 * A field or option always has a published translation (create and PATCH require one); the
 * fallbacks here (the name, the value) only keep the answer whole should storage ever hold none.
 */
export function presentField(definition: CustomFieldDefinition, resolver: LocaleResolver): CustomField {
  const resolved = resolver.resolve(definition.translations);
  return {
    id: definition.id,
    orgId: definition.orgId,
    name: definition.name,
    type: definition.type,
    required: definition.required,
    target: definition.target,
    sortOrder: definition.sortOrder,
    active: definition.active,
    label: resolved?.translation.label ?? definition.name,
    placeholder: resolved?.translation.placeholder ?? null,
    validationMessage: resolved?.translation.validationMessage ?? null,
    locale: resolved?.locale ?? resolver.locale,
    fallbackUsed: resolved?.fallbackUsed ?? true,
    // Stable: options with equal sortOrder keep the order they were given in.
    options: [...definition.options].sort(bySortOrder).map((option) => {
      const label = resolver.resolve(option.translations);
      return {
        id: option.id,
        value: option.value,
        sortOrder: option.sortOrder,
        label: label?.translation.label ?? option.value,
        locale: label?.locale ?? resolver.locale,
        fallbackUsed: label?.fallbackUsed ?? true,
        translations: option.translations,
      };
    }),
    translations: definition.translations,
    createdAt: definition.createdAt,
    updatedAt: definition.updatedAt,
  };
}
