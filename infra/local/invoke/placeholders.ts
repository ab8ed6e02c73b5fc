import type { DemoCredentials } from '../seed';

/**
 * `{{NAME}}` in event files: the sample events are committed, the ids and tokens they need exist
 * only in a running stack, so they are filled in before each call. This module knows the names and
 * fills them; the values a stack must be asked for are computed in `demo-placeholders.ts`.
 */

/** `{{NAME}}` anywhere in an event file (inside JSON strings, the body string included). */
const PLACEHOLDER = /\{\{\s*([A-Z][A-Z0-9_]*)\s*\}\}/g;

export const PLACEHOLDERS: Readonly<Record<string, string>> = {
  PLATFORM_ADMIN_TOKEN: 'the platform admin token',
  DEMO_ORG_ID: 'the demo organization',
  DEMO_API_KEY: 'its unrestricted API key (svc_sk_…)',
  DEMO_ADMIN_SESSION: 'an admin operator session (svc_os_…)',
  DEMO_ADMIN_OPERATOR_ID: 'that admin operator',
  DEMO_VISITOR_TOKEN: 'a visitor token (svc_vt_…)',
  DEMO_VISITOR_ID: 'that visitor',
  DEMO_WIDGET_KEY: 'the widget key (svc_wpk_…)',
  DEMO_CONVERSATION_ID:
    "the demo organization's newest conversation (one is started for the demo visitor when it has none)",
  DEMO_EVENT_ID: "the demo organization's newest domain event",
  DEMO_EVENT_PK: 'the partition key of that event (events are spread over shard partitions by id)',
  UUID: 'a fresh random UUID, the same everywhere in one event',
  NOW: 'the current time (ISO 8601)',
  NOW_MS: 'the current time (epoch milliseconds)',
};

export function placeholdersIn(text: string): string[] {
  return [...new Set([...text.matchAll(PLACEHOLDER)].map((match) => match[1] ?? ''))];
}

/** Substitutes `{{NAME}}` with `values[NAME]`, escaped for a JSON string; unknown names are an error. */
export function fillPlaceholders(text: string, values: Readonly<Record<string, string>>): string {
  const missing = placeholdersIn(text).filter((name) => values[name] === undefined);
  if (missing.length > 0) {
    throw new Error(`no value for ${missing.map((name) => `{{${name}}}`).join(', ')}`);
  }
  return text.replace(PLACEHOLDER, (_, name: string) => JSON.stringify(values[name]).slice(1, -1));
}

/** The placeholder values a demo organization and platform token give. */
export function credentialValues(
  platformAdminToken: string | undefined,
  demo: DemoCredentials | undefined,
): Record<string, string> {
  const values: Record<string, string> = {};
  if (platformAdminToken) values.PLATFORM_ADMIN_TOKEN = platformAdminToken;
  if (demo) {
    Object.assign(values, {
      DEMO_ORG_ID: demo.organizationId,
      DEMO_API_KEY: demo.apiKey,
      DEMO_ADMIN_SESSION: demo.adminSession,
      DEMO_ADMIN_OPERATOR_ID: demo.adminOperatorId,
      DEMO_VISITOR_TOKEN: demo.visitorToken,
      DEMO_VISITOR_ID: demo.visitorId,
      DEMO_WIDGET_KEY: demo.widgetKey,
    });
  }
  return values;
}
