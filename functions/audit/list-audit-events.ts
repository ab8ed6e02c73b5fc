import { auditLog } from '../../shared/db/audit-log';
import { ValidationError } from '../../shared/errors';
import { ok, route } from '../../shared/http/route';
import {
  type AuditEventsQuery,
  auditEventPage,
  auditEventsQuery,
  auditEventTypes,
} from '../../shared/schemas/audit';
import { cursorExample, ids } from '../../shared/schemas/examples';

const utc = (instant: string | undefined) =>
  instant === undefined ? undefined : new Date(instant).toISOString();

const description = (whose: string) =>
  [
    `${whose}, newest first, as a cursor page (\`limit\` default 50, at most 100). Read-only; entries are kept 365 days.`,
    '',
    `Recorded in the same commit as the action they describe, so an entry is readable as soon as the action’s answer is sent (\`export.streamed\`: once the stream ends). Types: ${auditEventTypes.map((type) => `\`${type}\``).join(', ')}. An action done while the platform administrator impersonates an operator keeps its own type, names the operator as \`actor\` and sets \`impersonatedBy\` (the platform actor’s id); every request of such a session is also recorded as \`impersonation.request\`.`,
    '',
    'Filters combine: `type`, `actorType`, `actorId`, `targetType`, `targetId`, `since` (inclusive) and `until` (exclusive). A filtered page may come back shorter than `limit` with a cursor: continue until `nextCursor` is null.',
  ].join('\n');

const example = {
  data: [
    {
      id: ids.event,
      type: 'webhook.created',
      at: '2026-11-21T10:00:00.000Z',
      actor: { type: 'operator' as const, id: ids.operator, name: 'Grace Hopper' },
      impersonatedBy: null,
      target: { type: 'webhook', id: ids.webhook },
      details: { url: 'https://hooks.example.com/support', events: ['conversation.created'] },
    },
  ],
  nextCursor: cursorExample,
};

function filtersOf(query: AuditEventsQuery) {
  const since = utc(query.since);
  const until = utc(query.until);
  if (since !== undefined && until !== undefined && since >= until)
    throw ValidationError.field('until', '`until` must be later than `since`');
  return {
    type: query.type,
    actorType: query.actorType,
    actorId: query.actorId,
    targetType: query.targetType,
    targetId: query.targetId,
    since,
    until,
  };
}

/** The platform's own log: AI providers, which belong to no organization. */
export const listPlatformAuditEvents = route({
  method: 'GET',
  path: '/api/admin/audit-events',
  operationId: 'listPlatformAuditEvents',
  summary: 'Platform audit log',
  description: description('The platform’s own audit log (AI providers, which belong to no organization)'),
  tag: 'Audit log',
  callers: ['platform'],
  query: auditEventsQuery,
  response: { status: 200, schema: auditEventPage, description: 'A page of audit entries, newest first' },
  errors: [400],
  examples: {
    response: {
      data: [
        {
          id: ids.event,
          type: 'ai_provider.created',
          at: '2026-11-21T10:00:00.000Z',
          actor: { type: 'platform', id: 'platform-admin', name: 'Platform administrator' },
          impersonatedBy: null,
          target: { type: 'ai_provider', id: ids.webhook },
          details: { name: 'OpenAI', kind: 'openai-compatible' },
        },
      ],
      nextCursor: null,
    },
  },
  handle: async ({ query }) =>
    ok(await auditLog.list(null, filtersOf(query), { cursor: query.cursor, limit: query.limit })),
});

export const listAuditEvents = route({
  method: 'GET',
  path: '/api/audit-events',
  operationId: 'listAuditEvents',
  summary: 'Audit log',
  description: `${description('The organization’s audit log')} Administrators only: operator sessions of the \`admin\` role, API keys with \`audit:read\`.`,
  tag: 'Audit log',
  scope: 'audit:read',
  adminOnly: true,
  callers: ['apiKey', 'operator'],
  query: auditEventsQuery,
  response: { status: 200, schema: auditEventPage, description: 'A page of audit entries, newest first' },
  errors: [400],
  examples: { response: example },
  handle: async ({ caller, query }) =>
    ok(await auditLog.list(caller.orgId, filtersOf(query), { cursor: query.cursor, limit: query.limit })),
});
