import { uploads } from '../../shared/db/uploads';
import { created, route } from '../../shared/http/route';
import { createUploadBody, upload } from '../../shared/schemas/upload';
import { presentUpload } from '../../shared/uploads/present';
import { uploadExample } from './examples';

export const createUpload = route({
  method: 'POST',
  path: '/api/uploads',
  operationId: 'createUpload',
  summary: 'Start an upload',
  description:
    'Declares a file (`filename`, `contentType` from the allow-list, `size` in bytes up to `UPLOAD_MAX_BYTES`, 25 MiB by default) and answers where to put its bytes: a presigned `PUT` to storage (`uploadUrl`, valid 15 min) with the headers to send (`uploadHeaders`; the signed `Content-Type`, and a body of exactly `size` bytes). The API never carries file bytes. Then `POST /api/uploads/{id}/complete`. A pending upload not completed within 1 h is gone (404). HTML, SVG, scripts and executables are refused (422 on `contentType`).',
  tag: 'Uploads',
  scope: 'conversations:write',
  callers: ['apiKey', 'operator', 'visitor'],
  body: createUploadBody,
  response: { status: 201, schema: upload, description: 'The pending upload, with its upload URL' },
  examples: {
    request: { filename: 'invoice.pdf', contentType: 'application/pdf', size: 48_213 },
    response: uploadExample.pending,
  },
  handle: async ({ caller, body }) => created(await presentUpload(await uploads.create(caller, body))),
});
