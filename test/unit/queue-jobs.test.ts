import { describe, expect, it } from 'vitest';
import { parseJob } from '../../shared/batch';
import { type QueueName, queueJobs } from '../../shared/queue-jobs';
import { queueDefinitions } from '../../shared/resources';

const ORG = '0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b';
const ID = '0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5c';

/** Per queue: a job its producer sends, and one its worker must refuse (reported, then dead letters). */
const cases: Record<QueueName, { valid: unknown; invalid: unknown }> = {
  'webhook-deliveries': {
    valid: {
      orgId: ORG,
      webhookId: ID,
      deliveryId: ID,
      first: {
        eventId: ID,
        event: 'conversation.created',
        createdAt: '2026-11-26T10:00:00.000Z',
        payload: '{}',
      },
    },
    invalid: { orgId: ORG, webhookId: ID, deliveryId: ID, secret: 'smuggled' },
  },
  'malware-scan-results': {
    valid: {
      'detail-type': 'GuardDuty Malware Protection Object Scan Result',
      detail: {
        s3ObjectDetails: { bucketName: 'uploads', objectKey: `files/${ORG}/${ID}` },
        scanResultDetails: { scanResultStatus: 'THREATS_FOUND', threats: [{ name: 'EICAR' }] },
      },
    },
    invalid: { detail: { s3ObjectDetails: {} } },
  },
  'conversation-purge': {
    valid: { orgId: ORG, conversationId: ID, after: 'MSG#0190' },
    invalid: { orgId: ORG, conversationId: 'not-a-uuid' },
  },
  'visitor-jobs': {
    valid: { orgId: ORG, visitorId: ID, kind: 'erase', after: `CONV#${ID}#MSG#0190` },
    invalid: { orgId: ORG, visitorId: ID, kind: 'delete' },
  },
  'pdf-jobs': {
    valid: { orgId: ORG, jobId: ID, conversationId: ID },
    invalid: { orgId: ORG, jobId: ID },
  },
  'discord-notifications': {
    valid: {
      orgId: ORG,
      configId: ID,
      channelId: '123456789012345678',
      eventId: ID,
      event: 'new_conversation',
      message: { embeds: [{ title: 'New conversation' }], nonce: 'n-1' },
      rateLimited: 2,
    },
    invalid: {
      orgId: ORG,
      configId: ID,
      channelId: '42',
      eventId: ID,
      event: 'new_conversation',
      message: { embeds: [] },
    },
  },
};

describe('queue jobs: one schema per queue, shared by producer and worker', () => {
  it('declares a job for every queue the stack creates', () => {
    expect(Object.keys(queueJobs).sort()).toEqual(queueDefinitions.map((queue) => queue.name).sort());
  });

  it.each(Object.keys(cases) as QueueName[])(
    '%s: the job its producer sends reads back the same, a malformed one is refused',
    (queue) => {
      const { valid, invalid } = cases[queue];
      expect(parseJob(queue, JSON.stringify(valid))).toEqual(valid);
      expect(() => parseJob(queue, JSON.stringify(invalid))).toThrow();
      expect(() => parseJob(queue, '{not json')).toThrow();
    },
  );
});
