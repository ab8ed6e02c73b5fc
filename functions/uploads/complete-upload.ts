import { createHash } from 'node:crypto';
import { objectKeys, type StoredUpload, uploads } from '../../shared/db/uploads';
import { ConflictError, NotFoundError, ValidationError } from '../../shared/errors';
import { ok, route } from '../../shared/http/route';
import { idParams } from '../../shared/schemas/common';
import { upload } from '../../shared/schemas/upload';
import { storage } from '../../shared/storage';
import { bytesMatch, SNIFF_BYTES } from '../../shared/uploads/content-types';
import { presentUpload } from '../../shared/uploads/present';
import { uploadExample } from './examples';
import { visibleUpload } from './get-upload';

/** SHA-256 of the stored object, read as a stream: memory holds one chunk, whatever the size. */
async function sha256Of(key: string): Promise<string> {
  const hash = createHash('sha256');
  for await (const chunk of await storage.read('uploads', key)) hash.update(chunk);
  return hash.digest('hex');
}

/** The stored bytes are not what was declared: they are deleted, and the client may PUT again. */
async function refuse(upload: StoredUpload, error: ValidationError): Promise<never> {
  await storage.remove('uploads', upload.objectKey);
  throw error;
}

/**
 * Checks what storage holds under the pending key (present; the declared size and type, by HEAD;
 * the declared type by the magic numbers of its first bytes; its SHA-256, streamed), moves it under
 * `files/` (a copy made by S3) and only then marks the upload ready, on the condition that it is
 * still pending and within its hour.
 */
async function check(upload: StoredUpload): Promise<StoredUpload> {
  const head = await storage.head('uploads', upload.objectKey);
  if (!head)
    throw new ConflictError('Nothing was uploaded: PUT the bytes to uploadUrl first', {
      reason: 'not_uploaded',
    });
  if (head.size !== upload.size) {
    await refuse(
      upload,
      ValidationError.field('size', `${head.size} bytes were stored, ${upload.size} declared`, {
        reason: 'size_mismatch',
      }),
    );
  }
  const typeMismatch = () =>
    ValidationError.field('contentType', `The stored bytes are not ${upload.contentType}`, {
      reason: 'type_mismatch',
    });
  // S3 refuses a PUT whose type differs from the signed one; an emulator may not, so it is checked.
  if (head.contentType.split(';')[0]?.trim().toLowerCase() !== upload.contentType) {
    await refuse(upload, typeMismatch());
  }
  const first = await storage.readStart('uploads', upload.objectKey, Math.min(SNIFF_BYTES, upload.size));
  if (!(await bytesMatch(upload.contentType, first))) await refuse(upload, typeMismatch());
  const sha256 = await sha256Of(upload.objectKey);
  const fileKey = objectKeys.file(upload.orgId, upload.id);
  // Stored as a download: the object itself answers `Content-Disposition: attachment`, in AWS and locally.
  await storage.copy('uploads', upload.objectKey, fileKey, {
    filename: upload.filename,
    contentType: upload.contentType,
  });
  const settled = await uploads.settle(upload, { status: 'ready', sha256, objectKey: fileKey });
  if (!settled) {
    // The hour ran out meanwhile: the upload is gone, and so is its copy.
    await storage.remove('uploads', fileKey);
    throw new NotFoundError('Upload not found');
  }
  // The pending copy goes now (else by the bucket's lifecycle rule a day later).
  await storage.remove('uploads', upload.objectKey);
  return settled;
}

export const completeUpload = route({
  method: 'POST',
  path: '/api/uploads/{id}/complete',
  operationId: 'completeUpload',
  summary: 'Complete an upload',
  description:
    'Checks what storage holds and, when it is what was declared, marks the upload `ready` with its `sha256` and a `downloadUrl`. Nothing stored: 409 `details.reason = "not_uploaded"` (also where storage refused a PUT of another length than the signed one). Another size: 422 `details.reason = "size_mismatch"`. Bytes not of the declared type by their magic numbers (a PNG declared as PDF; HTML markup or a script declared as text): 422 `details.reason = "type_mismatch"`. A refused object is deleted: PUT again and complete again. Completing a ready upload again answers it as it is.',
  tag: 'Uploads',
  scope: 'conversations:write',
  callers: ['apiKey', 'operator', 'visitor'],
  params: idParams,
  response: { status: 200, schema: upload, description: 'The upload, ready' },
  errors: [404, 409],
  examples: { response: uploadExample.ready },
  handle: async ({ caller, params }) => {
    const found = await visibleUpload(caller, params.id);
    return ok(await presentUpload(found.status === 'pending' ? await check(found) : found));
  },
});
