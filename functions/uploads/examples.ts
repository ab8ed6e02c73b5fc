import { ids } from '../../shared/schemas/examples';
import type { Upload } from '../../shared/schemas/upload';

const base = {
  id: ids.upload,
  filename: 'invoice.pdf',
  contentType: 'application/pdf',
  size: 48_213,
  createdAt: '2026-11-21T10:01:00.000Z',
};

const signed =
  'X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=AKIAEXAMPLE%2F20261121%2Feu-west-1%2Fs3%2Faws4_request&X-Amz-Date=20261121T100100Z&X-Amz-Expires=900&X-Amz-SignedHeaders=content-length%3Bcontent-type%3Bhost&X-Amz-Signature=5f1c0e2d';

export const uploadExample = {
  pending: {
    ...base,
    status: 'pending',
    uploadUrl: `https://uploads.example.s3.eu-west-1.amazonaws.com/pending/${ids.organization}/${ids.upload}?${signed}`,
    uploadMethod: 'PUT',
    uploadHeaders: { 'Content-Type': 'application/pdf' },
    expiresAt: '2026-11-21T10:16:00.000Z',
  },
  ready: {
    ...base,
    status: 'ready',
    sha256: '9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08',
    downloadUrl: `https://uploads.example.s3.eu-west-1.amazonaws.com/files/${ids.organization}/${ids.upload}?response-content-disposition=attachment%3B%20filename%3D%22invoice.pdf%22&${signed}`,
    expiresAt: '2026-11-21T10:17:00.000Z',
  },
} satisfies Record<string, Upload>;
