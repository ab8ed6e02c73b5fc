import { config } from '../config';
import { allowedContentTypes } from '../uploads/content-types';
import { isoInstant, uuid } from './common';
import { documented, lazily, named } from './names';
import * as z from './zod';

/** A file name as shown to whoever downloads it: no path, no control characters. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: refusing control characters is the point
const FILENAME = /^[^/\\\u0000-\u001F\u007F]+$/;

const sha256 = documented(
  lazily(() => z.string().check(z.regex(/^[0-9a-f]{64}$/))),
  {
    description: 'SHA-256 of the stored bytes, lower-case hex',
  },
);

export const createUploadBody = named('CreateUploadRequest', () =>
  z.strictObject({
    filename: z.string().check(
      z.minLength(1),
      z.maxLength(255),
      z.regex(FILENAME, 'No path separators or control characters'),
      z.refine((name) => name !== '.' && name !== '..', 'Not a file name'),
    ),
    contentType: z.enum(allowedContentTypes),
    size: z.int().check(z.minimum(1), z.maximum(config.uploadMaxBytes)),
  }),
);
export type CreateUploadInput = z.infer<typeof createUploadBody>;

export const upload = named('Upload', () =>
  z.object({
    id: uuid,
    filename: z.string(),
    contentType: z.string(),
    size: z.int(),
    /** `pending` until `complete` has checked the stored bytes; `rejected` files are never served. */
    status: z.enum(['pending', 'ready', 'rejected']),
    /** Pending only: where to PUT the bytes (valid 15 min), and with which headers. */
    uploadUrl: z.optional(z.url()),
    uploadMethod: z.optional(z.literal('PUT')),
    uploadHeaders: z.optional(z.record(z.string(), z.string())),
    /** Ready only: a presigned download (15 min; `Content-Disposition: attachment`). */
    downloadUrl: z.optional(z.url()),
    sha256: z.optional(sha256),
    /** When `uploadUrl` (pending) or `downloadUrl` (ready) stops working; null when neither is given. */
    expiresAt: z.nullable(isoInstant),
    createdAt: isoInstant,
  }),
);
export type Upload = z.infer<typeof upload>;

/** What messages keep, and webhooks, the events feed and exports carry: no URL. */
export const attachmentMetadata = named('AttachmentMetadata', () =>
  z.object({
    id: uuid,
    filename: z.string(),
    contentType: z.string(),
    size: z.int(),
    sha256,
  }),
);

/** A message's attachment as the API answers it: a fresh download URL on every read. */
export const attachment = named('Attachment', () =>
  z.object({
    id: uuid,
    filename: z.string(),
    contentType: z.string(),
    size: z.int(),
    sha256,
    downloadUrl: z.url(),
    expiresAt: isoInstant,
  }),
);
export type Attachment = z.infer<typeof attachment>;
