import { isoInstant, uuid } from './common';
import { senderType } from './conversation';
import * as z from './zod';

export const message = z.object({
  id: uuid,
  orgId: uuid,
  conversationId: uuid,
  senderType,
  senderId: uuid,
  content: z.string(),
  type: z.enum(['text', 'system']),
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
export type Message = z.infer<typeof message>;
