import { config } from '../shared/config';
import { buildOpenApi } from '../shared/http/openapi';
import type { AnyRoute, TaggedRoute } from '../shared/http/route';
import type { RouteCatalog } from '../shared/http/route-catalog';
import { ROUTE_CATALOG_DEFINE } from '../shared/http/route-catalog';
import { methodsByPath } from '../shared/http/router';
import { adminRoutes } from './admin/routes';
import { analyticsRoutes } from './analytics/routes';
import { auditRoutes } from './audit/routes';
import { chatbotRoutes } from './chatbot/routes';
import { conversationRoutes } from './conversations/routes';
import { customFieldRoutes } from './custom-fields/routes';
import { discordRoutes } from './discord/routes';
import { eventRoutes } from './events/routes';
import { exportRoutes } from './exports/routes';
import { identityRoutes } from './identity/routes';
import { kbRoutes } from './kb/routes';
import type { FunctionNeeds } from './needs';
import { operatorTeamRoutes } from './operator-teams/routes';
import { BUNDLED_ASSET_DIR, rendererFiles } from './platform/reference-assets';
import { platformRoutes } from './platform/routes';
import { searchRoutes } from './search/routes';
import { uploadRoutes } from './uploads/routes';
import { usageRoutes } from './usage/routes';
import { visitorRoutes } from './visitors/routes';
import { webhookRoutes } from './webhooks/routes';
import { widgetRoutes } from './widget/routes';

/**
 * An endpoint group, described once, like a worker (functions/workers.ts): its routes, its OpenAPI
 * tags, and everything its Lambda function needs. CDK builds and grants the function from this
 * (infra/stacks/parts/rest-api.ts), the bench and the local stack build it the same way. Its needs
 * are a worker's (FunctionNeeds), but for the table: every API group reads and writes it
 * (authentication records rate-limit windows), so no field for that.
 */
export interface RouteGroup<T extends string = string> extends Omit<FunctionNeeds, 'table'> {
  /** Also the folder name: the group's Lambda entry is `functions/<name>/handler.ts`. */
  name: string;
  description: string;
  /**
   * The OpenAPI tags its routes use, with their descriptions. A route whose tag is not here does
   * not compile; a tag two groups share is described once and referred to by the other.
   */
  tags: Readonly<Record<T, string>>;
  routes: readonly TaggedRoute<T>[];
  /**
   * Reserved concurrency: a ceiling, so one group's flood cannot starve the others (or the
   * workers) of the account's concurrency, and a floor that is always there for it. Sized for the
   * traffic shape (conversations and the widget take most).
   */
  reservedConcurrency: number;
  /**
   * Answers with Lambda response streaming (REST `responseTransferMode: STREAM`): API Gateway
   * passes bytes on as written, beyond the 10 MB buffered limit. The integration timeout (29 s)
   * bounds the time to the first byte; the function's own timeout bounds the whole answer.
   */
  streams?: { timeoutSeconds: number };
  /** Node flags on top of the runtime's (an exec wrapper: infra/function-tuning.ts). */
  nodeFlags?: readonly string[];
  /** esbuild `define`s of its bundle. */
  define?: Readonly<Record<string, string>>;
  /** Read from disk at run time, copied next to the bundle (paths relative to the project root). */
  bundledFiles?: readonly { from: string; to: string }[];
  /** Reads the route catalog its build writes next to the bundle (shared/http/route-catalog.ts). */
  bundlesRouteCatalog?: boolean;
}

/** A group, its routes' tags checked against the ones it describes. */
const group = <const T extends string>(
  definition: RouteGroup<T> & { routes: readonly TaggedRoute<NoInfer<T>>[] },
): RouteGroup => definition;

const conversationTags = {
  Conversations: 'Conversations between visitors and operators: lifecycle, assignment, snooze, follow-ups',
  Messages: 'Messages of a conversation, their edits and read state',
  Notes: 'Internal notes: operators and API keys only, never shown to visitors',
} as const;

let table: readonly RouteGroup[] | undefined;

/**
 * The route table: every endpoint of the API, grouped by the Lambda function that serves it.
 * The platform group describes the whole table (OpenAPI document), so it is given a loader of it.
 */
