/**
 * Start a conversation and follow it over the realtime channel, as an operator's tool would.
 *
 *   BASE_URL=http://localhost:3000 OPERATOR_TOKEN=svc_os_… VISITOR_ID=… npx tsx examples/follow-conversation.ts
 *
 * Connects the WebSocket with the operator session, starts a conversation with the visitor, edits
 * its first message and snoozes it, and prints the `message_edited` and `conversation_snoozed`
 * notices the channel pushes for those changes. Exits 0 once both arrived, 1 after 15 s without.
 */
import { createServiceClient } from '../clients/typescript/src/index.js';

const env = (name: string): string => {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is not set (see the comment at the top of this file)`);
  return value;
};

const baseUrl = env('BASE_URL');
const token = env('OPERATOR_TOKEN');
const api = createServiceClient({ baseUrl, token });

// Locally the channel is served beside the API; in AWS use the stack's RealtimeUrl output instead.
const realtimeUrl = process.env.REALTIME_URL ?? `${baseUrl.replace(/^http/, 'ws')}/realtime`;
const socket = new WebSocket(`${realtimeUrl}?token=${encodeURIComponent(token)}`);
await new Promise<void>((resolve, reject) => {
  socket.addEventListener('open', () => resolve(), { once: true });
  socket.addEventListener('error', () => reject(new Error(`cannot connect to ${realtimeUrl}`)), {
    once: true,
  });
});

const awaited = new Set(['message_edited', 'conversation_snoozed']);
let conversationId: string | undefined;
const done = new Promise<void>((resolve) => {
  socket.addEventListener('message', (event) => {
    const notice = JSON.parse(String(event.data)) as { type: string; conversationId: string };
    if (notice.conversationId !== conversationId) return;
    console.log(`notice ${notice.type}: ${JSON.stringify(notice)}`);
    awaited.delete(notice.type);
    if (awaited.size === 0) resolve();
  });
});

const created = await api.POST('/api/conversations', {
  body: { visitorId: env('VISITOR_ID'), message: 'Hello! How can we help?', title: 'Realtime example' },
});
if (!created.data)
  throw new Error(`start the conversation: ${created.response.status} ${JSON.stringify(created.error)}`);
conversationId = created.data.id;
console.log(`started conversation ${conversationId}`);

const messages = await api.GET('/api/conversations/{id}/messages', {
  params: { path: { id: conversationId } },
});
const first = messages.data?.data[0];
if (!first) throw new Error('the new conversation has no message');
const edited = await api.PATCH('/api/conversations/{id}/messages/{messageId}', {
  params: { path: { id: conversationId, messageId: first.id } },
  body: { content: 'Hello! How can we help you today?' },
});
if (!edited.data)
  throw new Error(`edit the message: ${edited.response.status} ${JSON.stringify(edited.error)}`);

const until = new Date(Date.now() + 60 * 60 * 1000).toISOString();
const snoozed = await api.POST('/api/conversations/{id}/snooze', {
  params: { path: { id: conversationId } },
  body: { until, reason: 'Waiting for the customer' },
});
if (!snoozed.data) throw new Error(`snooze: ${snoozed.response.status} ${JSON.stringify(snoozed.error)}`);

const timeout = new Promise<'timeout'>((resolve) => setTimeout(() => resolve('timeout'), 15_000).unref());
const outcome = await Promise.race([done, timeout]);
socket.close();
if (outcome === 'timeout') {
  console.error(`no ${[...awaited].join(' or ')} notice within 15 s`);
  process.exit(1);
}
console.log('followed the conversation: both notices arrived');
