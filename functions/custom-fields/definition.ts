import type { CustomFieldDefinition, StoredOption } from '../../shared/db/custom-fields';
import { uuidv7 } from '../../shared/ids';
import type { LocaleSettings } from '../../shared/locale/resolve';
import {
  assertNoProblems,
  type RevisionContext,
  reviseTranslations,
  translationSetProblems,
} from '../../shared/locale/translations';
import {
  type CustomFieldOptionInput,
  type CustomFieldTranslation,
  type CustomFieldTranslationInput,
  type CustomFieldType,
  optionTypes,
} from '../../shared/schemas/custom-field';

/** What create and PATCH share: the rules on translations and options that need the organization. */
export function assertValidParts(
  settings: LocaleSettings,
  type: CustomFieldType,
  input: {
    translations?: readonly CustomFieldTranslationInput[];
    options?: readonly CustomFieldOptionInput[];
  },
  creating: boolean,
): void {
  const problems: Record<string, string> = {};
  if (input.translations)
    Object.assign(
      problems,
      translationSetProblems(input.translations, settings, 'translations', { requirePublished: true }),
    );
  const takesOptions = optionTypes.includes(type);
  if (takesOptions && (input.options?.length ?? 0) === 0 && (creating || input.options !== undefined)) {
    problems.options = `A ${type} field needs at least one option`;
  } else if (!takesOptions && (input.options?.length ?? 0) > 0) {
    problems.options = `Only select and multiselect fields have options, not ${type} fields`;
  }
  const values = new Set<string>();
  input.options?.forEach((option, i) => {
    if (values.has(option.value))
      problems[`options.${i}.value`] = `The value "${option.value}" is listed twice`;
    values.add(option.value);
    Object.assign(
      problems,
      translationSetProblems(option.translations, settings, `options.${i}.translations`, {
        requirePublished: true,
      }),
    );
  });
  assertNoProblems(problems);
}

interface FieldTexts {
  label: string;
  placeholder: string | null;
  validationMessage: string | null;
}

const fieldTexts = (entry: {
  label: string;
  placeholder?: string | null | undefined;
  validationMessage?: string | null | undefined;
}): FieldTexts => ({
  label: entry.label,
  placeholder: entry.placeholder ?? null,
  validationMessage: entry.validationMessage ?? null,
});

/** The field's translation set after a write that sends `input` as the whole new set. */
export function reviseFieldTranslations(
  previous: readonly CustomFieldTranslation[],
  input: readonly CustomFieldTranslationInput[],
  context: RevisionContext,
): CustomFieldTranslation[] {
  return reviseTranslations<FieldTexts>(previous, input.map(withFieldTexts), fieldTexts, context);
}

const withFieldTexts = (entry: CustomFieldTranslationInput) => ({ ...entry, ...fieldTexts(entry) });

/**
 * The option set after a write that sends `input` as the whole new set: options are matched to the
 * stored ones by `value` (they keep their id and their translations' lifecycle); `sortOrder`
 * defaults to the position in `input`.
 */
export function reviseOptions(
  previous: readonly StoredOption[],
  input: readonly CustomFieldOptionInput[],
  context: RevisionContext,
): StoredOption[] {
  const byValue = new Map(previous.map((option) => [option.value, option]));
  return input.map((option, position) => {
    const before = byValue.get(option.value);
    return {
      id: before?.id ?? uuidv7(),
      value: option.value,
      sortOrder: option.sortOrder ?? position,
      translations: reviseTranslations<{ label: string }>(
        before?.translations ?? [],
        option.translations,
        (entry) => ({ label: entry.label }),
        context,
      ),
    };
  });
}

/** True when the two definitions say the same (the write would change nothing). */
export function sameDefinition(a: CustomFieldDefinition, b: CustomFieldDefinition): boolean {
  return JSON.stringify({ ...a, updatedAt: '' }) === JSON.stringify({ ...b, updatedAt: '' });
}
