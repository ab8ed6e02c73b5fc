import type { SQSRecord } from 'aws-lambda';
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { captureStdout, enableMetrics } from './helpers/stdout-capture';

/** What the queue workers tell CloudWatch: the dimension sets the stack's alarms and graphs read. */

let stdout: ReturnType<typeof captureStdout>;
let workerMetrics: typeof import('../../shared/metrics');

beforeAll(async () => {
  enableMetrics('webhook-delivery');
  vi.stubEnv('AWS_LAMBDA_INITIALIZATION_TYPE', 'on-demand');
  workerMetrics = await import('../../shared/metrics');
  stdout = captureStdout();
});
afterAll(() => {
  vi.restoreAllMocks();
  vi.unstubAllEnvs();
});
beforeEach(() => {
  stdout.clear();
});

const emitted = () => stdout.metricLines();

const record = (sentAt: number): SQSRecord =>
  ({ messageId: 'm', body: '{}', attributes: { SentTimestamp: String(sentAt) } }) as unknown as SQSRecord;

describe('worker metrics', () => {
  it('counts webhook attempts per outcome under exactly service + outcome, and per attempt apart', () => {
    workerMetrics.publishWebhookAttempts([
      { outcome: 'succeeded', attempt: 1 },
      { outcome: 'succeeded', attempt: 1 },
      { outcome: 'failed', attempt: 3 },
    ]);
    const lines = emitted();
    const deliveries = lines.filter((line) => 'WebhookDeliveries' in line);
    expect(deliveries.map((line) => [line.outcome, line.WebhookDeliveries])).toEqual([
      ['succeeded', 2],
      ['failed', 1],
    ]);
    for (const line of deliveries) {
      expect(line._aws.CloudWatchMetrics[0]?.Namespace).toBe('ConversationService');
      expect(line._aws.CloudWatchMetrics[0]?.Dimensions).toEqual([['service', 'outcome']]);
    }
    const attempts = lines.filter((line) => 'WebhookDeliveryAttempts' in line);
    expect(attempts.map((line) => [line.outcome, line.attempt, line.WebhookDeliveryAttempts])).toEqual([
      ['succeeded', '1', 2],
      ['failed', '3', 1],
    ]);
  });

  it('reports how long each job waited, under the worker’s function name, and the cold start once', () => {
    const now = 1_800_000_000_000;
    workerMetrics.observeQueueBatch([record(now - 1_500), record(now - 20)], now);
    workerMetrics.observeQueueBatch([record(now - 5)], now);
    const lines = emitted();
    expect(lines.filter((line) => 'ColdStart' in line)).toHaveLength(1);
    const ages = lines.filter((line) => 'QueueJobAge' in line);
    expect(ages.map((line) => line.QueueJobAge)).toEqual([[1_500, 20], 5]);
    expect(ages[0]).toMatchObject({ function: 'webhook-delivery' });
    expect(ages[0]?._aws.CloudWatchMetrics[0]?.Dimensions).toEqual([['service', 'function']]);
  });

  it('publishes a full stream batch of index lags (250 values) under the function name, without an empty publish', () => {
    const stderr = vi.spyOn(process.stderr, 'write').mockImplementation(() => true);
    const lags = Array.from({ length: 250 }, (_, i) => i);
    workerMetrics.publishSearchIndexLag(lags);
    const lines = emitted().filter((line) => 'SearchIndexLag' in line);
    expect(lines.flatMap((line) => line.SearchIndexLag as number[])).toEqual(lags);
    for (const line of lines) {
      expect(line.function).toBe('webhook-delivery');
      expect(line._aws.CloudWatchMetrics[0]?.Dimensions).toEqual([['service', 'function']]);
    }
    const warnings = stderr.mock.calls.map(([chunk]) => String(chunk)).join('');
    expect(warnings).not.toContain('No application metrics to publish');
    stderr.mockRestore();
  });

  it('counts exports (rows, bytes), e-mails and Discord posts per function', () => {
    workerMetrics.publishExportMetrics(120, 48_000);
    workerMetrics.publishExportMetrics(undefined, 9_000);
    workerMetrics.publishEmailSent();
    workerMetrics.publishDiscordPosts(0);
    workerMetrics.publishDiscordPosts(3);
    const lines = emitted();
    for (const line of lines) {
      expect(line._aws.CloudWatchMetrics[0]?.Dimensions).toEqual([['service', 'function']]);
      expect(line.function).toBe('webhook-delivery');
    }
    expect(lines.map(({ _aws, service, function: fn, ...values }) => values)).toEqual([
      { ExportBytes: 48_000, ExportRows: 120 },
      { ExportBytes: 9_000 },
      { EmailsSent: 1 },
      { DiscordPosts: 3 },
    ]);
  });
});
