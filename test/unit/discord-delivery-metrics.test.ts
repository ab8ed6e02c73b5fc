import type { Context, SQSEvent } from 'aws-lambda';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { captureStdout, enableMetrics } from './helpers/stdout-capture';

/** The Discord worker counts what Discord accepted: not drops, not rejections, not retries. */

const channelId = '123456789012345678';
const configId = '00000000-0000-4000-8000-000000000001';

vi.mock('../../shared/db/discord-channels', () => ({
  discordChannels: {
    getByChannelId: async () => ({ id: configId, events: ['new_conversation'] }),
  },
}));
// The post's outcome is named by the job's message text: what each record of the batch meets.
vi.mock('../../shared/discord/client', () => ({
  postMessage: async (_channel: string, message: { content: string }) =>
    message.content === 'ok'
      ? { kind: 'delivered' }
      : message.content === 'bad'
        ? { kind: 'rejected', reason: 'invalid_form_body' }
        : { kind: 'retry', reason: 'discord_5xx' },
}));
vi.mock('../../shared/queues', () => ({
  queues: { changeVisibility: async () => undefined, send: async () => undefined },
}));

let stdout: ReturnType<typeof captureStdout>;
beforeAll(() => {
  enableMetrics('discord-delivery');
  vi.stubEnv('POWERTOOLS_LOG_LEVEL', 'SILENT');
  stdout = captureStdout();
});
afterAll(() => {
  vi.restoreAllMocks();
  vi.unstubAllEnvs();
});

const job = (content: string, index: number) => ({
  messageId: `m${index}`,
  receiptHandle: `r${index}`,
  body: JSON.stringify({
    orgId: '00000000-0000-4000-8000-0000000000aa',
    configId,
    channelId,
    eventId: `00000000-0000-4000-8000-00000000000${index}`,
    event: 'new_conversation',
    message: { content, embeds: [] },
  }),
  attributes: { ApproximateReceiveCount: '1', SentTimestamp: String(Date.now() - 250) },
});

describe('discord-delivery metrics', () => {
  it('publishes DiscordPosts for accepted posts only, and each job’s age in the queue', async () => {
    const { handler } = await import('../../functions/workers/discord-delivery');
    const event = { Records: ['ok', 'bad', 'ok', 'later'].map(job) } as unknown as SQSEvent;
    const context = { awsRequestId: 'req', getRemainingTimeInMillis: () => 60_000 } as unknown as Context;
    const result = await handler(event, context);
    expect(result.batchItemFailures).toEqual([{ itemIdentifier: 'm3' }]);
    const lines = stdout.metricLines();
    const posts = lines.filter((line) => 'DiscordPosts' in line);
    expect(posts.map((line) => [line.function, line.DiscordPosts])).toEqual([['discord-delivery', 2]]);
    const ages = lines.find((line) => 'QueueJobAge' in line)?.QueueJobAge as number[];
    expect(ages).toHaveLength(4);
    for (const age of ages) expect(age).toBeGreaterThanOrEqual(250);
  });
});
