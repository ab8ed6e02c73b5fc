import type { queueDefinitions } from '../shared/resources';
import type { FunctionNeeds } from './needs';

/**
 * Background consumers, described once: CDK wires each to its event source (an SQS queue, or the
 * table's stream) and the local stack runs the same handler with the same event shapes.
 * Entries are `functions/workers/<name>.ts`, exporting `handler`.
 */
type QueueName = (typeof queueDefinitions)[number]['name'];

export type WorkerSource =
  | {
      kind: 'queue';
      queue: QueueName;
      batchSize: number;
      /** Batches in flight at most: the event source's `maxConcurrency` in AWS (2–1000). */
      maxConcurrency: number;
    }
  /**
   * The table's stream; `entities` keeps only records of those entity tags (an event-source filter in
   * AWS). A batch that still fails after `retryAttempts` (halved on each error: bisect) or whose
   * records are older than `maxRecordAgeSeconds` goes to the worker's on-failure SQS queue (its
   * shard and sequence numbers, not the records: redrive within the stream's 24 h retention, see
   * docs/operations.md).
   */
  | {
      kind: 'stream';
      batchSize: number;
      entities: readonly string[];
      retryAttempts: number;
      maxRecordAgeSeconds: number;
      /** Also REMOVE records of these entities (a second filter, on the old image). */
      removals?: readonly string[];
    };

export interface WorkerDefinition extends FunctionNeeds {
  name: string;
  description: string;
  source: WorkerSource;
  timeoutSeconds: number;
  /** Read from disk at run time, copied next to the bundle (paths relative to the project root). */
  bundledFiles?: readonly { from: string; to: string }[];
  /**
   * Modules the bundle takes from elsewhere (esbuild `alias`): module name → a file, relative to the
   * project root, that stands in for it.
   */
  aliases?: Readonly<Record<string, string>>;
  /**
   * Reserved concurrency: a ceiling and a floor, as a route group's. A queue worker's event source
   * never runs more batches than this (its maxConcurrency is capped to it), and needs 2 or more.
   */
  reservedConcurrency: number;
}

/**
 * One part of the table stream's general reader (`stream-router`): the records of its entities, in
 * stream order, handed to its module (`functions/workers/<name>.ts`, exporting `handler`) as Lambda
 * would hand them to a worker of its own.
 */
export interface StreamPart {
  name: string;
  description: string;
  /** The entity tags of the records it takes (new image). */
  entities: readonly string[];
  /** Entities whose REMOVE records it takes too (old image): a deletion it must see. */
  removals?: readonly string[];
  /** Records older than this are dropped unread (a notice minutes late is noise); none: all. */
  maxRecordAgeSeconds?: number;
}

/**
 * AWS advises at most two readers per shard of a table's stream and throttles the others: the
 * table has two, this router (whose parts share one batch, each running on its own records at once,
 * so no part waits for another) and the search index's worker, which lives in the index's network
 * (no route to SQS or the WebSocket API). See docs/architecture.md, "One reader, its parts".
 */
export const streamRouterParts = [
  {
    name: 'realtime-push',
    description: 'pushes each realtime notice to the open WebSocket connections of its audience',
    entities: ['realtime'],
    // A notice minutes late is noise to the people it was for: give up early, the page reloads anyway.
    maxRecordAgeSeconds: 600,
  },
  {
    name: 'webhook-fanout',
    description:
      'turns each committed domain event into one delivery per subscribed webhook and one notification per subscribed Discord channel',
    entities: ['event'],
  },
  {
    name: 'conversation-changes',
    description:
      'hands each newly soft-deleted conversation to the purge queue, and each newly merged or erased visitor to the visitor-jobs queue',
    entities: ['conversation', 'visitor'],
  },
  {
    name: 'counters',
    description:
      'counts each record once (one marker for both) into the daily aggregates (conversations, messages, first responses, closures, CSAT) and the organization’s usage (also notes, events, webhook attempts, uploads and the bytes stored, transcripts, exports)',
    entities: ['conversation', 'message', 'note', 'event', 'delivery', 'upload', 'exportJob', 'orgAudit'],
    // An upload deleted takes its bytes out of storage.
    removals: ['upload'],
  },
] as const satisfies readonly StreamPart[];

export type StreamPartName = (typeof streamRouterParts)[number]['name'];

