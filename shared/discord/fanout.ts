import { type DiscordChannel, discordChannels } from '../db/discord-channels';
import type { DomainEvent, DomainEventType } from '../db/events';
import type { QueueJob } from '../queue-jobs';
import { queues } from '../queues';
import type { DiscordEventType } from '../schemas/discord';
import { type NotificationMessage, type NotifiedConversation, nonceOf, notificationMessage } from './message';

/** The domain event each Discord event follows. */
const discordEventOf: Partial<Record<DomainEventType, DiscordEventType>> = {
  'conversation.created': 'new_conversation',
  'conversation.assigned': 'conversation_assigned',
  'conversation.closed': 'conversation_closed',
};

/** What the fan-out queues: one message for one channel, ready to post. */
export type DiscordJob = QueueJob<'discord-notifications'> & { message: NotificationMessage };

function conversationOf(data: unknown): NotifiedConversation | undefined {
  if (typeof data !== 'object' || data === null) return undefined;
  const c = data as Record<string, unknown>;
  if (typeof c.id !== 'string') return undefined;
  const last = c.lastMessage as { content?: unknown } | null | undefined;
  return {
    id: c.id,
    title: typeof c.title === 'string' ? c.title : '',
    status: String(c.status ?? ''),
    priority: String(c.priority ?? ''),
    source: String(c.source ?? ''),
    operatorId: typeof c.operatorId === 'string' ? c.operatorId : null,
    lastMessage: last && typeof last.content === 'string' ? { content: last.content } : null,
  };
}

/**
 * The notifications a batch of committed events makes: for each event Discord can be told of, one
 * job per channel of its organization subscribed to it. One consistent Query of `ORG#o#DISCORD` per
 * organization with such an event (none otherwise).
 */
export async function discordJobsFor(events: readonly DomainEvent[]): Promise<DiscordJob[]> {
  const relevant = events.filter((event) => discordEventOf[event.type] !== undefined);
  if (relevant.length === 0) return [];
  const channelsOf = new Map<string, Promise<DiscordChannel[]>>();
  for (const { organizationId } of relevant) {
    if (!channelsOf.has(organizationId))
      channelsOf.set(organizationId, discordChannels.all(organizationId, { consistent: true }));
  }
  const jobs: DiscordJob[] = [];
  for (const event of relevant) {
    const type = discordEventOf[event.type];
    const conversation = conversationOf(event.data);
    if (!type || !conversation) continue;
    for (const channel of (await channelsOf.get(event.organizationId)) ?? []) {
      if (!channel.events.includes(type)) continue;
      jobs.push({
        orgId: event.organizationId,
        configId: channel.id,
        channelId: channel.channelId,
        eventId: event.id,
        event: type,
        message: notificationMessage(type, conversation, {
          nonce: nonceOf(event.id, channel.channelId),
          timestamp: event.timestamp,
        }),
      });
    }
  }
  return jobs;
}

const BATCH_ENTRIES = 10;

/** Queues the jobs, ten per SendMessageBatch; throws unless SQS took every one (the batch is retried). */
export async function queueDiscordJobs(jobs: readonly DiscordJob[]): Promise<void> {
  const batches: DiscordJob[][] = [];
  for (let i = 0; i < jobs.length; i += BATCH_ENTRIES) batches.push(jobs.slice(i, i + BATCH_ENTRIES));
  const unsent = await Promise.all(batches.map((batch) => queues.sendBatch('discord-notifications', batch)));
  const failed = unsent.reduce((sum, list) => sum + list.length, 0);
  if (failed > 0) throw new Error(`${failed} Discord notification jobs were not queued`);
}
