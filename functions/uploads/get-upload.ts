import type { OrgCaller } from '../../shared/auth/caller';
import { conversations } from '../../shared/db/conversations';
import { ownerOf, type StoredUpload, uploads } from '../../shared/db/uploads';
import { NotFoundError } from '../../shared/errors';
import { ok, route } from '../../shared/http/route';
import { idParams } from '../../shared/schemas/common';
import { upload } from '../../shared/schemas/upload';
import { presentUpload } from '../../shared/uploads/present';
import { uploadExample } from './examples';

/**
 * An upload the caller may see: any of the organization's for keys and operators; for a visitor,
 * its own, and the attachments of its own (live) conversations. Anything else is 404.
 */
export async function visibleUpload(caller: OrgCaller, uploadId: string): Promise<StoredUpload> {
  const found = await uploads.get(caller.orgId, uploadId);
  if (!found) throw new NotFoundError('Upload not found');
  if (caller.kind !== 'visitor' || found.owner === ownerOf(caller)) return found;
  if (found.conversationId) {
    const conversation = await conversations.get(caller.orgId, found.conversationId);
    if (conversation?.visitorId === caller.visitorId) return found;
  }
  throw new NotFoundError('Upload not found');
}

export const getUpload = route({
  method: 'GET',
  path: '/api/uploads/{id}',
  operationId: 'getUpload',
  summary: 'Get an upload',
  description:
    'The upload; once `ready`, with a fresh `downloadUrl` (valid 15 min, served as `Content-Disposition: attachment` with the declared type). Visitors see their own uploads and the attachments of their own conversations. A pending upload not completed within 1 h is 404, as are the files of deleted messages and purged conversations.',
  tag: 'Uploads',
  scope: 'conversations:read',
  callers: ['apiKey', 'operator', 'visitor'],
  params: idParams,
  response: { status: 200, schema: upload, description: 'The upload' },
  errors: [404],
  examples: { response: uploadExample.ready },
  handle: async ({ caller, params }) => ok(await presentUpload(await visibleUpload(caller, params.id))),
});
