/** Texts several knowledge-base routes state in the API description. */

export const RESOLUTION = [
  'Resolution (the same for every localized resource): a collection’s `name` and `description`, an article’s `title` and `content`, come from one translation, the published one in the requested `locale`, else in the organization’s default locale, else the first published one in stored order; `locale` names the one that answered and `fallbackUsed` is true when the requested locale (the default locale when none is requested) had none.',
  'Drafts never answer. A `locale` the organization has not enabled is 422 naming `locale`. `translations` always lists every stored translation, drafts included, with its lifecycle (`status`, `sourceLocale`, `machineTranslatedAt`, `reviewedAt`, `reviewedBy`, timestamps).',
].join(' ');

export const TRANSLATION_RULES = [
  '`translations` (one per locale the organization has enabled, at most 100; a locale not enabled, or a second translation of one, is 422 naming it) needs at least one `published` entry, so every read has an answer.',
  'Lifecycle: `sourceLocale` and `machineTranslatedAt` are recorded as sent (a machine-translation pipeline sets them); `reviewed: true` records `reviewedAt` (now) and `reviewedBy` (the operator, or the API key’s id), `reviewed: false` withdraws a review, and a review lasts while the text it confirmed stays the same. `createdAt`, `updatedAt` and the ids are the service’s; a locale already stored keeps its id.',
].join(' ');

export const ARTICLE_RULES = [
  '`slug` (letters, digits, `.`, `_`, `-`; at most 128) is unique in the organization whatever its case: a duplicate is 409 `CONFLICT` with `details.reason = "slug_taken"`, also when two writes of one slug race (one wins, the other is 409).',
  '`collectionId` must be a collection of the organization (another, or one deleted, is 422 naming `collectionId`). `status`: `draft` (default), `published` (counted in the collection’s `articleCount`, found by search) or `archived`.',
  'Each translation has a `title` (≤ 200 characters) and `content` (≤ 50 000): plain text, sanitized like messages (tags are removed with the whole of dangerous elements such as scripts and styles, the rest of the text kept); a text left empty by sanitizing is 422 naming it.',
  'An article is at most 300 000 bytes as JSON (422 `details.reason = "too_large"`), and all articles of an organization at most 8 000 000 bytes together (409 `details.reason = "knowledge_base_budget_exceeded"`).',
].join(' ');

export const SEARCH = [
  'Search (`q`, ≤ 500 characters): the published articles (of `collectionId`, when given; `status` may only be `published` then) ranked by relevance, best first, each with a `score` from 0 to 1; articles sharing no term with `q` are left out, and `pagination.totalItems` counts the matches. Each article is read in the locale resolution picks for it. Scoring is BM25 over the title (counted twice) and the content, with case, accents and ligatures folded, common function words of the text’s language ignored, a plural -s folded where the language forms plurals so, and Chinese, Japanese and Korean text read as character pairs. The score is BM25 divided by the best any article could score for the query’s terms that occur in the knowledge base: about 0.45 for an article that mentions each of them once in its content, more as they repeat or appear in the title. The chatbot simulation scores knowledge the same way. Search, like the filtered lists, reads eventually consistent copies: a write shows there within about a second, while a read by id shows it at once.',
  'How it scales: a search reads the organization’s published articles on every request (one DynamoDB Query per 1 MB of articles, drafts and archived ones read and dropped) and ranks them in memory, so its cost grows with the knowledge base, not with the query. That is bounded: an organization’s articles are at most 8 MB together, about 1,600 articles of 5 KB (the usual help center, a few hundred articles of a few KB, is one or two Query pages and some 20 ms of ranking: about 0.1 ms per article of 800 words). An organization that outgrows it needs an inverted index kept beside the table: OpenSearch fed by the table’s stream (article writes already pass through it), answering the same query with the same fields; this endpoint’s contract would not change.',
].join('\n\n');
