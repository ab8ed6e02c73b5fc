import { clock } from '../../shared/clock';
import { actorOf } from '../../shared/conversations/actor';
import { type StoredConversation, withChange } from '../../shared/conversations/state';
import { conversationFieldRules } from '../../shared/custom-fields/conversation-fields';
import { CUSTOM_FIELD_VALUE_RULES } from '../../shared/custom-fields/values';
import { conversations, toConversation } from '../../shared/db/conversations';
import { ValidationError } from '../../shared/errors';
import { etagOf, ifMatchVersion } from '../../shared/http/if-match';
import { ok, route } from '../../shared/http/route';
import { idParams } from '../../shared/schemas/common';
import {
  conversation,
  followUpKeys,
  type PatchConversationInput,
  patchConversationBody,
} from '../../shared/schemas/conversation';
import { conversationExample, ids } from '../../shared/schemas/examples';
import { assertFreeJson } from '../../shared/schemas/free-json';
import { accessRules } from './access';

const sameJson = (a: unknown, b: unknown): boolean => JSON.stringify(a) === JSON.stringify(b);

/**
 * The entries of a new `customFields` map that differ from the stored one: only those are checked,
 * so values stored before their field was deleted, deactivated or lost an option stay writable as
 * they are (the contract leaves stored values alone).
 */
function changedValues(
  stored: Readonly<Record<string, unknown>>,
  next: Readonly<Record<string, unknown>>,
): Record<string, unknown> {
  return Object.fromEntries(
    Object.entries(next).filter(
      ([name, value]) => !Object.hasOwn(stored, name) || !sameJson(stored[name], value),
    ),
  );
}

function mergeMetadata(
  current: Record<string, unknown>,
  patch: Record<string, unknown>,
): Record<string, unknown> {
  const merged = { ...current };
  for (const [key, value] of Object.entries(patch)) {
    if (value === null) delete merged[key];
    else merged[key] = value;
  }
  return merged;
}

/** The conversation after a PATCH, or undefined when the body changes nothing (no new version). */
function applyPatch(
  current: StoredConversation,
  body: PatchConversationInput,
): StoredConversation | undefined {
  const candidate: StoredConversation = {
    ...current,
    ...(body.status !== undefined ? { status: body.status } : {}),
    ...(body.priority !== undefined ? { priority: body.priority } : {}),
    ...(body.operatorId !== undefined ? { operatorId: body.operatorId } : {}),
    ...(body.teamId !== undefined ? { teamId: body.teamId } : {}),
    ...(body.title !== undefined ? { title: body.title } : {}),
    ...(body.tags !== undefined ? { tags: [...new Set(body.tags)] } : {}),
    ...(body.customFields !== undefined ? { customFields: body.customFields } : {}),
    ...(body.aiEnabled !== undefined ? { aiEnabled: body.aiEnabled } : {}),
    ...(body.language !== undefined ? { language: body.language } : {}),
    ...(body.metadata !== undefined ? { metadata: mergeMetadata(current.metadata, body.metadata) } : {}),
  };
  if (body.metadata !== undefined) assertFreeJson('metadata', candidate.metadata);
  // Leaving `snoozed` through PATCH ends the snooze.
  if (candidate.status !== 'snoozed') candidate.snoozedUntil = null;
  if (sameJson(toConversation(candidate), toConversation(current))) return undefined;
  return withChange(current, candidate, clock.nowIso());
}

export const updateConversation = route({
  method: 'PATCH',
  path: '/api/conversations/{id}',
  operationId: 'updateConversation',
  summary: 'Update a conversation',
  description: `Writes only the fields present. \`metadata\` merges key by key and a null value removes a key; the follow-up keys (\`followUpAt\`, \`followUpNote\`, \`followUpBy\`) belong to the follow-up endpoints (422 here). \`operatorId: null\` unassigns; \`teamId\` names a team of the organization (\`GET /api/operator-teams\`; another organization's, or a deleted one, is 422) and null removes it; operator and team changes are recorded in the assignment history and emit \`conversation.assigned\`. A change increments \`version\` (returned as \`ETag\`); with \`If-Match\`, a different current version is 412 with \`details.currentVersion\`. A body that changes nothing returns the conversation as it is. Status \`snoozed\` is set by the snooze endpoint (422 here).\n\n\`customFields\` replaces the whole map. Only values that are new or differ from the stored ones are checked, so a value stored before its field was deleted or deactivated can be sent back unchanged. ${CUSTOM_FIELD_VALUE_RULES}`,
  tag: 'Conversations',
  scope: 'conversations:write',
  callers: ['apiKey', 'operator'],
  params: idParams,
  body: patchConversationBody,
  versioned: 'write',
  response: { status: 200, schema: conversation, description: 'The conversation after the change' },
  errors: [404, 412],
  examples: {
    request: { priority: 'high', operatorId: ids.operator, metadata: { channel: 'web' } },
    response: conversationExample,
  },
  handle: async ({ caller, organization, params, body, headers }) => {
    const reserved = Object.keys(body.metadata ?? {}).find((key) =>
      (followUpKeys as readonly string[]).includes(key),
    );
    if (reserved)
      throw ValidationError.field(`metadata.${reserved}`, 'Follow-up keys are set by PUT /follow-up');
    if (body.status === 'snoozed')
      throw ValidationError.field('status', 'Snooze with POST /api/conversations/{id}/snooze');
    // Read beside the conversation (one round trip for both), checked once the stored values are known.
    const rules =
      body.customFields && Object.keys(body.customFields).length > 0
        ? conversationFieldRules.load(caller.orgId)
        : undefined;
    rules?.catch(() => undefined);
    const after = await conversations.update(
      caller.orgId,
      params.id,
      async (current) => {
        if (body.customFields) {
          await conversationFieldRules.check(
            caller.orgId,
            changedValues(current.customFields, body.customFields),
            rules,
          );
        }
        return applyPatch(current, body);
      },
      { actor: actorOf(caller), ifMatch: ifMatchVersion(headers), check: accessRules(caller, organization) },
    );
    return ok(toConversation(after), { ETag: etagOf(after.version) });
  },
});
