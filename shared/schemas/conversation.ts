import {
  boundedRecord,
  cursorPage,
  cursorParam,
  isoInstant,
  localeTag,
  pageLimit,
  plainText,
  uuid,
} from './common';
import { conversationStatuses } from './conversation-statuses';
import { FREE_JSON_MAX_BYTES, metadataObject, withinFreeJsonBounds } from './free-json';
import { documented, lazily, named } from './names';
import { visitor } from './visitor';
import * as z from './zod';

export const conversationStatus = z.enum(conversationStatuses);
export const conversationPriority = z.enum(['low', 'normal', 'high', 'urgent']);
export const conversationSource = z.enum(['widget', 'api', 'email']);
export const senderType = z.enum(['visitor', 'operator', 'bot', 'system']);

export const messagePreview = named('MessagePreview', () =>
  z.object({
    id: uuid,
    senderType,
    senderId: uuid,
    type: z.enum(['text', 'system', 'file']),
    /** The first 200 characters of the content. */
    content: z.string(),
    createdAt: isoInstant,
  }),
);
export type MessagePreview = z.infer<typeof messagePreview>;

const tag = z.string().check(z.trim(), z.minLength(1), z.maxLength(50), plainText());
const customFieldValue = lazily(() =>
  z.union([z.string(), z.number(), z.boolean(), z.null(), z.array(z.string())]),
);
/** A custom-field value as integrators send it: at most 16 KiB as JSON, like every free-form value. */
const customFieldInput = lazily(() =>
  z
    .union([
      z.string().check(z.maxLength(FREE_JSON_MAX_BYTES), plainText()),
      z.number(),
      z.boolean(),
      z.null(),
      z.array(z.string().check(z.maxLength(1000), plainText())).check(z.maxLength(500)),
    ])
    .check(withinFreeJsonBounds<z.infer<typeof customFieldValue>>()),
);

export const conversation = named('Conversation', () =>
  z.object({
    id: uuid,
    organizationId: uuid,
    visitorId: uuid,
    operatorId: z.nullable(uuid),
    teamId: z.nullable(uuid),
    status: conversationStatus,
    priority: conversationPriority,
    source: conversationSource,
    aiEnabled: z.boolean(),
    snoozedUntil: z.nullable(isoInstant),
    lastMessageAt: isoInstant,
    title: z.string(),
    messageCount: z.int(),
    unreadCount: z.int(),
    hasUnreadMessages: z.boolean(),
    tags: z.array(z.string()),
    customFields: z.record(z.string(), customFieldValue),
    language: z.nullable(z.string()),
    aiSummary: z.nullable(z.string()),
    aiSummaryGeneratedAt: z.nullable(isoInstant),
    aiClassification: z.nullable(z.string()),
    metadata: z.record(z.string(), z.unknown()),
    version: z.int(),
    createdAt: isoInstant,
    updatedAt: isoInstant,
    visitor,
    lastMessage: z.nullable(messagePreview),
    /** Milliseconds from the first visitor message to the first operator reply after it. */
    firstResponseTimeMs: z.nullable(z.int()),
    /** Null, except in an incremental sync (`updatedSince`), which lists deleted conversations too. */
    deletedAt: z.optional(z.nullable(isoInstant)),
  }),
);
export type Conversation = z.infer<typeof conversation>;

export const createConversationBody = named('CreateConversationRequest', () =>
  z.strictObject({
    visitorId: z.optional(uuid),
    title: z.optional(z.string().check(z.trim(), z.minLength(1), z.maxLength(200), plainText())),
    message: z.optional(z.string().check(z.trim(), z.minLength(1), z.maxLength(10_000), plainText())),
    priority: z.optional(conversationPriority),
    tags: z.optional(z.array(tag).check(z.maxLength(20))),
    customFields: z.optional(boundedRecord(customFieldInput, 100)),
    language: z.optional(localeTag),
    metadata: z.optional(metadataObject),
  }),
);
export type CreateConversationInput = z.infer<typeof createConversationBody>;