export function routeTable(): readonly RouteGroup[] {
  table ??= [
    group({
      name: 'platform',
      description: 'health, OpenAPI document, API reference, 404/405 answers',
      tags: { Service: 'Health and the service’s own documents' },
      routes: platformRoutes(async () => routeCatalog()),
      reservedConcurrency: 10,
      // The reference page's renderer (Swagger UI), served as files by GET /api/docs/assets/{file},
      // and the route catalog (404/405, the OpenAPI document), written at synth from this table.
      bundledFiles: Object.keys(rendererFiles).map((name) => ({
        from: `node_modules/swagger-ui-dist/${name}`,
        to: `${BUNDLED_ASSET_DIR}/${name}`,
      })),
      bundlesRouteCatalog: true,
      define: ROUTE_CATALOG_DEFINE,
    }),
    group({
      name: 'admin',
      description:
        'platform administration: organizations, API keys, operators, sessions, impersonation, AI providers',
      tags: {
        Provisioning: 'Platform administration: organizations, API keys, operators and sessions',
        Impersonation: 'Platform administration: acting as an operator, audited',
        'AI providers': 'Platform administration: the AI providers the platform’s chatbots may use',
      },
      routes: adminRoutes,
      reservedConcurrency: 10,
      // AI provider keys are sealed on create and update, opened by the provider test.
      aiProviderKeys: true,
    }),
    group({
      name: 'widget',
      description: 'widget visitor bootstrap',
      tags: { Widget: 'The chat widget’s public bootstrap' },
      routes: widgetRoutes,
      reservedConcurrency: 50,
    }),
    group({
      name: 'identity',
      description: 'the caller itself (GET /api/me)',
      tags: { Identity: 'The caller itself' },
      routes: identityRoutes,
      reservedConcurrency: 20,
    }),
    group({
      name: 'conversations',
      description: 'conversations, their messages and internal notes',
      tags: conversationTags,
      routes: conversationRoutes,
      reservedConcurrency: 100,
      // Cursor pages; messages answer their attachments with presigned GETs (signing needs read).
      cursorKeys: true,
      buckets: [['uploads', 'read']],
    }),
    group({
      name: 'search',
      description: 'conversation search (GET /api/conversations/search), from the PostgreSQL search index',
      tags: { Conversations: conversationTags.Conversations },
      routes: searchRoutes,
      // One database connection per instance: this bounds the search index's connections (with the worker's).
      reservedConcurrency: 20,
      // Cursor pages from the PostgreSQL index.
      cursorKeys: true,
      searchIndex: true,
    }),
    group({
      name: 'custom-fields',
      description: 'custom-field definitions and their localized labels and options',
      tags: {
        'Custom fields':
          'Organization-defined fields of conversations and visitors, with localized labels and options',
      },
      routes: customFieldRoutes,
      reservedConcurrency: 20,
    }),
    group({
      name: 'events',
      description: 'the events feed',
      tags: { Events: 'The events feed: every change of the organization, for catching up' },
      routes: eventRoutes,
      reservedConcurrency: 50,
      cursorKeys: true,
    }),
    group({
      name: 'webhooks',
      description: 'webhook registrations, deliveries, retries, secret rotation',
      tags: { Webhooks: 'Signed deliveries of events to your endpoints (Standard Webhooks)' },
      routes: webhookRoutes,
      reservedConcurrency: 20,
      // Test deliveries and manual retries queue their attempt directly; create and rotate seal secrets.
      sendsTo: ['webhook-deliveries'],
      webhookSecrets: 'seal',
    }),
    group({
      name: 'kb',
      description: 'knowledge base: localized collections and articles, and relevance search',
      tags: {
        'Knowledge base':
          'Localized help-center collections and articles, and relevance search over the published articles',
      },
      routes: kbRoutes,
      reservedConcurrency: 20,
    }),
    group({
      name: 'operator-teams',
      description: 'operator teams and their members, and the operators listing',
      tags: {
        'Operator teams':
          'Teams of operators that conversations are routed to, by priority, and their members',
        Operators: 'The organization’s operators: the ids API keys name as `operatorId`',
      },
      routes: operatorTeamRoutes,
      reservedConcurrency: 20,
    }),
    group({
      name: 'exports',
      description: 'conversation exports and transcripts (streamed responses), PDF transcript jobs',
      tags: {
        Exports:
          'Conversation exports (streamed CSV or JSON), transcripts (CSV, PDF jobs, e-mail) and export jobs',
      },
      routes: exportRoutes,
      reservedConcurrency: 20,
      // PDF jobs queued for the worker, their files served by presigned URL (signing needs read on
      // the objects); transcripts by e-mail.
      sendsTo: ['pdf-jobs'],
      buckets: [['exports', 'read']],
      email: true,
      streams: { timeoutSeconds: 600 },
      // Lambda sizes the young generation from memory (semi-spaces of 25 MB at 512 MB), and a
      // streamed export, which allocates a page's short-lived strings and drops them, lets V8 grow
      // it to the limit; with 1 MB semi-spaces it scavenges more often and peaks far lower
      // (docs/decisions.md).
      nodeFlags: ['--max-semi-space-size=1'],
    }),
    group({
      name: 'chatbot',
      description: 'chatbot configuration',
      tags: { Chatbot: 'The organization’s chatbot: its configuration (rules, intent policies, schedule)' },
      routes: chatbotRoutes,
      reservedConcurrency: 10,
    }),
    group({
      name: 'discord',
      description: 'Discord notification channels (looked up through Discord at creation)',
      tags: {
        Discord: 'Discord channels that receive notifications of new, assigned and closed conversations',
      },
      routes: discordRoutes,
      reservedConcurrency: 5,
      // Adding a channel looks it up through Discord's API with the bot token.
      discordToken: true,
    }),
    group({
      name: 'analytics',
      description:
        'survey (CSAT) responses, CSAT analytics and the analytics export, from daily aggregates (part-days item by item)',
      tags: {
        Surveys: 'Survey (CSAT) responses of visitors about their conversations',
        Analytics:
          'CSAT figures from daily aggregates kept as the data is written, and the analytics export: exactly the window asked for, whole days from those aggregates, part-days counted item by item',
      },
      routes: analyticsRoutes,
      reservedConcurrency: 20,
    }),
    group({
      name: 'uploads',
      description: 'attachments: presigned uploads to storage, their checks, fresh download URLs',
      tags: {
        Uploads:
          'Files for messages: presigned uploads straight to storage, checked (size, type by magic numbers, SHA-256) before they are ready',
      },
      routes: uploadRoutes,
      // Two calls per file (create, complete).
      reservedConcurrency: 15,
      // Presigned PUTs (signing needs put), the checks of complete (head, ranged and streamed reads,
      // a copy under files/, deletion of what is refused) and presigned GETs.
      buckets: [['uploads', 'check']],
    }),
    group({
      name: 'audit',
      description: 'the audit log (read-only)',
      tags: {
        'Audit log':
          'Who did what, and when: key, operator, webhook, export, bulk, visitor and configuration actions, impersonation marked; read-only, kept 365 days',
      },
      routes: auditRoutes,
      // Read by administrators only.
      reservedConcurrency: 5,
      cursorKeys: true,
    }),
    group({
      name: 'usage',
      description:
        'usage per organization: the organization’s own, one organization’s and the ranking, for the platform admin',
      tags: {
        Usage:
          'What each organization did, per day or month: conversations, messages, events, webhook deliveries, exports, uploads, searches, API requests and DynamoDB units',
      },
      routes: usageRoutes,
      // Read by administrators: a report, not traffic.
      reservedConcurrency: 5,
    }),
    group({
      name: 'visitors',
      description: 'visitors as contacts: listing, incremental sync, profile updates, upsert by external id',
      tags: {
        Visitors:
          'Visitors as contacts: profiles with external ids, upsert, merge, erasure (GDPR) and incremental sync',
      },
      routes: visitorRoutes,
      reservedConcurrency: 10,
      // Listings and incremental sync are cursor pages.
      cursorKeys: true,
    }),
  ];
  return table;
}