export const workerDefinitions: readonly WorkerDefinition[] = [
  {
    name: 'stream-router',
    reservedConcurrency: 10,
    description:
      "reads the table's stream once for the parts that act on it (streamRouterParts): realtime push, webhook fan-out, conversation changes",
    // The longest of the parts' needs: webhooks are at least once, retried for hours, leaving 18 h
    // of the stream's 24 h to redrive; a part that wants less (realtime) drops what is too old itself.
    source: {
      kind: 'stream',
      batchSize: 100,
      entities: [...new Set(streamRouterParts.flatMap((part) => part.entities))],
      removals: [...new Set(streamRouterParts.flatMap((part) => ('removals' in part ? part.removals : [])))],
      retryAttempts: 10,
      maxRecordAgeSeconds: 6 * 3600,
    },
    timeoutSeconds: 60,
    table: 'readWrite',
    sendsTo: ['webhook-deliveries', 'discord-notifications', 'conversation-purge', 'visitor-jobs'],
    realtime: true,
  },
  {
    name: 'webhook-delivery',
    reservedConcurrency: 50,
    description: 'signs and POSTs one delivery attempt, records it, schedules the next on failure',
    source: { kind: 'queue', queue: 'webhook-deliveries', batchSize: 10, maxConcurrency: 50 },
    timeoutSeconds: 30,
    table: 'readWrite',
    sendsTo: ['webhook-deliveries'],
    webhookSecrets: 'open',
  },
  {
    name: 'conversation-purge',
    reservedConcurrency: 5,
    description: 'marks every message of a soft-deleted conversation deleted, in resumable steps',
    source: { kind: 'queue', queue: 'conversation-purge', batchSize: 1, maxConcurrency: 5 },
    timeoutSeconds: 60,
    table: 'readWrite',
    sendsTo: ['conversation-purge'],
    // The files of the deleted messages.
    buckets: [['uploads', 'delete']],
  },
  {
    name: 'visitor-jobs',
    reservedConcurrency: 5,
    description:
      'moves a merged visitor’s conversations to its target, and erases an erased visitor’s messages, conversation texts and uploads, in resumable steps',
    source: { kind: 'queue', queue: 'visitor-jobs', batchSize: 1, maxConcurrency: 5 },
    timeoutSeconds: 60,
    table: 'readWrite',
    sendsTo: ['visitor-jobs'],
    // The erased visitor's files.
    buckets: [['uploads', 'delete']],
  },
  {
    name: 'malware-scan-result',
    reservedConcurrency: 2,
    description:
      'rejects an upload GuardDuty Malware Protection flags (status rejected, its object deleted: never served)',
    source: { kind: 'queue', queue: 'malware-scan-results', batchSize: 10, maxConcurrency: 2 },
    timeoutSeconds: 30,
    table: 'readWrite',
    buckets: [['uploads', 'delete']],
  },
  {
    name: 'pdf-transcript',
    reservedConcurrency: 5,
    description: 'renders a PDF transcript (first 5,000 messages) into the exports bucket as it reads',
    source: { kind: 'queue', queue: 'pdf-jobs', batchSize: 1, maxConcurrency: 5 },
    timeoutSeconds: 120,
    table: 'readWrite',
    buckets: [['exports', 'write']],
    // pdfkit loads its standard fonts at run time (`require('#standard-fonts/…')` from its own
    // module): the bundle carries them and the package.json `imports` entry that resolves them.
    bundledFiles: [
      { from: 'infra/bundles/pdf-fonts/package.json', to: 'package.json' },
      ...['Helvetica', 'HelveticaBold', 'HelveticaOblique'].map((font) => ({
        from: `node_modules/pdfkit/js/standard-fonts/${font}.cjs`,
        to: `standard-fonts/${font}.cjs`,
      })),
      {
        from: 'node_modules/pdfkit/js/standard-fonts/chunks/standardGlyphNames-DNHAb7rp.cjs',
        to: 'standard-fonts/chunks/standardGlyphNames-DNHAb7rp.cjs',
      },
    ],
    // Standard fonts only: fontkit (embedded font files) and its brotli would be most of the bundle
    // (docs/decisions.md, "PDF transcripts: standard fonts only").
    aliases: { fontkit: './infra/bundles/stubs/fontkit.mjs' },
  },
  {
    name: 'discord-delivery',
    // Discord limits a bot per channel and globally: a few posts at a time (a queue worker needs ≥ 2).
    reservedConcurrency: 5,
    description:
      "posts each Discord notification, honouring Discord's 429 retry_after; retries, then dead letters",
    // Few at once: Discord limits a bot per channel (about 5 messages in 5 s) and globally.
    source: { kind: 'queue', queue: 'discord-notifications', batchSize: 10, maxConcurrency: 2 },
    timeoutSeconds: 30,
    table: 'readWrite',
    // A 429 waiting longer than a moment goes back to the queue with its delay.
    sendsTo: ['discord-notifications'],
    discordToken: true,
  },
  {
    name: 'search-index',
    // One database connection per instance: bounds the search index's connections (with the search group's).
    reservedConcurrency: 10,
    description:
      'projects organizations, conversations, messages and notes into the search index (PostgreSQL)',
    // Searchable within 5 s: small batches, handed over as they come. A batch that keeps failing
    // (the database unreachable) is retried for hours; the rebuild (npm run search:reindex) repairs
    // anything older than the stream keeps.
    source: {
      kind: 'stream',
      batchSize: 100,
      entities: ['organization', 'conversation', 'message', 'note'],
      removals: ['organization', 'conversation', 'message', 'note'],
      retryAttempts: 10,
      maxRecordAgeSeconds: 6 * 3600,
    },
    timeoutSeconds: 60,
    searchIndex: true,
  },
];

/**
 * Lambda's SQS event source starts with five batches in flight and scales up from there; the local
 * stack runs that many pollers per queue worker (fewer when the worker's maximum is lower).
 */
export const INITIAL_QUEUE_POLLERS = 5;

export const workerEntry = (name: string): string => `functions/workers/${name}.ts`;

/** The WebSocket API's connection handler ($connect, $disconnect, $default). */
export const realtimeConnectionsEntry = 'functions/realtime/handler.ts';
