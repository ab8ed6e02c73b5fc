import { authCache } from '../../shared/auth/authenticate';
import { clock } from '../../shared/clock';
import { auditActorOf } from '../../shared/db/org-audit';
import { visitorErasureRequest } from '../../shared/db/visitor-erasure-request';
import { visitorMerge } from '../../shared/db/visitor-merge';
import { etagOf } from '../../shared/http/if-match';
import { ok, reply, route } from '../../shared/http/route';
import { idParams, successResult } from '../../shared/schemas/common';
import { ids, visitorProfileExample } from '../../shared/schemas/examples';
import { mergeVisitorBody, visitorProfile } from '../../shared/schemas/visitor';

/**
 * How long a merge request moves conversations itself before answering: a visitor's few
 * conversations have moved when the 200 comes; a very large one is finished by the visitor-jobs
 * worker, which the merge's own commit started (stream), so nothing depends on this request living.
 */
export const MERGE_INLINE_MS = 5_000;

export const mergeVisitor = route({
  method: 'POST',
  path: '/api/visitors/{id}/merge',
  operationId: 'mergeVisitor',
  summary: 'Merge another visitor into this one',
  description: [
    'Merges the visitor `sourceVisitorId` into this one (the target). In one commit: the target’s `metadata` takes the source’s keys it lacks (the target’s keys win), `totalSessions` add up, `firstSeenAt`/`lastSeenAt` span both, and `name`, `email`, `phone` and `externalId` the target lacks are taken from the source; the source gets `mergedInto` = the target’s id, leaves the listing (not the `updatedSince` sync) and its visitor tokens stop working (401). Event `visitor.merged` (data: the target) and the audit entry `visitor.merged` commit with it.',
    '',
    'Then the source’s conversations move to the target: their `visitorId` (and embedded `visitor`) change, nothing else (their `updatedAt` moves, so an incremental sync sees them; `version` stays). They move in bounded batches, each conversation on its own, resumable after any failure. **The 200 waits for the move** when it completes within about 5 seconds (a visitor’s usual few hundred conversations), and its `conversationCount` counts them; a larger move continues in the background and completes shortly after (the target’s `conversationCount` and `GET /api/conversations?visitorId=` show the progress), with a last pass about 10 seconds later for a conversation started for the source meanwhile.',
    '',
    'The target itself as source (`same_visitor`), a source already merged or a target merged into another (`already_merged`), or an erased visitor on either side (`visitor_erased`) is 409; a source of another organization or none is 422 on `sourceVisitorId`.',
  ].join('\n'),
  tag: 'Visitors',
  scope: 'visitors:write',
  callers: ['apiKey', 'operator'],
  params: idParams,
  body: mergeVisitorBody,
  versioned: 'read',
  response: { status: 200, schema: visitorProfile, description: 'The target after the merge' },
  errors: [404, 409],
  examples: {
    request: { sourceVisitorId: ids.visitor },
    response: { ...visitorProfileExample, version: 3, totalSessions: 5 },
  },
  handle: async ({ caller, params, body }) => {
    const target = await visitorMerge.begin(
      caller.orgId,
      params.id,
      body.sourceVisitorId,
      auditActorOf(caller),
    );
    // The commit is done: everything the source had is listed INDEX_LAG_MS from now at the latest.
    const committedAtMs = clock.nowMs();
    authCache.forgetVisitor(caller.orgId, body.sourceVisitorId);
    const profile = await visitorMerge.moveAndCount(
      caller.orgId,
      target,
      body.sourceVisitorId,
      committedAtMs,
      performance.now() + MERGE_INLINE_MS,
    );
    return ok(profile, { ETag: etagOf(profile.version) });
  },
});

export const eraseVisitor = route({
  method: 'DELETE',
  path: '/api/visitors/{id}',
  operationId: 'eraseVisitor',
  summary: 'Erase a visitor’s personal data (GDPR)',
  description: [
    'Admin access. Accepts the erasure (202 `{ success: true }`) and commits at once: the visitor’s `identifier` becomes `""`, `name`, `email`, `phone`, `externalId`, `fingerprint`, `geoCountry` and `geoCity` null, `metadata` `{}`, `erasedAt` is set, its visitor tokens stop working (401), event `visitor.erased` (data: the anonymized visitor) and the audit entry `visitor.erased`.',
    '',
    'Within 60 seconds (in resumable steps, after a failure too) the rest follows: the `content` of every message the visitor sent, in all their conversations, becomes `""` (with its edit history and attachments), their uploads are deleted (404 from then on), their conversations show the anonymized visitor, an empty `title` and no visitor text in `lastMessage`, and search no longer finds their text. The conversations, their messages (as blank entries) and the counts stay.',
    '',
    'Erasing an erased visitor again is 202 and changes nothing.',
  ].join('\n'),
  tag: 'Visitors',
  scope: 'visitors:write',
  adminOnly: true,
  callers: ['apiKey', 'operator'],
  params: idParams,
  response: { status: 202, schema: successResult, description: 'Erasure accepted' },
  errors: [404],
  examples: { response: { success: true } },
  handle: async ({ caller, params }) => {
    await visitorErasureRequest.begin(caller.orgId, params.id, auditActorOf(caller));
    authCache.forgetVisitor(caller.orgId, params.id);
    return reply(202, { success: true });
  },
});
