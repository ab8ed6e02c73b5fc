import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { DescribeStreamCommand, DynamoDBStreamsClient } from '@aws-sdk/client-dynamodb-streams';
import { type Consumer, sleep } from './consumer';
import { readPosition, type StreamPosition, writePosition } from './stream-position';
import { READ_LIMIT, type ShardState, type StartAt, shardAccess } from './stream-shards';
import { type StreamSubscriber, subscription } from './stream-subscription';
import { pollGate, type YieldToRequests } from './yield-to-requests';

/**
 * Lambda's DynamoDB stream event sources, locally: no emulator runs event source mappings, so this
 * loop reads DynamoDB Local's stream and hands each stream worker its records, once for all of them.
 */

/**
 * Reads the table's stream the way Lambda's DynamoDB event sources do, one reader for all of them
 * (each AWS event source mapping reads on its own; locally one read serves every subscriber, which
 * keeps DynamoDB Local's work per record constant however many workers there are). Every shard in
 * order; each subscriber gets its records in order, with its own batches and failure handling.
 *
 * Without `positionFile` the shards present at start are read from their newest record (what
 * happened before is not handed over), like a new event source mapping at LATEST. With it, the
 * reader keeps there, after each batch every subscriber has handled, how far each shard is done,
 * and a restart resumes after that record: an event committed before a crash and not yet handed
 * over is handed over after the restart (at least once: what was in hand may come again). A shard
 * the position does not name (new since, or the stream is not the one saved) is read from its
 * oldest record; if the records after the saved one are gone (DynamoDB Local, like DynamoDB, keeps
 * 24 hours), from the oldest kept. With no position saved yet, the start is the newest record, as
 * without a file, and is saved at once.
 */
export function startStreamConsumers(options: {
  endpoint: string;
  streamArn: string;
  subscribers: readonly StreamSubscriber[];
  maxRetries?: number;
  pollMs?: number;
  /** Where to keep the position between runs (a JSON file; its folder is created). */
  positionFile?: string | undefined;
  onError?: (error: unknown) => void;
  yieldTo?: YieldToRequests;
}): Consumer {
  const { streamArn, positionFile } = options;
  const streams = new DynamoDBStreamsClient({ endpoint: options.endpoint });
  const shards = new Map<string, ShardState>();
  const held = pollGate(options.yieldTo);
  let running = true;
  let halted = false;
  const onError = (error: unknown) => {
    if (!halted) options.onError?.(error);
  };
  const { open, read } = shardAccess(streams, streamArn, onError);

  let saved: StreamPosition | 'unreadable' | undefined;
  let written = '';
  if (positionFile) {
    mkdirSync(dirname(positionFile), { recursive: true });
    saved = readPosition(positionFile);
    if (saved === 'unreadable')
      onError(
        new Error(`${positionFile} is not a stream position: reading every shard from its oldest record`),
      );
  }

  /** Moves each shard's position up to the oldest record some subscriber still has, then saves it. */
  const save = () => {
    if (!positionFile || halted) return;
    const position: StreamPosition = { streamArn, shards: {} };
    for (const [shardId, shard] of shards) {
      let done = shard.unconfirmed.length;
      for (const subscribed of subscriptions) {
        const pending = subscribed.firstPending(shardId);
        if (pending !== undefined) done = Math.min(done, Math.max(0, shard.unconfirmed.indexOf(pending)));
      }
      if (done > 0) {
        shard.handled = shard.unconfirmed[done - 1] ?? shard.handled;
        shard.unconfirmed.splice(0, done);
      }
      position.shards[shardId] = shard.handled;
    }
    const text = `${JSON.stringify(position, null, 2)}\n`;
    if (text === written) return;
    try {
      writePosition(positionFile, text);
      written = text;
    } catch (error) {
      onError(error);
    }
  };

  const subscriptions = options.subscribers.map((subscriber) =>
    subscription(subscriber, streamArn, {
      maxRetries: options.maxRetries ?? 3,
      retryDelayMs: options.pollMs ?? 200,
      onError: options.onError,
      onSettled: save,
      halted: () => halted,
    }),
  );

  /** Where a shard present at start is read from. */
  const startOf = (shardId: string): StartAt => {
    if (!positionFile) return { type: 'LATEST' };
    if (saved === undefined) return { type: 'END' };
    if (saved === 'unreadable' || saved.streamArn !== streamArn) return { type: 'TRIM_HORIZON' };
    const sequenceNumber = saved.shards[shardId];
    return sequenceNumber ? { type: 'AFTER_SEQUENCE_NUMBER', sequenceNumber } : { type: 'TRIM_HORIZON' };
  };

  const discoverShards = async (first: boolean) => {
    const { StreamDescription } = await streams.send(new DescribeStreamCommand({ StreamArn: streamArn }));
    for (const shard of StreamDescription?.Shards ?? []) {
      if (!shard.ShardId || shards.has(shard.ShardId)) continue;
      // Shards present at start: from the saved position (or the newest record); later ones from the beginning.
      shards.set(
        shard.ShardId,
        await open(shard.ShardId, first ? startOf(shard.ShardId) : { type: 'TRIM_HORIZON' }),
      );
    }
  };

  const loop = (async () => {
    let discoveredAt = 0;
    let first = true;
    while (running) {
      await held.open(() => running);
      if (!running) break;
      let busy = false;
      try {
        if (Date.now() - discoveredAt > 1_000) {
          await discoverShards(first);
          first = false;
          discoveredAt = Date.now();
        }
        for (const [shardId, shard] of shards) {
          // Each subscriber works through its own backlog: a slow or retrying one holds up no other.
          if (shard.iterator) {
            const result = await read(shardId, shard.iterator);
            if (halted) break;
            shard.iterator = result.NextShardIterator;
            const records = result.Records ?? [];
            if (positionFile)
              for (const record of records) shard.unconfirmed.push(record.dynamodb?.SequenceNumber ?? '');
            let wanted = 0;
            for (const subscribed of subscriptions) wanted += subscribed.add(shardId, records);
            // More is likely waiting after a full read or one with work in it: read again at once.
            // A read of nothing but records no worker wants (e.g. delivery records) waits like an empty one.
            if (records.length === READ_LIMIT || wanted > 0) busy = true;
          }
          for (const subscribed of subscriptions) subscribed.kick(shardId);
        }
        // Records no one wanted, and the start itself, are saved here; handled ones as each drain ends.
        save();
      } catch (error) {
        busy = false;
        onError(error);
      }
      // A poll that returned records is followed at once (more may be waiting), as Lambda does.
      if (!busy) await sleep(options.pollMs ?? 200);
    }
  })();

  return {
    stop: async () => {
      running = false;
      await loop;
      await Promise.all(subscriptions.map((subscribed) => subscribed.settled()));
      save();
      streams.destroy();
    },
    halt: () => {
      running = false;
      halted = true;
      void loop.then(() => streams.destroy());
    },
    pause: held.pause,
    resume: held.resume,
  };
}

/** One subscriber on its own reader (tests). */
export function startStreamConsumer(
  options: StreamSubscriber & {
    endpoint: string;
    streamArn: string;
    maxRetries?: number;
    pollMs?: number;
    positionFile?: string;
  },
): Consumer {
  const { endpoint, streamArn, maxRetries, pollMs, positionFile, ...subscriber } = options;
  return startStreamConsumers({
    endpoint,
    streamArn,
    subscribers: [subscriber],
    positionFile,
    ...(maxRetries === undefined ? {} : { maxRetries }),
    ...(pollMs === undefined ? {} : { pollMs }),
    ...(subscriber.onError ? { onError: subscriber.onError } : {}),
  });
}
