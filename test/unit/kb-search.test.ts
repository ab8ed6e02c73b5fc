import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { keys } from '../../shared/db/keys';
import { uuidv7 } from '../../shared/ids';
import { foldText, MAX_QUERY_TERMS, rankArticles, tokenize } from '../../shared/kb/search';

type Status = 'draft' | 'published';
const translation = (locale: string, title: string, content: string, status: Status = 'published') => ({
  locale,
  status,
  title,
  content,
});
const article = (id: string, ...translations: ReturnType<typeof translation>[]) => ({ id, translations });
const english = { locale: 'en', defaultLocale: 'en' };
const ids = (ranked: { article: { id: string } }[]) => ranked.map((hit) => hit.article.id);

describe('tokenize', () => {
  it('folds case, accents and ligatures, and drops the language’s function words', () => {
    expect(tokenize('How do I reset MY Password?', 'en')).toEqual(['reset', 'password']);
    expect(tokenize('Élève ÉLÈVE eleve', 'fr')).toEqual(['eleve', 'eleve', 'eleve']);
    expect(tokenize('Straße Œuvre', 'de')).toEqual(['strasse', 'oeuvre']);
    expect(foldText('Ça Ñandú')).toBe('ca nandu');
  });

  it('folds a plural -s only where the language forms plurals so', () => {
    expect(tokenize('passwords address bus', 'en')).toEqual(['password', 'address', 'bus']);
    expect(tokenize('contraseñas', 'es')).toEqual(['contrasena']);
    // German plurals are not -s: "status" stays whole.
    expect(tokenize('Status Lieferungs', 'de')).toEqual(['status', 'lieferungs']);
  });

  it('keeps numbers, drops single letters, and reads Chinese, Japanese and Korean as character pairs', () => {
    expect(tokenize('Step 2: a b c', 'en')).toEqual(['step', '2']);
    expect(tokenize('密码重置', 'zh')).toEqual(['密码', '码重', '重置']);
    expect(tokenize('iPhone用', 'ja')).toEqual(['iphone', '用']);
    expect(tokenize('비밀번호', 'ko')).toEqual(['비밀', '밀번', '번호']);
  });

  it('is stable under folding: any text tokenizes the same once folded', () => {
    fc.assert(
      fc.property(
        fc.string({ maxLength: 60 }),
        fc.constantFrom('en', 'fr', 'de', 'zh', undefined),
        (text, locale) => {
          expect(tokenize(foldText(text), locale)).toEqual(tokenize(text, locale));
        },
      ),
    );
  });
});

