import { config } from '../shared/config';
import { buildOpenApi } from '../shared/http/openapi';
import type { AnyRoute } from '../shared/http/route';
import type { RouteCatalog } from '../shared/http/route-catalog';
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
import { operatorTeamRoutes } from './operator-teams/routes';
import { platformRoutes } from './platform/routes';
import { searchRoutes } from './search/routes';
import { uploadRoutes } from './uploads/routes';
import { visitorRoutes } from './visitors/routes';
import { webhookRoutes } from './webhooks/routes';
import { widgetRoutes } from './widget/routes';

export interface RouteGroup {
  /** Also the folder name: the group's Lambda entry is `functions/<name>/handler.ts`. */
  name: string;
  description: string;
  routes: readonly AnyRoute[];
}

let table: readonly RouteGroup[] | undefined;

/**
 * The route table: every endpoint of the API, grouped by the Lambda function that serves it.
 * The platform group describes the whole table (OpenAPI document), so it is given a loader of it.
 */
export function routeTable(): readonly RouteGroup[] {
  table ??= [
    {
      name: 'platform',
      description: 'health, OpenAPI document, API reference, 404/405 answers',
      routes: platformRoutes(async () => routeCatalog()),
    },
    {
      name: 'admin',
      description:
        'platform administration: organizations, API keys, operators, sessions, impersonation, AI providers',
      routes: adminRoutes,
    },
    { name: 'widget', description: 'widget visitor bootstrap', routes: widgetRoutes },
    { name: 'identity', description: 'the caller itself (GET /api/me)', routes: identityRoutes },
    {
      name: 'conversations',
      description: 'conversations, their messages and internal notes',
      routes: conversationRoutes,
    },
    {
      name: 'search',
      description: 'conversation search (GET /api/conversations/search), from the PostgreSQL search index',
      routes: searchRoutes,
    },
    {
      name: 'custom-fields',
      description: 'custom-field definitions and their localized labels and options',
      routes: customFieldRoutes,
    },
    { name: 'events', description: 'the events feed', routes: eventRoutes },
    {
      name: 'webhooks',
      description: 'webhook registrations, deliveries, retries, secret rotation',
      routes: webhookRoutes,
    },
    {
      name: 'kb',
      description: 'knowledge base: localized collections and articles, and relevance search',
      routes: kbRoutes,
    },
    {
      name: 'operator-teams',
      description: 'operator teams and their members, and the operators listing',
      routes: operatorTeamRoutes,
    },
    {
      name: 'exports',
      description: 'conversation exports and transcripts (streamed responses), PDF transcript jobs',
      routes: exportRoutes,
    },
    { name: 'chatbot', description: 'chatbot configuration', routes: chatbotRoutes },
    {
      name: 'discord',
      description: 'Discord notification channels (looked up through Discord at creation)',
      routes: discordRoutes,
    },
    {
      name: 'analytics',
      description:
        'survey (CSAT) responses, CSAT analytics and the analytics export, from daily aggregates (part-days item by item)',
      routes: analyticsRoutes,
    },
    {
      name: 'uploads',
      description: 'attachments: presigned uploads to storage, their checks, fresh download URLs',
      routes: uploadRoutes,
    },
    { name: 'audit', description: 'the audit log (read-only)', routes: auditRoutes },
    {
      name: 'visitors',
      description: 'visitors as contacts: listing, incremental sync, profile updates, upsert by external id',
      routes: visitorRoutes,
    },
  ];
  return table;
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
      openApi: buildOpenApi(routes, version) as Record<string, unknown>,
    };
    catalogs.set(version, catalog);
  }
  return catalog;
}
