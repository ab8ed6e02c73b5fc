import { marshall } from '@aws-sdk/util-dynamodb';
import type { DynamoDBRecord } from 'aws-lambda';
import { describe, expect, it } from 'vitest';
import { type StoredConversation, withChange } from '../../shared/conversations/state';
import { conversationItem } from '../../shared/db/conversation-item';
import { newConversation } from '../../shared/db/conversations';
import { uuidv7 } from '../../shared/ids';
import { visitorExample } from '../../shared/schemas/examples';
import { useInProcessStack } from '../helpers/in-process-stack';

/**
 * The daily aggregates are counted from the table's stream, off the request path: what each change
 * adds is read from the images a record carries, and a record delivered again (the stream delivers
 * at least once) or by two consumers at once still counts once. Read back through `stats.days`, as
 * the analytics endpoints read them.
 */
useInProcessStack();

type StreamImage = NonNullable<NonNullable<DynamoDBRecord['dynamodb']>['NewImage']>;
const image = (item: object) => marshall(item, { removeUndefinedValues: true }) as unknown as StreamImage;

let sequence = 0;
/** A stream record of an item's change, as Lambda hands it to the consumer. */
function record(
  eventName: 'INSERT' | 'MODIFY' | 'REMOVE',
  before: object | undefined,
  after: object | undefined,
): DynamoDBRecord {
  sequence++;
  return {
    eventID: `${Date.now()}-${sequence}-${Math.random()}`,
    eventName,
    dynamodb: {
      SequenceNumber: String(sequence).padStart(21, '0'),
      ...(before ? { OldImage: image(before) } : {}),
      ...(after ? { NewImage: image(after) } : {}),
    },
  };
}

function conversation(orgId: string, changes: Partial<StoredConversation> = {}): StoredConversation {
  return {
    ...newConversation({
      id: uuidv7(),
      organizationId: orgId,
      visitor: visitorExample,
      operatorId: null,
      status: 'open',
      priority: 'normal',
      source: 'api',
      snoozedUntil: null,
      createdAt: '2026-11-20T23:50:00.000Z',
      title: 'Order late',
      tags: [],
      customFields: {},
      language: null,
      metadata: {},
    }),
    ...changes,
  };
}

const message = (orgId: string, conversationId: string, senderType: string, createdAt: string) => ({
  pk: `ORG#${orgId}#CONV#${conversationId}`,
  sk: `MSG#${uuidv7()}`,
  entity: 'message',
  orgId,
  conversationId,
  senderType,
  createdAt,
});

async function days(orgId: string) {
  const { stats } = await import('../../shared/db/stats');
  return stats.days(orgId, '2026-11-20', '2026-11-22');
}

