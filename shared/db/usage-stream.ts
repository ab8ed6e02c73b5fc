import type { DynamoDBRecord } from 'aws-lambda';
import { dayOf } from '../analytics/days';
import type { UsageCounter } from '../usage/usage';
import type { Increment } from './increments';
import { imageOf } from './stream-image';
import { storedBytesIncrement, usageIncrement } from './usage';

/**
 * What the table's stream shows of an organization's usage: conversations, messages, notes and
 * events as they are inserted, webhook delivery attempts and outcomes, completed uploads (and the
 * bytes stored), PDF transcripts rendered, exports streamed and transcripts e-mailed (their audit
 * entries). Counted with the daily aggregates, once per record and with one marker for both
 * (stats-stream.ts `countRecords`), so a redelivered batch adds nothing.
 */

type Item = Record<string, unknown>;

/** Every key of the table starts with its organization: `ORG#<id>#…`. */
const organizationOf = (item: Item): string | undefined =>
  typeof item.pk === 'string' ? /^ORG#([^#]+)#/.exec(item.pk)?.[1] : undefined;

const text = (value: unknown): string | undefined => (typeof value === 'string' ? value : undefined);
const count = (value: unknown): number => (typeof value === 'number' && Number.isFinite(value) ? value : 0);

/** The day of an instant the item carries, else of the change itself (the stream's clock). */
function dayOfChange(record: DynamoDBRecord, instant: unknown): string {
  const iso = text(instant);
  if (iso && /^\d{4}-\d{2}-\d{2}T/.test(iso)) return dayOf(iso);
  const seconds = record.dynamodb?.ApproximateCreationDateTime;
  return dayOf(new Date(seconds ? seconds * 1000 : Date.now()).toISOString());
}

/** What one stream record adds to its organization's usage (nothing for most records). */
export function usageIncrementsOf(record: DynamoDBRecord): Increment[] {
  const before = imageOf(record.dynamodb?.OldImage);
  const after = imageOf(record.dynamodb?.NewImage);
  const image = after ?? before;
  const orgId = image && organizationOf(image);
  if (!image || !orgId) return [];
  const seed = `${String(image.pk)}#${String(image.sk)}`;
  const on = (day: string, add: Partial<Record<UsageCounter, number>>) => [
    usageIncrement(orgId, day, seed, add),
  ];
  const inserted = record.eventName === 'INSERT' && after !== undefined;
  switch (image.entity) {
    case 'conversation':
      return inserted ? on(dayOfChange(record, after.createdAt), { conv: 1 }) : [];
    case 'message':
      return inserted
        ? on(dayOfChange(record, after.createdAt), { msg: 1, msgV: after.senderType === 'visitor' ? 1 : 0 })
        : [];
    case 'note':
      return inserted ? on(dayOfChange(record, after.createdAt), { notes: 1 }) : [];
    case 'event':
      // A copy the shard backfill writes is inserted without its entity (shard-backfill.ts): not counted.
      return inserted ? on(dayOfChange(record, after.timestamp), { events: 1 }) : [];
    case 'delivery':
      return after ? deliveryUsage(record, before, after, on) : [];
    case 'upload':
      return uploadUsage(record, orgId, before, after, on);
    case 'exportJob':
      return after?.status === 'completed' && before?.status !== 'completed'
        ? on(dayOfChange(record, after.completedAt ?? after.updatedAt), { tr: 1 })
        : [];
    case 'orgAudit':
      return inserted ? auditUsage(record, after, on) : [];
    default:
      return [];
  }
}

type On = (day: string, add: Partial<Record<UsageCounter, number>>) => Increment[];

/** Attempts made since the image before; a success, or a delivery given up, once per move to it. */
function deliveryUsage(record: DynamoDBRecord, before: Item | undefined, after: Item, on: On): Increment[] {
  const attempted = count(after.attempts) - count(before?.attempts);
  const moved = (status: string) => after.status === status && before?.status !== status;
  const add = { whA: Math.max(0, attempted), whS: moved('succeeded') ? 1 : 0, whF: moved('failed') ? 1 : 0 };
  return add.whA || add.whS || add.whF ? on(dayOfChange(record, after.lastAttemptAt), add) : [];
}

/** An upload that became ready counts, with its bytes; its bytes are stored while it stays ready. */
function uploadUsage(
  record: DynamoDBRecord,
  orgId: string,
  before: Item | undefined,
  after: Item | undefined,
  on: On,
): Increment[] {
  const ready = (item: Item | undefined) => item?.status === 'ready';
  if (ready(before) === ready(after)) return [];
  const day = dayOfChange(record, undefined);
  if (ready(after) && after) {
    const bytes = count(after.size);
    return [...on(day, { upl: 1, uplB: bytes }), storedBytesIncrement(orgId, day, bytes)];
  }
  return [storedBytesIncrement(orgId, day, -count(before?.size))];
}

/** A streamed export, with its data rows, and a transcript e-mailed, from their audit entries. */
function auditUsage(record: DynamoDBRecord, entry: Item, on: On): Increment[] {
  const day = dayOfChange(record, entry.at);
  if (entry.type === 'export.streamed') {
    const details = entry.details as Item | undefined;
    return on(day, { exp: 1, expRows: count(details?.rows) });
  }
  if (entry.type === 'transcript.emailed') return on(day, { tr: 1 });
  return [];
}
