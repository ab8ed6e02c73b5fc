import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ValidationError } from '../../shared/errors';
import {
  type Localizable,
  localeResolver,
  requestedLocale,
  resolveTranslation,
} from '../../shared/locale/resolve';
import {
  reviseTranslations,
  type TranslationLifecycle,
  translationSetProblems,
} from '../../shared/locale/translations';

const settings = { locales: ['en', 'fr', 'de', 'pt-BR'], defaultLocale: 'en' };
const t = (locale: string, status: 'draft' | 'published' = 'published') => ({ locale, status, text: locale });

describe('resolveTranslation', () => {
  it('answers with the requested locale when it has a published translation', () => {
    const resolved = resolveTranslation([t('en'), t('fr')], 'fr', settings);
    expect(resolved).toMatchObject({ locale: 'fr', fallbackUsed: false, translation: { text: 'fr' } });
  });

  it('falls back to the default locale when the requested one is missing', () => {
    const resolved = resolveTranslation([t('fr'), t('en')], 'de', settings);
    expect(resolved).toMatchObject({ locale: 'en', fallbackUsed: true });
  });

  it('falls back to the first published translation when the default has none', () => {
    const resolved = resolveTranslation([t('de', 'draft'), t('fr'), t('pt-BR')], 'de', settings);
    expect(resolved).toMatchObject({ locale: 'fr', fallbackUsed: true });
  });

  it('never answers with a draft, even in the requested or default locale', () => {
    const resolved = resolveTranslation([t('fr', 'draft'), t('en', 'draft'), t('de')], 'fr', settings);
    expect(resolved).toMatchObject({ locale: 'de', fallbackUsed: true });
  });

  it('answers nothing when nothing is published', () => {
    expect(resolveTranslation([t('en', 'draft')], 'en', settings)).toBeUndefined();
    expect(resolveTranslation([], 'en', settings)).toBeUndefined();
  });

  it('follows the rule for any translation set (property)', () => {
    const locale = fc.constantFrom(...settings.locales, 'es');
    const translation = fc.record({
      locale,
      status: fc.constantFrom<Localizable['status']>('draft', 'published'),
    });
    fc.assert(
      fc.property(fc.array(translation, { maxLength: 8 }), locale, (translations, requested) => {
        const resolved = resolveTranslation(translations, requested, settings);
        const published = translations.filter((entry) => entry.status === 'published');
        if (published.length === 0) {
          expect(resolved).toBeUndefined();
          return;
        }
        expect(resolved?.translation.status).toBe('published');
        const expected =
          published.find((entry) => entry.locale === requested) ??
          published.find((entry) => entry.locale === settings.defaultLocale) ??
          published[0];
        expect(resolved?.translation).toBe(expected);
        expect(resolved?.locale).toBe(expected?.locale);
        expect(resolved?.fallbackUsed).toBe(expected?.locale !== requested);
      }),
    );
  });
});

describe('requestedLocale', () => {
  it('is the default locale when none is requested, and the requested one when enabled', () => {
    expect(requestedLocale(settings, undefined)).toBe('en');
    expect(requestedLocale(settings, 'pt-BR')).toBe('pt-BR');
  });

  it('refuses a locale the organization has not enabled: 422 naming the parameter', () => {
    const refuse = () => requestedLocale(settings, 'es');
    expect(refuse).toThrow(ValidationError);
    try {
      refuse();
    } catch (error) {
      expect((error as ValidationError).details).toMatchObject({ field: 'locale' });
    }
  });

  it('binds a resolver to the checked locale', () => {
    const resolver = localeResolver(settings, undefined);
    expect(resolver.locale).toBe('en');
    expect(resolver.resolve([t('fr'), t('en')])).toMatchObject({ locale: 'en', fallbackUsed: false });
  });
});

type Label = { label: string };
const reviseLabels = (
  previous: readonly (TranslationLifecycle & Label)[],
  input: Parameters<typeof reviseTranslations<Label>>[1],
  now: string,
  reviewer = 'grace',
) => reviseTranslations<Label>(previous, input, (entry) => ({ label: entry.label }), { now, reviewer });