describe('daily aggregates from the stream', () => {
  it('counts a day of one conversation from its records: created, messages by sender, first response, close, CSAT', async () => {
    const { countRecords } = await import('../../shared/db/stats-stream');
    const orgId = uuidv7();
    const created = conversation(orgId);
    const answered = {
      ...created,
      firstVisitorMessageAt: '2026-11-20T23:55:00.000Z',
      // Answered 10 minutes later: past midnight, so the first response counts on the 21st.
      firstResponseTimeMs: 600_000,
    };
    const closed = withChange(answered, { status: 'closed' }, '2026-11-21T08:00:00.000Z');
    const survey = { surveyId: uuidv7(), score: 4, day: '2026-11-21', operatorId: null };
    const rated = { ...closed, activeSurvey: survey, rev: closed.rev + 1 };
    const records = [
      record('INSERT', undefined, conversationItem(created)),
      record('INSERT', undefined, message(orgId, created.id, 'visitor', '2026-11-20T23:55:00.000Z')),
      record('INSERT', undefined, message(orgId, created.id, 'operator', '2026-11-21T00:05:00.000Z')),
      record('INSERT', undefined, message(orgId, created.id, 'system', '2026-11-21T00:06:00.000Z')),
      record('MODIFY', conversationItem(created), conversationItem(answered)),
      record('MODIFY', conversationItem(answered), conversationItem(closed)),
      record('MODIFY', conversationItem(closed), conversationItem(rated)),
      // Edits, reads and a purge's removal add nothing.
      record(
        'MODIFY',
        message(orgId, created.id, 'visitor', '2026-11-20T23:55:00.000Z'),
        message(orgId, created.id, 'visitor', '2026-11-20T23:55:00.000Z'),
      ),
    ];

    expect(await countRecords(records)).toEqual(new Set());

    const byDay = await days(orgId);
    expect(byDay.get('2026-11-20')).toMatchObject({ conversationsCreated: 1, visitorMessages: 1 });
    expect(byDay.get('2026-11-20')?.firstResponses).toBe(0);
    expect(byDay.get('2026-11-21')).toMatchObject({
      conversationsCreated: 0,
      conversationsClosed: 1,
      operatorMessages: 1,
      firstResponses: 1,
      firstResponseMsSum: 600_000,
      csatResponses: 1,
      csatScoreSum: 4,
    });
  });

  it('a deletion takes a counted survey response off its own day; a purge after it changes nothing', async () => {
    const { countRecords } = await import('../../shared/db/stats-stream');
    const orgId = uuidv7();
    const survey = { surveyId: uuidv7(), score: 2, day: '2026-11-20', operatorId: uuidv7() };
    const rated = conversation(orgId, { activeSurvey: survey });
    const deleted = withChange(rated, { deletedAt: '2026-11-22T09:00:00.000Z' }, '2026-11-22T09:00:00.000Z');
    await countRecords([record('MODIFY', conversationItem(conversation(orgId)), conversationItem(rated))]);
    expect((await days(orgId)).get('2026-11-20')?.csatResponses).toBe(1);

    await countRecords([
      record('MODIFY', conversationItem(rated), conversationItem(deleted)),
      record('REMOVE', conversationItem(deleted), undefined),
    ]);

    const byDay = await days(orgId);
    expect(byDay.get('2026-11-20')).toMatchObject({ csatResponses: 0, csatScoreSum: 0 });
    expect(byDay.get('2026-11-22')).toBeUndefined();
  });

  it('counts each record once when the stream delivers it again, and when two consumers take it at once', async () => {
    const { countRecords } = await import('../../shared/db/stats-stream');
    const orgId = uuidv7();
    const conversations = Array.from({ length: 30 }, () => conversation(orgId));
    const records = conversations.flatMap((created) => [
      record('INSERT', undefined, conversationItem(created)),
      record('INSERT', undefined, message(orgId, created.id, 'visitor', '2026-11-20T23:51:00.000Z')),
      record('INSERT', undefined, message(orgId, created.id, 'visitor', '2026-11-20T23:52:00.000Z')),
    ]);

    await countRecords(records.slice(0, 40));
    // Redelivered from the 20th record on (a failure reported there), twice at once.
    await Promise.all([countRecords(records.slice(20)), countRecords(records.slice(20))]);
    await countRecords(records);

    expect((await days(orgId)).get('2026-11-20')).toMatchObject({
      conversationsCreated: 30,
      visitorMessages: 60,
    });
  });

  it('a batch of more records than one transaction holds is counted in several, each exactly', async () => {
    const { countRecords } = await import('../../shared/db/stats-stream');
    const orgId = uuidv7();
    const created = conversation(orgId);
    const records = Array.from({ length: 250 }, (_, i) =>
      record(
        'INSERT',
        undefined,
        message(orgId, created.id, i % 2 ? 'operator' : 'visitor', `2026-11-2${i % 3}T12:00:00.000Z`),
      ),
    );

    expect(await countRecords(records)).toEqual(new Set());

    const byDay = await days(orgId);
    const total = [...byDay.values()].reduce(
      (sum, day) => sum + day.visitorMessages + day.operatorMessages,
      0,
    );
    expect(total).toBe(250);
    expect(byDay.get('2026-11-20')).toMatchObject({ visitorMessages: 42, operatorMessages: 42 });
  });
});
