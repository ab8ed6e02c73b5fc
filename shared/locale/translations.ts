import { ValidationError } from '../errors';
import { uuidv7 } from '../ids';
import type { LocaleSettings, Localizable } from './resolve';

/**
 * The lifecycle every stored translation carries, whatever it translates (a field's label, an
 * option's label, a collection's name, an article's title and content).
 */
export interface TranslationLifecycle extends Localizable {
  id: string;
  /** The locale it was translated from, when it is a translation of another one. */
  sourceLocale: string | null;
  /** When a machine produced the text (set by the client that ran the machine translation). */
  machineTranslatedAt: string | null;
  /** When a person confirmed the current text, and who (an operator id, or the API key's id). */
  reviewedAt: string | null;
  reviewedBy: string | null;
  createdAt: string;
  updatedAt: string;
}

/** A translation as clients send it: the texts, the status, and lifecycle facts they know. */
export interface TranslationInput extends Localizable {
  sourceLocale?: string | null | undefined;
  machineTranslatedAt?: string | null | undefined;
  /** true: the caller has reviewed the text now; false: withdraw a review; absent: see below. */
  reviewed?: boolean | undefined;
}

export interface RevisionContext {
  now: string;
  /** Who is writing: recorded as `reviewedBy` when a translation is marked reviewed. */
  reviewer: string;
}

/**
 * The stored translation set after a write that sends a whole new set (`input`): one translation per
 * locale of `input`, in its order; locales it leaves out are removed. A locale already stored keeps
 * its `id` and `createdAt`; `updatedAt` moves only when something about it changed. `texts` picks
 * the translated texts of one entry (the same function for stored and input entries).
 *
 * Review: `reviewed: true` records the caller and the time (a translation already reviewed whose
 * text did not change keeps its first review), `false` withdraws it, and when absent the review
 * stays only as long as the text it confirmed: changing the text of a reviewed translation without
 * reviewing it again clears `reviewedAt` and `reviewedBy`.
 */
export function reviseTranslations<C extends object>(
  previous: readonly (TranslationLifecycle & C)[],
  input: readonly (TranslationInput & C)[],
  texts: (entry: C) => C,
  context: RevisionContext,
): (TranslationLifecycle & C)[] {
  const stored = new Map(previous.map((translation) => [translation.locale, translation]));
  return input.map((entry) => {
    const content = texts(entry);
    const before = stored.get(entry.locale);
    const textChanged = !before || JSON.stringify(texts(before)) !== JSON.stringify(content);
    const keepReview = before?.reviewedAt != null && !textChanged && entry.reviewed !== false;
    const review =
      keepReview && before
        ? { reviewedAt: before.reviewedAt, reviewedBy: before.reviewedBy }
        : entry.reviewed === true
          ? { reviewedAt: context.now, reviewedBy: context.reviewer }
          : { reviewedAt: null, reviewedBy: null };
    const next = {
      id: before?.id ?? uuidv7(),
      locale: entry.locale,
      status: entry.status,
      ...content,
      sourceLocale: entry.sourceLocale !== undefined ? entry.sourceLocale : (before?.sourceLocale ?? null),
      machineTranslatedAt:
        entry.machineTranslatedAt !== undefined
          ? entry.machineTranslatedAt
          : (before?.machineTranslatedAt ?? null),
      ...review,
      createdAt: before?.createdAt ?? context.now,
      updatedAt: before?.updatedAt ?? context.now,
    } as TranslationLifecycle & C;
    if (before && changedLifecycle(before, next)) next.updatedAt = context.now;
    if (before && textChanged) next.updatedAt = context.now;
    return next;
  });
}

function changedLifecycle(before: TranslationLifecycle, after: TranslationLifecycle): boolean {
  return (
    before.status !== after.status ||
    before.sourceLocale !== after.sourceLocale ||
    before.machineTranslatedAt !== after.machineTranslatedAt ||
    before.reviewedAt !== after.reviewedAt ||
    before.reviewedBy !== after.reviewedBy
  );
}

/**
 * The rules of a translation set that need the organization: every locale enabled for it, one
 * translation per locale, a source locale other than the translation's own, and, where the thing
 * cannot exist without a text (a field's label, an option's label), at least one published
 * translation. Every problem is reported, each at its dotted path under `path`.
 */
export function translationSetProblems(
  input: readonly TranslationInput[],
  settings: LocaleSettings,
  path: string,
  options: { requirePublished: boolean },
): Record<string, string> {
  const problems: Record<string, string> = {};
  const seen = new Set<string>();
  input.forEach((entry, i) => {
    if (!settings.locales.includes(entry.locale)) {
      problems[`${path}.${i}.locale`] =
        `The organization has not enabled the locale "${entry.locale}" (enabled: ${settings.locales.join(', ')})`;
    } else if (seen.has(entry.locale)) {
      problems[`${path}.${i}.locale`] = `A second translation for "${entry.locale}": one per locale`;
    }
    seen.add(entry.locale);
    if (entry.sourceLocale != null && entry.sourceLocale === entry.locale) {
      problems[`${path}.${i}.sourceLocale`] = 'A translation cannot be translated from its own locale';
    }
  });
  if (options.requirePublished && !input.some((entry) => entry.status === 'published')) {
    problems[path] = 'At least one translation must be published: drafts never answer a read';
  }
  return problems;
}

/** Throws the 422 for `problems` when there are any. */
export function assertNoProblems(problems: Record<string, string>): void {
  const first = Object.values(problems)[0];
  if (first !== undefined) throw new ValidationError(first, problems);
}
