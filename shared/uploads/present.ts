import { clock } from '../clock';
import { type AttachmentMetadata, objectKeys, type StoredUpload } from '../db/uploads';
import type { Message, MessageResource } from '../schemas/message';
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

/** The Upload resource: a fresh upload URL while pending, a fresh download URL once ready. */
export async function presentUpload(upload: StoredUpload): Promise<Upload> {
  const base = {
    id: upload.id,
    filename: upload.filename,
    contentType: upload.contentType,
    size: upload.size,
    status: upload.status,
    createdAt: upload.createdAt,
  };
  if (upload.status === 'pending') {
    const uploadUrl = await storage.uploadUrl('uploads', upload.objectKey, URL_TTL_SECONDS, upload);
    return {
      ...base,
      uploadUrl,
      uploadMethod: 'PUT',
      uploadHeaders: uploadHeadersOf(upload),
      expiresAt: urlExpiry(),
    };
  }
  if (upload.status === 'ready') {
    const downloadUrl = await downloadOf(upload.orgId, upload);
    return { ...base, sha256: upload.sha256 ?? '', downloadUrl, expiresAt: urlExpiry() };
  }
  return { ...base, expiresAt: null };
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
