import type { CustomFieldDefinition, StoredOption } from '../db/custom-fields';
import { project } from '../db/project';
import { bySortOrderThen, resolvedTexts } from '../locale/localized';
import type { LocaleResolver } from '../locale/resolve';
import type { CustomField } from '../schemas/custom-field';
import { customFieldProjection } from '../schemas/projections';

/** The order of a list: `sortOrder`, then `name`. */
export const fieldOrder = bySortOrderThen<CustomFieldDefinition>((definition) => definition.name);

const bySortOrder = (a: StoredOption, b: StoredOption) => a.sortOrder - b.sortOrder;

const toField = project<CustomField>(customFieldProjection);

/**
 * A definition as the API answers it, resolved for one read: the field's texts from one of its
 * translations, each option's label from one of the option's, every translation listed.
 */
export const presentField = (definition: CustomFieldDefinition, resolver: LocaleResolver): CustomField =>
  toField({
    ...definition,
    ...resolvedTexts(resolver, definition.translations, (translation) => ({
      label: translation?.label ?? definition.name,
      placeholder: translation?.placeholder ?? null,
      validationMessage: translation?.validationMessage ?? null,
    })),
    // Stable: options with equal sortOrder keep the order they were given in.
    options: [...definition.options].sort(bySortOrder).map((option) => ({
      ...option,
      ...resolvedTexts(resolver, option.translations, (translation) => ({
        label: translation?.label ?? option.value,
      })),
    })),
  });
