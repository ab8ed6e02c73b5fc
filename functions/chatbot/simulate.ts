import { simulate } from '../../shared/chatbot/simulate';
import { clock } from '../../shared/clock';
import { anyAiProviderEnabled } from '../../shared/db/ai-providers';
import { connections } from '../../shared/db/connections';
import { kbArticles } from '../../shared/db/kb';
import { ok, route } from '../../shared/http/route';
import { rankArticles } from '../../shared/kb/search';
import { requestedLocale } from '../../shared/locale/resolve';
import { chatbotSimulation, simulateChatbotBody } from '../../shared/schemas/chatbot';

/** The organization module that lets the bot answer with a model. */
export const AI_ASSISTANT_MODULE = 'ai_assistant';

const simulationExample = {
  outcome: 'knowledge_answer' as const,
  intent: 'billing',
  consumesAiCredit: false,
  rule: {
    id: '019a7c21-0c00-7a11-8b22-3c33d44e5501',
    name: 'Refunds',
    intent: 'billing',
    actions: ['answer_from_knowledge'],
  },
  intentPolicy: {
    intent: 'billing',
    handling: 'answer' as const,
    tag: 'billing',
    priority: 'normal' as const,
  },
  knowledge: {
    confidence: 0.6123,
    threshold: 0.35,
    sufficient: true,
    articles: [
      {
        articleId: '019a7c21-0c00-7a11-8b22-3c33d44e5601',
        title: 'Refunds',
        slug: 'refunds',
        score: 0.6123,
      },
      {
        articleId: '019a7c21-0c00-7a11-8b22-3c33d44e5602',
        title: 'Returning a parcel',
        slug: 'returning-a-parcel',
        score: 0.2047,
      },
    ],
  },
  gates: {
    chatbotEnabled: true,
    withinSchedule: true,
    operatorAvailable: false,
    aiFeatureEnabled: true,
    providerAvailable: true,
  },
};

export const simulateChatbot = route({
  method: 'POST',
  path: '/api/chatbot/simulate',
  operationId: 'simulateChatbot',
  summary: 'Simulate the chatbot on a message',
  description: [
    'What the bot would do with `message`, and why, without calling any model (nothing is stored either).',
    '`rule` is the first rule of the configuration with a keyword in the message, as whole words, case and accents aside ("Remboursement!" holds "remboursement", "refunds" does not hold "refund"); a keyword in Chinese, Japanese or Korean is found anywhere in the message. When none matches: the built-in rule `{ name: "Default", intent: "general", actions: ["answer_from_knowledge"] }`, whose `id` never changes for the organization. `intent` is the rule\'s intent; `intentPolicy` the policy for it, else `{ handling: "answer", tag: <intent>, priority: "low" }`.',
    "`knowledge`: the organization's published articles, each read in `locale` (else the default locale, else its first published translation), scored against the message as `GET /api/kb/articles?q=` scores (0..1); `confidence` is the best score (0 when none), `sufficient` is `confidence >= threshold`, `articles` the best three scoring above 0, best first.",
    "`gates`: `chatbotEnabled` (the configuration), `withinSchedule` (now, on the wall clock of the schedule's time zone; a day whose `to` is earlier than its `from` runs past midnight), `operatorAvailable` (an operator of the organization holds a realtime connection; a closed one counts until a push finds it gone), `aiFeatureEnabled` (module `ai_assistant`), `providerAvailable` (an enabled platform AI provider exists; each instance trusts what it read for 10 s).",
    '`outcome`, the first that applies: `disabled`, `outside_schedule`, `handoff` (the policy says so), `knowledge_answer` (sufficient), `ai_answer` (AI feature and provider available), `handoff` (an operator is available), else `fallback_message`. `consumesAiCredit` is true only for `ai_answer`.',
    'A `locale` the organization has not enabled is 422 (`details.field = "locale"`). The configuration is the one authentication read with the organization: a change through another instance applies here within 10 s.',
  ].join('\n\n'),
  tag: 'Chatbot',
  scope: 'chatbot:read',
  callers: ['apiKey', 'operator'],
  body: simulateChatbotBody,
  response: { status: 200, schema: chatbotSimulation, description: 'The decision and its reasons' },
  examples: {
    request: { message: 'How do I get a refund?', locale: 'en' },
    response: simulationExample,
  },
  handle: async ({ caller, organization, body }) => {
    // 422 before anything is read.
    const locale = requestedLocale(organization, body.locale);
    const [articles, operatorAvailable, providerAvailable] = await Promise.all([
      kbArticles.published(caller.orgId),
      connections.operatorConnected(caller.orgId),
      anyAiProviderEnabled(),
    ]);
    const ranked = rankArticles(articles, body.message, {
      locale,
      defaultLocale: organization.defaultLocale,
    }).map((hit) => ({
      articleId: hit.article.id,
      title: hit.resolved.translation.title,
      slug: hit.article.slug,
      score: hit.score,
    }));
    return ok(
      simulate({
        orgId: caller.orgId,
        config: organization.chatbot,
        message: body.message,
        ranked,
        operatorAvailable,
        aiFeatureEnabled: organization.modules.includes(AI_ASSISTANT_MODULE),
        providerAvailable,
        nowMs: clock.nowMs(),
      }),
    );
  },
});
