import { isoInstant, plainText, uuid } from './common';
import { lazily, named } from './names';
import * as z from './zod';

/** An internal note: operators and API keys only, never visitors. */
export const note = named('Note', () =>
  z.object({
    id: uuid,
    conversationId: uuid,
    /** The operator who wrote it, or the API key's id when a key did. */
    authorId: uuid,
    /** Copied at creation: the operator's name, or the API key's name. */
    authorName: z.string(),
    content: z.string(),
    /** Mentioned operators of the organization; empty when none. */
    mentions: z.array(uuid),
    createdAt: isoInstant,
    updatedAt: isoInstant,
  }),
);
export type Note = z.infer<typeof note>;

export const noteParams = lazily(() => z.strictObject({ id: z.uuid(), noteId: z.uuid() }));

export const createNoteBody = named('CreateNoteRequest', () =>
  z.strictObject({
    content: z.string().check(z.trim(), z.minLength(1), z.maxLength(10_000), plainText()),
    mentions: z.optional(z.array(z.uuid()).check(z.maxLength(20))),
  }),
);

export const noteList = named('NoteList', () => z.object({ data: z.array(note) }));
