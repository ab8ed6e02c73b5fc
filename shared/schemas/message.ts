import { cursorParam, isoInstant, plainText, uuid } from './common';
import { bulkIds, senderType } from './conversation';
import { lazily, named } from './names';
import { attachment, attachmentMetadata } from './upload';
import * as z from './zod';

/** A message's fields; what its `attachments` hold depends on the reader (below). */
const messageFields = () => ({
  id: uuid,
  orgId: uuid,
  conversationId: uuid,
  senderType,
  senderId: uuid,
  content: z.string(),
  /** `file`: attachments and no text. */
  type: z.enum(['text', 'system', 'file']),
  metadata: z.record(z.string(), z.unknown()),
  isRead: z.boolean(),
  isEdited: z.boolean(),
  editedAt: z.nullable(isoInstant),
  createdAt: isoInstant,
  deletedAt: z.nullable(isoInstant),
  replyToId: z.nullable(uuid),
  mentions: z.nullable(z.array(uuid)),
  searchVector: z.string(),
});

/** A message as it is stored, and as webhooks, the events feed and exports carry it: attachments without URLs. */
export const messageRecord = named('MessageRecord', () =>
  z.object({ ...messageFields(), attachments: z.array(attachmentMetadata) }),
);
export type Message = z.infer<typeof messageRecord>;

/** A message as the API answers it: each attachment with a fresh download URL (15 min). */
export const message = named('Message', () =>
  z.object({ ...messageFields(), attachments: z.array(attachment) }),
);
export type MessageResource = z.infer<typeof message>;

export const messageParams = lazily(() => z.strictObject({ id: z.uuid(), messageId: z.uuid() }));

const content = z.string().check(z.trim(), z.minLength(1), z.maxLength(10_000), plainText());
/** With attachments a message may have no text. */
const optionalContent = z.string().check(z.trim(), z.maxLength(10_000), plainText());
const attachmentIds = lazily(() => z.array(z.uuid()).check(z.maxLength(10)));
const mentions = lazily(() => z.array(z.uuid()).check(z.maxLength(20)));

export const postMessageBody = named('PostMessageRequest', () =>
  z.strictObject({
    /** May be empty (or absent) when `attachmentIds` names at least one file. */
    content: z.optional(optionalContent),
    /** At most 10 ready uploads of the caller's, each attached to no message yet. */
    attachmentIds: z.optional(attachmentIds),
    replyToId: z.optional(z.uuid()),
    mentions: z.optional(mentions),
    /** API keys only: the operator the message is written as. */
    operatorId: z.optional(z.uuid()),
  }),
);

export const editMessageBody = named('EditMessageRequest', () => z.strictObject({ content }));

export const listMessagesQuery = lazily(() =>
  z.strictObject({
    cursor: z.optional(cursorParam),
    limit: z._default(z.coerce.number().check(z.int(), z.minimum(1), z.maximum(100)), 50),
  }),
);

export const messagePage = named('MessagePage', () =>
  z.object({ data: z.array(message), nextCursor: z.nullable(z.string()) }),
);

export const revisions = named('MessageRevisions', () =>
  z.object({
    messageId: z.uuid(),
    edits: z.array(
      z.object({
        content: z.string(),
        editedAt: isoInstant,
        /** The editor: a visitor, operator or API key id. */
        editedBy: z.optional(z.uuid()),
      }),
    ),
  }),
);

export const unreadBulkBody = named('MarkMessagesUnreadRequest', () =>
  z.strictObject({ messageIds: bulkIds(500) }),
);

export const updatedCount = lazily(() => z.object({ updatedCount: z.int() }));