describe('reviseTranslations', () => {
  const t0 = '2026-11-01T08:00:00.000Z';
  const t1 = '2026-11-01T09:00:00.000Z';
  const t2 = '2026-11-01T10:00:00.000Z';

  it('creates each translation with an id, timestamps and the lifecycle the client sent', () => {
    const [fr] = reviseLabels(
      [],
      [{ locale: 'fr', status: 'draft', label: 'Type', sourceLocale: 'en', machineTranslatedAt: t0 }],
      t1,
    );
    expect(fr).toMatchObject({
      locale: 'fr',
      status: 'draft',
      label: 'Type',
      sourceLocale: 'en',
      machineTranslatedAt: t0,
      reviewedAt: null,
      reviewedBy: null,
      createdAt: t1,
      updatedAt: t1,
    });
    expect(fr?.id).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('keeps id and createdAt of a locale already stored, drops locales left out, and moves updatedAt only on change', () => {
    const before = reviseLabels(
      [],
      [
        { locale: 'en', status: 'published', label: 'Issue' },
        { locale: 'fr', status: 'published', label: 'Problème' },
      ],
      t0,
    );
    const after = reviseLabels(
      before,
      [
        { locale: 'en', status: 'published', label: 'Issue' },
        { locale: 'de', status: 'published', label: 'Problem' },
      ],
      t1,
    );
    expect(after.map((entry) => entry.locale)).toEqual(['en', 'de']);
    expect(after[0]).toEqual(before[0]);
    expect(after[1]?.createdAt).toBe(t1);
    const renamed = reviseLabels(after, [{ locale: 'en', status: 'published', label: 'Issue type' }], t2);
    expect(renamed[0]).toMatchObject({ id: before[0]?.id, createdAt: t0, updatedAt: t2 });
  });

  it('keeps a review while its text stays, clears it when the text changes, and records the reviewer', () => {
    const reviewed = reviseLabels(
      [],
      [{ locale: 'fr', status: 'published', label: 'Type', reviewed: true }],
      t0,
      'op-1',
    );
    expect(reviewed[0]).toMatchObject({ reviewedAt: t0, reviewedBy: 'op-1' });
    const again = reviseLabels(
      reviewed,
      [{ locale: 'fr', status: 'published', label: 'Type', reviewed: true }],
      t1,
      'op-2',
    );
    expect(again[0]).toMatchObject({ reviewedAt: t0, reviewedBy: 'op-1', updatedAt: t0 });
    const edited = reviseLabels(again, [{ locale: 'fr', status: 'published', label: 'Genre' }], t2);
    expect(edited[0]).toMatchObject({ reviewedAt: null, reviewedBy: null, updatedAt: t2 });
    const withdrawn = reviseLabels(
      reviewed,
      [{ locale: 'fr', status: 'published', label: 'Type', reviewed: false }],
      t2,
    );
    expect(withdrawn[0]).toMatchObject({ reviewedAt: null, updatedAt: t2 });
  });
});

describe('translationSetProblems', () => {
  it('names locales not enabled, second translations of a locale, and a set without a published one', () => {
    const problems = translationSetProblems(
      [
        { locale: 'es', status: 'draft' },
        { locale: 'fr', status: 'draft' },
        { locale: 'fr', status: 'draft', sourceLocale: 'fr' },
      ],
      settings,
      'translations',
      { requirePublished: true },
    );
    expect(Object.keys(problems).sort()).toEqual([
      'translations',
      'translations.0.locale',
      'translations.2.locale',
      'translations.2.sourceLocale',
    ]);
  });

  it('accepts drafts alone where a published translation is not required', () => {
    expect(
      translationSetProblems([{ locale: 'fr', status: 'draft' }], settings, 'translations', {
        requirePublished: false,
      }),
    ).toEqual({});
  });
});
