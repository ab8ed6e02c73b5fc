import { ListObjectsV2Command, S3Client } from '@aws-sdk/client-s3';
import { expect, inject } from 'vitest';
import { call } from './api';

/**
 * Attachments as a client makes them (create, PUT the bytes straight to the S3 emulator, complete),
 * and what the uploads bucket holds, for the test files that need ready files.
 */

/** The local stack's uploads bucket. */
export const UPLOADS_BUCKET = 'conversation-service-local-uploads';

export interface Upload {
  id: string;
  status: string;
  uploadUrl?: string;
  uploadMethod?: string;
  uploadHeaders?: Record<string, string>;
  downloadUrl?: string;
  sha256?: string;
  expiresAt: string | null;
  size: number;
  contentType: string;
  filename: string;
}

/** A minimal valid PNG (8-byte signature, IHDR) padded to the size asked. */
export function png(size = 64): Buffer {
  const bytes = Buffer.alloc(size, 7);
  Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13, 0x49, 0x48, 0x44, 0x52]).copy(
    bytes,
  );
  return bytes;
}

/** PUT of the bytes to the upload's presigned URL, with its headers unless others are given. */
export const putUpload = (upload: Upload, bytes: Buffer, headers = upload.uploadHeaders) =>
  fetch(upload.uploadUrl ?? '', { method: upload.uploadMethod ?? 'PUT', headers, body: bytes });

/** Create, PUT, complete: a ready upload of these bytes, made by `token`. */
export async function readyUpload(
  token: string,
  bytes: Buffer,
  contentType = 'image/png',
  filename = 'shot.png',
): Promise<Upload> {
  const created = await call<Upload>('POST', '/api/uploads', {
    token,
    body: { filename, contentType, size: bytes.length },
  });
  expect(created.status, created.text).toBe(201);
  expect((await putUpload(created.body, bytes)).status).toBe(200);
  const done = await call<Upload>('POST', `/api/uploads/${created.body.id}/complete`, { token });
  expect(done.status, done.text).toBe(200);
  return done.body;
}

/** The uploads bucket of the emulator the global setup started: which objects an upload has. */
export function uploadsBucket(): { storedFor(uploadId: string): Promise<string[]>; destroy(): void } {
  const s3 = new S3Client({
    endpoint: inject('endpoints').s3 ?? '',
    region: 'us-east-1',
    forcePathStyle: true,
    credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
  });
  return {
    /** Every object the bucket holds for an upload (pending or checked). */
    async storedFor(uploadId) {
      const { Contents = [] } = await s3.send(new ListObjectsV2Command({ Bucket: UPLOADS_BUCKET }));
      return Contents.map((object) => object.Key ?? '').filter((key) => key.endsWith(uploadId));
    },
    destroy: () => s3.destroy(),
  };
}
