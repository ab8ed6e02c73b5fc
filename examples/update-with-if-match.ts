/**
 * Start a conversation, answer it, change it only over the version you read, and page its messages.
 *
 *   BASE_URL=http://localhost:3000 API_KEY=svc_sk_… VISITOR_ID=… OPERATOR_ID=… npx tsx examples/update-with-if-match.ts
 *
 * An operator's answer is posted with the API key naming the operator; a PATCH with `If-Match` from
 * the conversation's version succeeds, the same `If-Match` again is stale and answers 412 with the
 * current version; then every message is read one per page. Every value is typed by the API
 * document (no cast anywhere). Prints one line per step and, last, a JSON summary.
 */
import { createServiceClient, ifMatch } from '../clients/typescript/src/index.js';

const env = (name: string): string => {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is not set (see the comment at the top of this file)`);
  return value;
};

function fail(step: string, response: Response, body: unknown): never {
  throw new Error(`${step}: unexpected ${response.status} ${JSON.stringify(body)}`);
}

const api = createServiceClient({ baseUrl: env('BASE_URL'), apiKey: env('API_KEY') });
const operatorId = env('OPERATOR_ID');

const created = await api.POST('/api/conversations', {
  body: { visitorId: env('VISITOR_ID'), message: 'Hello, my order is late' },
});
if (!created.data) fail('create the conversation', created.response, created.error);
const conversation = created.data;
const etag = created.response.headers.get('ETag');
console.log(`created ${conversation.id} version ${conversation.version} (ETag ${etag})`);

const posted = await api.POST('/api/conversations/{id}/messages', {
  params: { path: { id: conversation.id } },
  body: { content: 'It left our warehouse this morning', operatorId },
});
if (!posted.data) fail('post a message', posted.response, posted.error);
const message = posted.data;
console.log(`answered with message ${message.id}, sender ${message.senderType} ${message.senderId}`);

// The write applies only over the version read: `If-Match: "<version>"`.
const patched = await api.PATCH('/api/conversations/{id}', {
  params: { path: { id: conversation.id }, header: ifMatch(conversation) },
  body: { priority: 'high', tags: ['orders'] },
});
if (!patched.data) fail('PATCH with the current version', patched.response, patched.error);
const updated = patched.data;
console.log(`updated to version ${updated.version} (ETag ${patched.response.headers.get('ETag')})`);

// The same version again is stale: 412, narrowed on the error code, the current version typed.
const stale = await api.PATCH('/api/conversations/{id}', {
  params: { path: { id: conversation.id }, header: ifMatch(conversation) },
  body: { priority: 'urgent' },
});
const failure = stale.error?.error;
if (failure?.code !== 'PRECONDITION_FAILED') fail('PATCH with a stale version', stale.response, stale.error);
const currentVersion: number = failure.details.currentVersion;
console.log(
  `stale write refused: ${stale.response.status} ${failure.code}, current version ${currentVersion}`,
);

// Every message, one per page: the iterator follows nextCursor until it is null.
const ids: string[] = [];
for await (const item of api.paginate('/api/conversations/{id}/messages', {
  params: { path: { id: conversation.id }, query: { limit: 1 } },
}))
  ids.push(item.id);
console.log(`read ${ids.length} messages`);

console.log(
  JSON.stringify({
    created: {
      status: created.response.status,
      id: conversation.id,
      version: conversation.version,
      etag,
    },
    message: {
      status: posted.response.status,
      id: message.id,
      senderType: message.senderType,
      senderId: message.senderId,
    },
    patched: {
      status: patched.response.status,
      version: updated.version,
      etag: patched.response.headers.get('ETag'),
    },
    stale: { status: stale.response.status, code: failure.code, currentVersion },
    messages: { ids, messageCount: updated.messageCount },
  }),
);
