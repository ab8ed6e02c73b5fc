import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { DeleteCommand, GetCommand, PutCommand, ScanCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { clock } from '../clock';
import { uuidv7Ms } from '../ids';
import { db, tableName, ttlSeconds } from './client';
import { conversationItem, storedConversationOf } from './conversation-item';
import { keys } from './keys';

export interface ShardBackfillProgress {
  /** Items the Scan read. */
  scanned: number;
  /** Conversations whose listing and sync keys were moved to their shard. */
  conversationsUpdated: number;
  /** Events copied to their shard (`ORG#o#EVENTS#<n>`) from the single partition. */
  eventsMoved: number;
  /** Expired events of the single partition, deleted rather than moved. */
  eventsDropped: number;
  /**
   * Old items of copied events younger than STREAM_HORIZON_MS, left in place (a stream record may
   * still read them there) until a later run or their TTL deletes them; the feed reads the copy.
   */
  eventsHeld: number;
}

/**
 * The table's stream keeps a record 24 hours, and the webhook fan-out reads the event a record
 * names by its key (functions/workers/webhook-fanout.ts): an old item is deleted only once no record
 * still being delivered, retried or redriven can name it.
 */
export const STREAM_HORIZON_MS = 24 * 3_600_000;

/** The listing and sync keys issue 37 spread over shards (`…#<n>`). */
const SHARDED_INDEX_KEYS = ['gsi1pk', 'gsi2pk', 'gsi3pk'] as const;

/** Items written at once, per Scan page. */
const CONCURRENCY = 16;

type Item = Record<string, unknown>;

const isConditionFailure = (error: unknown) => error instanceof ConditionalCheckFailedException;

/** The organization of an item of the events' single partition (before issue 37); undefined otherwise. */
const legacyEventsOwner = (pk: unknown): string | undefined =>
  typeof pk === 'string' ? /^ORG#([^#]+)#EVENTS$/.exec(pk)?.[1] : undefined;

/** What a sharded key was before its shard suffix: `…#<n>` less `#<n>`. */
const unsharded = (key: string): string => key.slice(0, key.lastIndexOf('#'));

/**
 * A one-off for tables written before issue 37 (sharded keys): the conversation listings, the
 * incremental sync and the events feed read only the sharded partitions, so what older code wrote
 * is invisible to them until this moves it. Nothing lists those items by their new keys (that is
 * what is missing), so this is the table's one Scan, page by page:
 *
 * - A conversation whose `gsi1pk`, `gsi2pk` or `gsi3pk` is the unsharded value of what
 *   `conversationItem` gives its stored state gets the sharded value, and only those attributes
 *   change, each on the condition that the old value is still there: a write meanwhile that set
 *   one wins, and the item is read again for what is left.
 * - An event of `ORG#o#EVENTS` is copied to `keys.event` (a Put on `attribute_not_exists`, then
 *   `entity` set by an Update: the copy's INSERT carries no `entity`, so the webhook fan-out, which
 *   acts on event INSERTs, does not deliver the event a second time), then its old item is
 *   deleted, once it is older than STREAM_HORIZON_MS. An expired one is only deleted.
 *
 * Idempotent and resumable: run it again, and only what is left is written. Realtime notices need
 * nothing (they live 24 hours).
 */
export async function backfillShardedKeys(
  onPage: (progress: ShardBackfillProgress) => void = () => undefined,
): Promise<ShardBackfillProgress> {
  const progress: ShardBackfillProgress = {
    scanned: 0,
    conversationsUpdated: 0,
    eventsMoved: 0,
    eventsDropped: 0,
    eventsHeld: 0,
  };
  let startKey: Record<string, unknown> | undefined;
  do {
    const page = await db.send(
      new ScanCommand({
        TableName: tableName,
        FilterExpression: 'entity IN (:conversation, :event)',
        ExpressionAttributeValues: { ':conversation': 'conversation', ':event': 'event' },
        ExclusiveStartKey: startKey,
      }),
    );
    progress.scanned += page.ScannedCount ?? 0;
    const work = (page.Items ?? []).map((item) => async () => {
      if (item.entity === 'conversation') {
        if (await shardConversation(item)) progress.conversationsUpdated++;
        return;
      }
      const orgId = legacyEventsOwner(item.pk);
      if (!orgId) return;
      const moved = await moveEvent(orgId, item);
      if (moved.dropped) progress.eventsDropped++;
      if (moved.copied) progress.eventsMoved++;
      if (moved.held) progress.eventsHeld++;
    });
    for (let i = 0; i < work.length; i += CONCURRENCY)
      await Promise.all(work.slice(i, i + CONCURRENCY).map((run) => run()));
    onPage({ ...progress });
    startKey = page.LastEvaluatedKey;
  } while (startKey);
  return progress;
}

/**
 * Moves the conversation's unsharded index keys to their shard; whether it wrote any. Read again
 * after a failed condition (a post moves `gsi1pk`, not `gsi2pk`): a few rounds settle it.
 */
async function shardConversation(scanned: Item): Promise<boolean> {
  let item: Item | undefined = scanned;
  for (let attempt = 0; item && attempt < 5; attempt++) {
    const owner = keys.parseConversationPartition(String(item.pk));
    if (!owner || item.sk !== 'CONVERSATION') return false;
    const wanted: Item = conversationItem({
      ...storedConversationOf(item),
      organizationId: owner.orgId,
      id: owner.conversationId,
    });
    const names: Record<string, string> = {};
    const values: Record<string, unknown> = {};
    const sets: string[] = [];
    const conditions: string[] = [];
    for (const name of SHARDED_INDEX_KEYS) {
      const sharded = wanted[name];
      // Absent (a deleted conversation's listings, a purged one's sync entry) or already sharded:
      // nothing to do. Any other value is not what the old code wrote for this state: left alone.
      if (typeof sharded !== 'string' || item[name] !== unsharded(sharded)) continue;
      names[`#${name}`] = name;
      values[`:${name}`] = sharded;
      values[`:old_${name}`] = item[name];
      sets.push(`#${name} = :${name}`);
      conditions.push(`#${name} = :old_${name}`);
    }
    if (sets.length === 0) return false;
    try {
      await db.send(
        new UpdateCommand({
          TableName: tableName,
          Key: { pk: item.pk, sk: item.sk },
          UpdateExpression: `SET ${sets.join(', ')}`,
          ConditionExpression: conditions.join(' AND '),
          ExpressionAttributeNames: names,
          ExpressionAttributeValues: values,
        }),
      );
      return true;
    } catch (error) {
      if (!isConditionFailure(error)) throw error;
    }
    item = (
      await db.send(
        new GetCommand({ TableName: tableName, Key: { pk: item.pk, sk: item.sk }, ConsistentRead: true }),
      )
    ).Item;
  }
  return false;
}

/** When the event was minted: its `timestamp`, else its UUIDv7 id's millisecond. */
function mintedMs(item: Item): number {
  const stamped = typeof item.timestamp === 'string' ? Date.parse(item.timestamp) : Number.NaN;
  if (!Number.isNaN(stamped)) return stamped;
  // Unreadable: taken as new, so its old item is kept rather than deleted too early.
  return uuidv7Ms(String(item.id)) ?? clock.nowMs();
}

/** One event of the single partition, moved to its shard (or dropped, when expired). */
async function moveEvent(
  orgId: string,
  item: Item,
): Promise<{ dropped?: boolean; copied?: boolean; held?: boolean }> {
  const old = { pk: item.pk, sk: item.sk };
  const deleteOld = async (): Promise<void> => {
    try {
      await db.send(
        new DeleteCommand({ TableName: tableName, Key: old, ConditionExpression: 'attribute_exists(pk)' }),
      );
    } catch (error) {
      // Deleted meanwhile (TTL, another run): nothing left to do.
      if (!isConditionFailure(error)) throw error;
    }
  };
  const nowMs = clock.nowMs();
  // As the feed sees it: served only while `expiresAt` is in the future.
  if (typeof item.expiresAt === 'number' && item.expiresAt <= ttlSeconds(nowMs)) {
    await deleteOld();
    return { dropped: true };
  }
  // Not an event the feed could name: left alone.
  if (typeof item.id !== 'string' || !item.id) return {};
  const key = keys.event(orgId, item.id);
  const { entity: _entity, ...rest } = item;
  let copied = false;
  try {
    await db.send(
      new PutCommand({
        TableName: tableName,
        Item: { ...rest, ...key },
        ConditionExpression: 'attribute_not_exists(pk)',
      }),
    );
    copied = true;
  } catch (error) {
    // Copied by an earlier run (stopped before it deleted the old item, or holding it).
    if (!isConditionFailure(error)) throw error;
  }
  try {
    await db.send(
      new UpdateCommand({
        TableName: tableName,
        Key: key,
        UpdateExpression: 'SET #entity = :entity',
        ConditionExpression: 'attribute_exists(pk) AND attribute_not_exists(#entity)',
        ExpressionAttributeNames: { '#entity': 'entity' },
        ExpressionAttributeValues: { ':entity': item.entity },
      }),
    );
  } catch (error) {
    // Already an event (set by an earlier run), or gone (expired since): nothing to set.
    if (!isConditionFailure(error)) throw error;
  }
  const held = nowMs - mintedMs(item) < STREAM_HORIZON_MS;
  if (!held) await deleteOld();
  return { copied, held };
}