export const listConversationsQuery = lazily(() =>
  z.strictObject({
    status: z.optional(conversationStatus),
    operatorId: z.optional(uuid),
    visitorId: z.optional(uuid),
    priority: z.optional(conversationPriority),
    tag: z.optional(tag),
    /** Incremental sync: changes since this instant, oldest first (deleted conversations included). */
    updatedSince: z.optional(z.iso.datetime({ offset: true })),
    cursor: z.optional(cursorParam),
    limit: pageLimit(20, 100),
  }),
);
export type ListConversationsQuery = z.infer<typeof listConversationsQuery>;

export const conversationPage = named('ConversationPage', () =>
  z.object({
    ...cursorPage(conversation).shape,
    /** Only with `updatedSince`: true when the page reached the current end (poll later with `nextCursor`). */
    done: z.optional(z.boolean()),
  }),
);

/** Metadata keys owned by the follow-up endpoints; PATCH may not write them. */
export const followUpKeys = ['followUpAt', 'followUpNote', 'followUpBy'] as const;

export const patchConversationBody = named('UpdateConversationRequest', () =>
  z.strictObject({
    status: z.optional(conversationStatus),
    priority: z.optional(conversationPriority),
    operatorId: z.optional(z.nullable(uuid)),
    teamId: z.optional(z.nullable(uuid)),
    title: z.optional(z.string().check(z.trim(), z.minLength(1), z.maxLength(200), plainText())),
    tags: z.optional(z.array(tag).check(z.maxLength(20))),
    customFields: z.optional(boundedRecord(customFieldInput, 100)),
    aiEnabled: z.optional(z.boolean()),
    language: z.optional(z.nullable(localeTag)),
    /** Merged key by key; a null value removes the key. The merged value is bounded like any metadata. */
    metadata: z.optional(metadataObject),
  }),
);
export type PatchConversationInput = z.infer<typeof patchConversationBody>;

export const localeSetting = named('LocaleSetting', () =>
  z.object({
    locale: z.string(),
    source: z.enum(['operator_override', 'visitor_override', 'detected']),
    locked: z.boolean(),
    updatedAt: isoInstant,
  }),
);

export const localeBody = named('SetLocaleRequest', () =>
  z.strictObject({
    locale: localeTag,
    locked: z.optional(z.boolean()),
  }),
);

export const snoozeBody = named('SnoozeRequest', () =>
  z.strictObject({
    until: isoInstant,
    reason: z.optional(z.string().check(z.trim(), z.maxLength(500), plainText())),
  }),
);

export const followUpBody = named('FollowUpRequest', () =>
  z.strictObject({
    remindAt: isoInstant,
    note: z.optional(z.string().check(z.trim(), z.maxLength(1000), plainText())),
  }),
);

export const assignmentEvent = named('AssignmentEvent', () =>
  z.object({
    id: uuid,
    type: z.enum(['assigned', 'unassigned', 'transferred']),
    fromOperatorId: z.nullable(uuid),
    toOperatorId: z.nullable(uuid),
    /** The team before the change (the same as `teamId` when only the operator changed). */
    fromTeamId: z.nullable(uuid),
    /** The team after the change. */
    teamId: z.nullable(uuid),
    actor: z.object({ type: z.enum(['api_key', 'operator', 'visitor']), id: z.string() }),
    at: isoInstant,
  }),
);
export type AssignmentEvent = z.infer<typeof assignmentEvent>;

export const assignmentHistory = named('AssignmentHistory', () =>
  z.object({ events: z.array(assignmentEvent) }),
);

/** Ids of a bulk call: one that is not a UUID names nothing, so it is reported missing (404), not 422. */
export const bulkIds = (max: number) =>
  z
    .array(documented(z.string().check(z.minLength(1), z.maxLength(100)), { format: 'uuid' }))
    .check(z.minLength(1), z.maxLength(max));

export const bulkConversationsBody = named('BulkConversationsRequest', () =>
  z.strictObject({ conversationIds: bulkIds(100) }),
);
