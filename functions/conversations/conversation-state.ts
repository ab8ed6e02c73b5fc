import type { OrgCaller } from '../../shared/auth/caller';
import { clock } from '../../shared/clock';
import { actorOf } from '../../shared/conversations/actor';
import { type LocaleSetting, type StoredConversation, withChange } from '../../shared/conversations/state';
import { assignmentHistory } from '../../shared/db/audit';
import { conversations, toConversation } from '../../shared/db/conversations';
import { ValidationError } from '../../shared/errors';
import { etagOf, ifMatchVersion } from '../../shared/http/if-match';
import { ok, route } from '../../shared/http/route';
import { idParams, successResult } from '../../shared/schemas/common';
import {
  assignmentHistory as assignmentHistorySchema,
  conversation,
  followUpBody,
  followUpKeys,
  localeBody,
  localeSetting,
  snoozeBody,
} from '../../shared/schemas/conversation';
import { conversationExample, ids } from '../../shared/schemas/examples';
import { assertFreeJson } from '../../shared/schemas/free-json';
import { accessRules, loadConversation } from './access';

const bumped = (current: StoredConversation, changes: Partial<StoredConversation>) =>
  withChange(current, changes, clock.nowIso());

const callerId = (caller: OrgCaller) => actorOf(caller).id;

export const setLocale = route({
  method: 'PATCH',
  path: '/api/conversations/{id}/locale',
  operationId: 'setConversationLocale',
  summary: 'Set the conversation locale',
  description:
    'Only a locale enabled for the organization (422 otherwise). API keys and operators produce `source: "operator_override"`, a visitor (own conversation only) `"visitor_override"`. `locked: true` keeps automatic detection from replacing the choice. Also sets the conversation’s `language`.',
  tag: 'Conversations',
  scope: 'conversations:write',
  callers: ['apiKey', 'operator', 'visitor'],
  params: idParams,
  body: localeBody,
  response: { status: 200, schema: localeSetting, description: 'The locale setting' },
  errors: [404],
  examples: {
    request: { locale: 'fr', locked: true },
    response: {
      locale: 'fr',
      source: 'operator_override',
      locked: true,
      updatedAt: '2026-11-21T10:05:00.000Z',
    },
  },
  handle: async ({ caller, organization, params, body }) => {
    if (!organization.locales.includes(body.locale)) {
      throw ValidationError.field('locale', `Enabled locales: ${organization.locales.join(', ')}`);
    }
    const after = await conversations.update(
      caller.orgId,
      params.id,
      (current) => {
        const locale: LocaleSetting = {
          locale: body.locale,
          source: caller.kind === 'visitor' ? 'visitor_override' : 'operator_override',
          locked: body.locked ?? current.locale?.locked ?? false,
          updatedAt: clock.nowIso(),
        };
        const unchanged =
          current.locale?.locale === locale.locale &&
          current.locale.source === locale.source &&
          current.locale.locked === locale.locked;
        return unchanged ? undefined : bumped(current, { locale, language: body.locale });
      },
      { actor: actorOf(caller), check: accessRules(caller, organization) },
    );
    return ok(after.locale);
  },
});

export const snooze = route({
  method: 'POST',
  path: '/api/conversations/{id}/snooze',
  operationId: 'snoozeConversation',
  summary: 'Snooze a conversation',
  description:
    '`until` must be in the future (422 otherwise). The status becomes `snoozed`; the reason goes to the audit log, the `conversation.snoozed` event (`data.snoozeReason`) and the realtime snooze notice.',
  tag: 'Conversations',
  scope: 'conversations:write',
  callers: ['apiKey', 'operator'],
  params: idParams,
  body: snoozeBody,
  versioned: 'write',
  response: { status: 200, schema: conversation, description: 'The conversation after the change' },
  errors: [404, 412],
  examples: {
    request: { until: '2026-11-22T09:00:00.000Z', reason: 'Waiting for the courier' },
    response: {
      ...conversationExample,
      status: 'snoozed',
      snoozedUntil: '2026-11-22T09:00:00.000Z',
      version: 5,
      updatedAt: '2026-11-21T10:06:00.000Z',
    },
  },
  handle: async ({ caller, organization, params, body, headers }) => {
    if (Date.parse(body.until) <= clock.nowMs())
      throw ValidationError.field('until', 'until must be in the future');
    const after = await conversations.update(
      caller.orgId,
      params.id,
      (current) => bumped(current, { status: 'snoozed', snoozedUntil: body.until }),
      {
        actor: actorOf(caller),
        snoozeReason: body.reason || null,
        ifMatch: ifMatchVersion(headers),
        check: accessRules(caller, organization),
      },
    );
    return ok(toConversation(after), { ETag: etagOf(after.version) });
  },
});

