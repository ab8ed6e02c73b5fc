import { clock } from '../clock';
import { project } from '../db/project';
import { type AttachmentMetadata, objectKeys, type StoredUpload } from '../db/uploads';
import type { Message, MessageResource } from '../schemas/message';
import { uploadProjection } from '../schemas/projections';
import type { Attachment, Upload } from '../schemas/upload';
import { storage } from '../storage';

/** Presigned URLs (upload and download) work this long. */
export const URL_TTL_SECONDS = 15 * 60;

const urlExpiry = () => new Date(clock.nowMs() + URL_TTL_SECONDS * 1000).toISOString();

/** A download of a checked file: served as an attachment of its declared type, whatever it holds. */
const downloadOf = (orgId: string, file: Pick<AttachmentMetadata, 'id' | 'filename' | 'contentType'>) =>
  storage.downloadUrl('uploads', objectKeys.file(orgId, file.id), URL_TTL_SECONDS, {
    filename: file.filename,
    contentType: file.contentType,
  });

/** The headers a client must send with the PUT: the signed type (the signed length is the body's). */
export const uploadHeadersOf = (upload: Pick<StoredUpload, 'contentType'>) => ({
  'Content-Type': upload.contentType,
});

const toUpload = project<Upload>(uploadProjection);

/** The fields of the answer that no stored attribute gives: each presigned URL, and when it stops working. */
type UrlField = 'uploadUrl' | 'uploadMethod' | 'uploadHeaders' | 'downloadUrl' | 'sha256' | 'expiresAt';
type UrlFields = { [Field in UrlField]: Upload[Field] };

/** Nothing to fetch: no URL, and no `sha256` (only a ready upload's is answered). */
const noUrl: UrlFields = {
  uploadUrl: undefined,
  uploadMethod: undefined,
  uploadHeaders: undefined,
  downloadUrl: undefined,
  sha256: undefined,
  expiresAt: null,
};

/** A fresh upload URL while pending, a fresh download URL (and the checked `sha256`) once ready. */
async function urlFieldsOf(upload: StoredUpload): Promise<UrlFields> {
  if (upload.status === 'pending') {
    return {
      ...noUrl,
      uploadUrl: await storage.uploadUrl('uploads', upload.objectKey, URL_TTL_SECONDS, upload),
      uploadMethod: 'PUT',
      uploadHeaders: uploadHeadersOf(upload),
      expiresAt: urlExpiry(),
    };
  }
  if (upload.status === 'ready') {
    return {
      ...noUrl,
      downloadUrl: await downloadOf(upload.orgId, upload),
      sha256: upload.sha256 ?? '',
      expiresAt: urlExpiry(),
    };
  }
  return noUrl;
}

/**
 * The Upload resource: the stored upload through its projection, then every URL field set over
 * what it copied. `expiresAt` is the URL's ISO instant (or null), never the item's TTL attribute of
 * the same name (epoch seconds), whatever the projection was given.
 */
export async function presentUpload(upload: StoredUpload): Promise<Upload> {
  const answer = toUpload(upload);
  // The projection named every field, so each is assigned in its place and the order is the schema's.
  return Object.assign(answer, await urlFieldsOf(upload));
}

/** A message as the API answers it: fresh download URLs (no S3 client is loaded for messages without files). */
export async function presentMessage(message: Message): Promise<MessageResource> {
  const files = message.attachments ?? [];
  if (files.length === 0 || message.deletedAt) return { ...message, attachments: [] };
  const expiresAt = urlExpiry();
  const attachments: Attachment[] = await Promise.all(
    files.map(async (file) => ({ ...file, downloadUrl: await downloadOf(message.orgId, file), expiresAt })),
  );
  return { ...message, attachments };
}

export const presentMessages = (messages: readonly Message[]): Promise<MessageResource[]> =>
  Promise.all(messages.map(presentMessage));
