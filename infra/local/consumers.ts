import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import {
  type _Record,
  DescribeStreamCommand,
  DynamoDBStreamsClient,
  GetRecordsCommand,
  GetShardIteratorCommand,
} from '@aws-sdk/client-dynamodb-streams';
import { DeleteMessageBatchCommand, ReceiveMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import type {
  Context,
  DynamoDBBatchResponse,
  DynamoDBRecord,
  DynamoDBStreamEvent,
  SQSBatchResponse,
  SQSEvent,
} from 'aws-lambda';
import { lambdaContext } from './lambda-event';

export type QueueHandler = (event: SQSEvent, context: Context) => Promise<SQSBatchResponse | undefined>;
export type StreamHandler = (
  event: DynamoDBStreamEvent,
  context: Context,
) => Promise<DynamoDBBatchResponse | undefined>;

export interface Consumer {
  /** Lets the work in hand finish (the stream reader then saves its position), then stops. */
  stop(): Promise<void>;
  /**
   * Stops as a crash (kill -9) would: nothing more is read, handed over, deleted or saved, and
   * nothing is waited for. What was in hand is abandoned (tests of what a restart recovers).
   */
  halt(): void;
  /** Stops taking new work until `resume` (what is in hand finishes): holds a backlog back. */
  pause(): void;
  resume(): void;
}

/**
 * When the local pollers hold back for the API. In AWS the workers run on instances of their own and
 * never take CPU from a request; here every function shares this machine's cores, so while `busy()`
 * says the API has a burst in hand, a poller waits before its next poll, for at most `maxMs` at a
 * time (a sustained load still lets each poller through once per `maxMs`). Nothing read is held
 * back: what was polled is handed to the worker at once, and the next poll catches up.
 */
export interface YieldToRequests {
  busy: () => boolean;
  maxMs: number;
}

/** Pause/resume for a polling loop: `open()` resolves at once unless paused (or the API is busy). */
function gate(yieldTo: YieldToRequests | undefined) {
  let paused = false;
  return {
    pause: () => {
      paused = true;
    },
    resume: () => {
      paused = false;
    },
    async open(running: () => boolean): Promise<void> {
      let heldSince: number | undefined;
      while (running()) {
        if (paused) {
          heldSince = undefined;
        } else {
          if (!yieldTo?.busy()) return;
          heldSince ??= Date.now();
          if (Date.now() - heldSince >= yieldTo.maxMs) return;
        }
        await sleep(10);
      }
    },
  };
}

/** GetRecords returns at most this many records per call. */
const READ_LIMIT = 1000;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Polls a queue the way Lambda's SQS event source does: batches of up to `batchSize`, partial
 * batch failures reported by message id, successes deleted, failures left to reappear after the
 * visibility timeout (and to move to the dead-letter queue by the queue's redrive policy). A handler
 * that throws fails the whole batch.
 */
export function startQueueConsumer(options: {
  name: string;
  endpoint: string;
  queueUrl: string;
  queueArn: string;
  batchSize: number;
  handler: QueueHandler;
  onError?: (error: unknown) => void;
  yieldTo?: YieldToRequests;
}): Consumer {
  const sqs = new SQSClient({ endpoint: options.endpoint, useQueueUrlAsEndpoint: false });
  const held = gate(options.yieldTo);
  let running = true;
  let halted = false;
  const report = (error: unknown) => {
    if (!halted) options.onError?.(error);
  };
  const loop = (async () => {
    while (running) {
      await held.open(() => running);
      if (!running) break;
      try {
        const { Messages = [] } = await sqs.send(
          new ReceiveMessageCommand({
            QueueUrl: options.queueUrl,
            MaxNumberOfMessages: Math.min(10, options.batchSize),
            WaitTimeSeconds: 1,
            MessageSystemAttributeNames: ['All'],
            MessageAttributeNames: ['All'],
          }),
        );
        if (Messages.length === 0 || !running) continue;
        const event: SQSEvent = {
          Records: Messages.map((message) => ({
            messageId: message.MessageId ?? '',
            receiptHandle: message.ReceiptHandle ?? '',
            body: message.Body ?? '',
            attributes: (message.Attributes ?? {}) as SQSEvent['Records'][number]['attributes'],
            messageAttributes: {},
            md5OfBody: message.MD5OfBody ?? '',
            eventSource: 'aws:sqs',
            eventSourceARN: options.queueArn,
            awsRegion: process.env.AWS_REGION ?? 'us-east-1',
          })),
        };
        let failed = new Set(Messages.map((message) => message.MessageId));
        try {
          const result = await options.handler(event, lambdaContext(options.name, 900_000));
          failed = new Set((result?.batchItemFailures ?? []).map((failure) => failure.itemIdentifier));
        } catch (error) {
          report(error);
        }
        const done = Messages.filter((message) => !failed.has(message.MessageId));
        if (done.length > 0 && !halted) {
          await sqs.send(
            new DeleteMessageBatchCommand({
              QueueUrl: options.queueUrl,
              Entries: done.map((message, i) => ({ Id: String(i), ReceiptHandle: message.ReceiptHandle })),
            }),
          );
        }
      } catch (error) {
        report(error);
        await sleep(500);
      }
    }
  })();
  return {
    stop: async () => {
      running = false;
      await loop;
      sqs.destroy();
    },
    halt: () => {
      running = false;
      halted = true;
      void loop.then(() => sqs.destroy());
    },
    pause: held.pause,
    resume: held.resume,
  };
}

function toLambdaRecord(record: _Record, streamArn: string): DynamoDBRecord {
  return {
    eventID: record.eventID,
    eventName: record.eventName,
    eventVersion: record.eventVersion,
    eventSource: 'aws:dynamodb',
    awsRegion: record.awsRegion,
    eventSourceARN: streamArn,
    dynamodb: record.dynamodb as DynamoDBRecord['dynamodb'],
  };
}

export interface StreamSubscriber {
  name: string;
  batchSize: number;
  handler: StreamHandler;
  /** Entity tags to deliver (Lambda's event-source filter); everything when absent. */
  entities?: readonly string[];
  /** Also deliver REMOVE records of those entities (matched on the old image). */
  removals?: boolean;
  /** The subscriber's own errors; the reader's go to the reader's `onError`. */
  onError?: (error: unknown) => void;
}

/**
 * One subscriber's view of the stream, as one Lambda event source mapping: its own backlog per
 * shard, batches of up to `batchSize`, `ReportBatchItemFailures` semantics (the batch is retried
 * from the first failed record, up to `maxRetries`, then that record is skipped and reported).
 */
function subscription(
  subscriber: StreamSubscriber,
  streamArn: string,
  options: {
    maxRetries: number;
    retryDelayMs: number;
    onError: ((error: unknown) => void) | undefined;
    /** After each drain of a shard: the reader may save its position. */
    onSettled: () => void;
    /** The reader was halted: nothing more is handed over. */
    halted: () => boolean;
  },
) {
  const { maxRetries } = options;
  const reportError = subscriber.onError ?? options.onError;
  const onError = (error: unknown) => {
    if (!options.halted()) reportError?.(error);
  };
  const backlogs = new Map<string, _Record[]>();
  const draining = new Map<string, Promise<void>>();
  const attempts = new Map<string, number>();
  const wanted = (record: _Record): boolean =>
    !subscriber.entities ||
    subscriber.entities.includes(record.dynamodb?.NewImage?.entity?.S ?? '') ||
    (subscriber.removals === true &&
      record.eventName === 'REMOVE' &&
      subscriber.entities.includes(record.dynamodb?.OldImage?.entity?.S ?? ''));

  /** Delivers what is waiting on the shard, in order, until done or a batch fails (kept for later). */
  const drain = async (shardId: string): Promise<void> => {
    const records = backlogs.get(shardId) ?? [];
    let done = 0;
    while (done < records.length && !options.halted()) {
      const batch = records.slice(done, done + subscriber.batchSize);
      let failedAt = -1;
      try {
        const result = await subscriber.handler(
          { Records: batch.map((record) => toLambdaRecord(record, streamArn)) },
          lambdaContext(subscriber.name, 900_000),
        );
        const firstFailure = result?.batchItemFailures[0]?.itemIdentifier;
        failedAt = firstFailure
          ? batch.findIndex((record) => record.dynamodb?.SequenceNumber === firstFailure)
          : -1;
      } catch (error) {
        onError(error);
        failedAt = 0;
      }
      if (failedAt < 0) {
        attempts.delete(shardId);
        done += batch.length;
        continue;
      }
      const tries = (attempts.get(shardId) ?? 0) + 1;
      if (tries <= maxRetries) {
        attempts.set(shardId, tries);
        done += failedAt;
        await sleep(options.retryDelayMs);
        break;
      }
      onError(new Error(`${subscriber.name}: skipping a stream record after ${maxRetries} retries`));
      attempts.delete(shardId);
      done += failedAt + 1;
    }
    // Records read while this drain ran were appended to the same array: keep them too.
    backlogs.set(shardId, (backlogs.get(shardId) ?? records).slice(done));
  };

  return {
    /** Queues the records this subscriber wants; how many that was. */
    add(shardId: string, records: readonly _Record[]): number {
      const mine = records.filter(wanted);
      if (mine.length === 0) return 0;
      const backlog = backlogs.get(shardId) ?? [];
      backlog.push(...mine);
      backlogs.set(shardId, backlog);
      return mine.length;
    },
    /** Starts delivering the shard's backlog unless that is under way: the reader does not wait. */
    kick(shardId: string) {
      if (draining.has(shardId) || (backlogs.get(shardId)?.length ?? 0) === 0) return;
      draining.set(
        shardId,
        drain(shardId).finally(() => {
          draining.delete(shardId);
          options.onSettled();
        }),
      );
    },
    /** The sequence number of the shard's oldest record this subscriber has not finished with. */
    firstPending: (shardId: string): string | undefined =>
      backlogs.get(shardId)?.[0]?.dynamodb?.SequenceNumber,
    settled: () => Promise.all(draining.values()),
  };
}

/**
 * Where the reader left each shard of the stream, kept in a file (under `DATA_DIR`) so that a
 * restart resumes there: for each shard, the last record that every subscriber has handled (or
 * skipped after its retries, or did not want); `null` when none yet (the shard is then read from
 * its oldest record). Records after it may have been handled too: a restart hands them over again
 * (at least once), never skips one.
 */
interface StreamPosition {
  streamArn: string;
  shards: Record<string, string | null>;
}

/** The saved position; `undefined` when there is none yet, `'unreadable'` when the file is not one. */
function readPosition(file: string): StreamPosition | 'unreadable' | undefined {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
  try {
    const parsed = JSON.parse(text) as Partial<StreamPosition> | null;
    if (typeof parsed?.streamArn === 'string' && typeof parsed.shards === 'object' && parsed.shards)
      return { streamArn: parsed.streamArn, shards: parsed.shards };
  } catch {
    // Not JSON: as unreadable as a file of the wrong shape.
  }
  return 'unreadable';
}

/** Whole or not at all: a crash while saving leaves the previous position. */
function writePosition(file: string, text: string): void {
  const temporary = `${file}.${process.pid}.tmp`;
  writeFileSync(temporary, text);
  renameSync(temporary, file);
}

/** Where a shard is first read from. */
type StartAt =
  /** The newest record (no saved position, nothing to keep one in): what the reader always did. */
  | { type: 'LATEST' }
  /** The same start, at a known record: the shard is read through (handed to no one) first. */
  | { type: 'END' }
  | { type: 'TRIM_HORIZON' }
  | { type: 'AFTER_SEQUENCE_NUMBER'; sequenceNumber: string };

interface ShardState {
  /** Undefined once the shard is closed and read to its end. */
  iterator: string | undefined;
  /** Sequence numbers read and not yet handled by every subscriber, oldest first. */
  unconfirmed: string[];
  /** The last record every subscriber has handled: where a restart resumes. */
  handled: string | null;
}

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
  const held = gate(options.yieldTo);
  let running = true;
  let halted = false;
  const onError = (error: unknown) => {
    if (!halted) options.onError?.(error);
  };

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

  const iteratorOf = async (shardId: string, start: Exclude<StartAt, { type: 'END' }>) =>
    (
      await streams.send(
        new GetShardIteratorCommand({
          StreamArn: streamArn,
          ShardId: shardId,
          ShardIteratorType: start.type,
          ...(start.type === 'AFTER_SEQUENCE_NUMBER' ? { SequenceNumber: start.sequenceNumber } : {}),
        }),
      )
    ).ShardIterator;

  /** The records the reader had yet to reach are gone: older than the stream keeps (24 hours, in DynamoDB Local too). */
  const trimmed = (error: unknown, shardId: string): boolean => {
    if ((error as Error).name !== 'TrimmedDataAccessException') return false;
    onError(
      new Error(
        `stream shard ${shardId}: records not yet handed over are older than the stream keeps (24 hours) and gone; reading from the oldest kept`,
      ),
    );
    return true;
  };

  /** One read of a shard; if the records it points at were trimmed, from the oldest record kept. */
  const read = async (shardId: string, iterator: string) => {
    try {
      return await streams.send(new GetRecordsCommand({ ShardIterator: iterator, Limit: READ_LIMIT }));
    } catch (error) {
      if (!trimmed(error, shardId)) throw error;
      const oldest = await iteratorOf(shardId, { type: 'TRIM_HORIZON' });
      return streams.send(new GetRecordsCommand({ ShardIterator: oldest, Limit: READ_LIMIT }));
    }
  };

  const open = async (shardId: string, start: StartAt): Promise<ShardState> => {
    if (start.type === 'END') {
      // Everything the shard holds now is passed over, and the last record of it noted.
      let iterator = await iteratorOf(shardId, { type: 'TRIM_HORIZON' });
      let last: string | null = null;
      while (iterator) {
        const result = await read(shardId, iterator);
        const records = result.Records ?? [];
        last = records.at(-1)?.dynamodb?.SequenceNumber ?? last;
        iterator = result.NextShardIterator;
        if (records.length === 0) break;
      }
      return { iterator, unconfirmed: [], handled: last };
    }
    const handled = start.type === 'AFTER_SEQUENCE_NUMBER' ? start.sequenceNumber : null;
    try {
      return { iterator: await iteratorOf(shardId, start), unconfirmed: [], handled };
    } catch (error) {
      // DynamoDB says so here; DynamoDB Local at the first read (see `read`).
      if (!trimmed(error, shardId)) throw error;
      return { iterator: await iteratorOf(shardId, { type: 'TRIM_HORIZON' }), unconfirmed: [], handled };
    }
  };

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