export const unsnooze = route({
  method: 'DELETE',
  path: '/api/conversations/{id}/snooze',
  operationId: 'unsnoozeConversation',
  summary: 'End a snooze',
  description:
    'Status back to `open`, `snoozedUntil` null. A conversation that is not snoozed is returned unchanged.',
  tag: 'Conversations',
  scope: 'conversations:write',
  callers: ['apiKey', 'operator'],
  params: idParams,
  versioned: 'write',
  response: { status: 200, schema: conversation, description: 'The conversation after the change' },
  errors: [404, 412],
  examples: {
    response: { ...conversationExample, version: 6, updatedAt: '2026-11-21T10:07:00.000Z' },
  },
  handle: async ({ caller, organization, params, headers }) => {
    const after = await conversations.update(
      caller.orgId,
      params.id,
      (current) =>
        current.status === 'snoozed' ? bumped(current, { status: 'open', snoozedUntil: null }) : undefined,
      { actor: actorOf(caller), ifMatch: ifMatchVersion(headers), check: accessRules(caller, organization) },
    );
    return ok(toConversation(after), { ETag: etagOf(after.version) });
  },
});

export const setFollowUp = route({
  method: 'PUT',
  path: '/api/conversations/{id}/follow-up',
  operationId: 'setFollowUp',
  summary: 'Set a follow-up reminder',
  description:
    'Stores `metadata.followUpAt`, `metadata.followUpNote` (null without a note) and `metadata.followUpBy` (the caller’s operator or API key id). `remindAt` must be in the future.',
  tag: 'Conversations',
  scope: 'conversations:write',
  callers: ['apiKey', 'operator'],
  params: idParams,
  body: followUpBody,
  versioned: 'write',
  response: { status: 200, schema: conversation, description: 'The conversation after the change' },
  errors: [404, 412],
  examples: {
    request: { remindAt: '2026-11-24T09:00:00.000Z', note: 'Check that the parcel arrived' },
    response: {
      ...conversationExample,
      metadata: {
        channel: 'web',
        followUpAt: '2026-11-24T09:00:00.000Z',
        followUpNote: 'Check that the parcel arrived',
        followUpBy: ids.operator,
      },
      version: 5,
      updatedAt: '2026-11-21T10:08:00.000Z',
    },
  },
  handle: async ({ caller, organization, params, body, headers }) => {
    if (Date.parse(body.remindAt) <= clock.nowMs())
      throw ValidationError.field('remindAt', 'remindAt must be in the future');
    const after = await conversations.update(
      caller.orgId,
      params.id,
      (current) => {
        const metadata = {
          ...current.metadata,
          followUpAt: body.remindAt,
          followUpNote: body.note || null,
          followUpBy: callerId(caller),
        };
        assertFreeJson('metadata', metadata);
        if (followUpKeys.every((key) => current.metadata[key] === metadata[key])) return undefined;
        return bumped(current, { metadata });
      },
      { actor: actorOf(caller), ifMatch: ifMatchVersion(headers), check: accessRules(caller, organization) },
    );
    return ok(toConversation(after), { ETag: etagOf(after.version) });
  },
});

export const clearFollowUp = route({
  method: 'DELETE',
  path: '/api/conversations/{id}/follow-up',
  operationId: 'clearFollowUp',
  summary: 'Clear the follow-up reminder',
  description: 'Removes only the follow-up keys from `metadata`; succeeds even when none is set.',
  tag: 'Conversations',
  scope: 'conversations:write',
  callers: ['apiKey', 'operator'],
  params: idParams,
  response: { status: 200, schema: successResult, description: 'Cleared (or nothing to clear)' },
  errors: [404],
  examples: { response: { success: true } },
  handle: async ({ caller, organization, params }) => {
    await conversations.update(
      caller.orgId,
      params.id,
      (current) => {
        if (!followUpKeys.some((key) => key in current.metadata)) return undefined;
        const metadata = { ...current.metadata };
        for (const key of followUpKeys) delete metadata[key];
        return bumped(current, { metadata });
      },
      { actor: actorOf(caller), check: accessRules(caller, organization) },
    );
    return ok({ success: true });
  },
});

export const getAssignmentHistory = route({
  method: 'GET',
  path: '/api/conversations/{id}/assignment-history',
  operationId: 'getAssignmentHistory',
  summary: 'Assignment history',
  description:
    'Assignment, unassignment and transfer events of the conversation, oldest first (empty when none): operator changes and team changes (`fromTeamId` → `teamId`). When the operator changes, `type` describes the operator change; when only the team changes, it describes the team change (to a team from none `assigned`, to none `unassigned`, to another `transferred`).',
  tag: 'Conversations',
  scope: 'conversations:read',
  callers: ['apiKey', 'operator'],
  params: idParams,
  response: { status: 200, schema: assignmentHistorySchema, description: 'The timeline' },
  errors: [404],
  examples: {
    response: {
      events: [
        {
          id: ids.event,
          type: 'assigned',
          fromOperatorId: null,
          toOperatorId: ids.operator,
          fromTeamId: null,
          teamId: ids.team,
          actor: { type: 'api_key', id: ids.apiKey },
          at: '2026-11-21T10:01:00.000Z',
        },
      ],
    },
  },
  handle: async ({ caller, organization, params }) => {
    const [, events] = await Promise.all([
      loadConversation(caller, organization, params.id),
      assignmentHistory(caller.orgId, params.id),
    ]);
    return ok({ events });
  },
});