/** The group of that name; a name not in the table is a mistake. */
export function routeGroup(name: string): RouteGroup {
  const found = routeTable().find((candidate) => candidate.name === name);
  if (!found) throw new Error(`No route group ${name}`);
  return found;
}

/**
 * Every OpenAPI tag with its description, from the groups that describe them. Two groups sharing a
 * tag must describe it alike (one refers to the other's).
 */
export function apiTags(): Readonly<Record<string, string>> {
  const tags: Record<string, string> = {};
  for (const { name, tags: own } of routeTable())
    for (const [tag, description] of Object.entries<string>(own)) {
      if (tags[tag] !== undefined && tags[tag] !== description)
        throw new Error(`Tag ${tag}: group ${name} describes it differently`);
      tags[tag] = description;
    }
  return tags;
}

/** The group whose function answers requests no route matches (API Gateway's `ANY` fallbacks). */
export const fallbackGroup = 'platform';

export const groupEntry = (name: string): string => `functions/${name}/handler.ts`;

export function allRoutes(): readonly AnyRoute[] {
  return routeTable().flatMap((group) => group.routes);
}

const catalogs = new Map<string, RouteCatalog>();

/**
 * The whole API as the platform function answers it (see shared/http/route-catalog.ts), for a
 * service version: the running one, or the one the CDK app deploys.
 */
export function routeCatalog(version: string = config.serviceVersion): RouteCatalog {
  let catalog = catalogs.get(version);
  if (!catalog) {
    const routes = allRoutes();
    catalog = {
      methods: methodsByPath(routes),
      openApi: buildOpenApi(routes, version, apiTags()) as Record<string, unknown>,
    };
    catalogs.set(version, catalog);
  }
  return catalog;
}