describe('rankArticles (BM25)', () => {
  const corpus = [
    article(
      'reset',
      translation('en', 'Reset your password', 'Open settings, choose security and reset the password.'),
    ),
    article(
      'track',
      translation('en', 'Track your order', 'Follow the tracking link in the confirmation e-mail.'),
    ),
    article(
      'billing',
      translation(
        'en',
        'Invoices',
        'Download invoices from the billing page. Your password is never on them.',
      ),
    ),
    article('draft', translation('en', 'Password policy', 'Passwords need twelve characters.', 'draft')),
  ];

  it('ranks the article about the query first, leaves out those sharing no term, and scores within 0..1', () => {
    const ranked = rankArticles(corpus, 'how do I reset my password', english);
    expect(ids(ranked)).toEqual(['reset', 'billing']);
    const [best, second] = ranked;
    expect(best?.score).toBeGreaterThan(second?.score ?? 1);
    for (const hit of ranked) {
      expect(hit.score).toBeGreaterThan(0);
      expect(hit.score).toBeLessThanOrEqual(1);
    }
  });

  it('never reads a draft translation: an article with nothing published is not found', () => {
    expect(ids(rankArticles(corpus, 'password policy twelve characters', english))).not.toContain('draft');
  });

  it('weighs the title over the content, and repeated terms over single mentions', () => {
    const ranked = rankArticles(
      [
        article('content', translation('en', 'Account', 'How to change the e-mail of your account profile.')),
        article('title', translation('en', 'Profile', 'How to change the e-mail of your account.')),
      ],
      'profile',
      english,
    );
    expect(ids(ranked)).toEqual(['title', 'content']);
  });

  it('normalizes: one mention of every query term in content of average length is about 0.45', () => {
    const ranked = rankArticles(
      [
        article('one', translation('en', 'Alpha', 'delivery')),
        article('two', translation('en', 'Beta', 'other')),
      ],
      'delivery',
      english,
    );
    expect(ranked[0]?.score).toBeCloseTo(1 / 2.2, 2);
  });

  it('reads each article in its resolved locale, and the query in the requested one', () => {
    const bilingual = [
      article('fr-only', translation('fr', 'Réinitialiser le mot de passe', 'Ouvrez les réglages.')),
      article(
        'both',
        translation('en', 'Reset the password', 'Open settings.'),
        translation('fr', 'Changer le mot de passe', 'Ouvrez le profil.'),
      ),
    ];
    const french = rankArticles(bilingual, 'reinitialiser mot de passe', {
      locale: 'fr',
      defaultLocale: 'en',
    });
    expect(ids(french)).toEqual(['fr-only', 'both']);
    expect(french[0]?.resolved).toMatchObject({ locale: 'fr', fallbackUsed: false });
    // Asked in German (nothing published): the default locale answers, then the first published one.
    const german = rankArticles(bilingual, 'password', { locale: 'de', defaultLocale: 'en' });
    expect(ids(german)).toEqual(['both']);
    expect(german[0]?.resolved).toMatchObject({ locale: 'en', fallbackUsed: true });
  });

  it('finds nothing for a query of function words only, an empty corpus, or unknown terms', () => {
    expect(rankArticles(corpus, 'how do I', english)).toEqual([]);
    expect(rankArticles([], 'password', english)).toEqual([]);
    expect(rankArticles(corpus, 'pizza', english)).toEqual([]);
  });

  it('keeps the given order for equal scores and reads at most MAX_QUERY_TERMS terms', () => {
    const twins = [
      article('a', translation('en', 'Same', 'text')),
      article('b', translation('en', 'Same', 'text')),
    ];
    expect(ids(rankArticles(twins, 'same', english))).toEqual(['a', 'b']);
    const noise = Array.from({ length: MAX_QUERY_TERMS }, (_, i) => `noise${i}`).join(' ');
    expect(rankArticles(twins, `${noise} same`, english)).toEqual([]);
  });

  it('always ranks best first with scores in (0, 1]', () => {
    const word = fc.constantFrom(
      'order',
      'parcel',
      'refund',
      'password',
      'invoice',
      'delivery',
      'late',
      'reset',
    );
    const text = fc.array(word, { minLength: 1, maxLength: 12 }).map((words) => words.join(' '));
    fc.assert(
      fc.property(fc.array(fc.tuple(text, text), { maxLength: 8 }), text, (docs, query) => {
        const ranked = rankArticles(
          docs.map(([title, content], i) => article(String(i), translation('en', title, content))),
          query,
          english,
        );
        for (let i = 0; i < ranked.length; i++) {
          const score = ranked[i]?.score ?? 0;
          expect(score).toBeGreaterThan(0);
          expect(score).toBeLessThanOrEqual(1);
          if (i > 0) expect(score).toBeLessThanOrEqual(ranked[i - 1]?.score ?? 1);
        }
      }),
    );
  });
});

describe('knowledge-base keys', () => {
  it('start every partition key, on the table and the indexes, with the organization', () => {
    const orgId = uuidv7();
    const id = uuidv7();
    const indexes = keys.kbArticleIndexes({ orgId, id, collectionId: uuidv7(), status: 'published' });
    const partitions = [
      keys.kbCollection(orgId, id).pk,
      keys.kbCollectionKey(orgId, 'Shipping').pk,
      keys.kbArticle(orgId, id).pk,
      keys.kbArticleSlug(orgId, 'Track-Order').pk,
      keys.kbTotals(orgId).pk,
      indexes.gsi1pk,
      indexes.gsi2pk,
      indexes.gsi3pk,
      keys.kbArticleListPartition.collection(orgId, id).pk,
      keys.kbArticleListPartition.status(orgId, 'draft').pk,
      keys.kbArticleListPartition.collectionStatus(orgId, id, 'draft').pk,
    ];
    for (const pk of partitions) expect(pk.startsWith(`ORG#${orgId}#KB`), pk).toBe(true);
    // Guards are case-insensitive, and their prefixes never match a listing's.
    expect(keys.kbArticleSlug(orgId, 'Track-Order').sk).toBe('ARTICLE_SLUG#track-order');
    expect(keys.kbArticleSlug(orgId, 'x').sk.startsWith(keys.kbArticlePrefix)).toBe(false);
    expect(keys.kbCollectionKey(orgId, 'x').sk.startsWith(keys.kbCollectionPrefix)).toBe(false);
  });
});
