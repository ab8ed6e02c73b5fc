/** What the measuring child processes report to run.ts: progress lines, then RESULT_MARKER + JSON. */
export const RESULT_MARKER = '@@RESULT ';

export interface Distribution {
  meanUs: number;
  p50Us: number;
  p99Us: number;
}

export interface WarmChainResult {
  warmup: number;
  requests: number;
  /** DocumentClient sends per measured request (1 = the conversation GetItem). */
  sendsPerRequest: number;
  chain: Distribution;
  stub: Distribution;
  /** The whole request with a plain async function in place of the mock: no stub cost to subtract. */
  plain: Distribution;
  plainSendsPerRequest: number;
  /** Responses other than 200 during the measured loop (must be 0). */
  failures: number;
  firstStatus: number;
}

/** Parent → phase 5's receiver process. */
export type ReceiverRequest = { type: 'count' } | { type: 'report' } | { type: 'reset' };

/** Phase 5's receiver process → parent. */
export type ReceiverReply =
  | { type: 'listening'; port: number }
  | { type: 'count'; count: number }
  | {
      type: 'report';
      /** Arrival instants, epoch ms with sub-ms precision. */
      atMs: number[];
      /** The `webhook-id` header (the event id) of each request. */
      webhookIds: string[];
      /** Request path of each request: one path per registered webhook. */
      paths: string[];
      /** The payload's `timestamp`, epoch ms (NaN when unreadable). */
      eventMs: number[];
      unparsable: number;
      /** CPU time of the receiver process since it started. */
      cpuMs: number;
    };

/** A latency distribution in milliseconds. */
export interface MsDistribution {
  count: number;
  p50: number;
  p99: number;
  max: number;
}

export interface SigningResult {
  bodyBytes: number;
  warmup: number;
  calls: number;
  /** `signatureHeader(message, [secret])`: mean over every timed call. */
  meanUs: number;
  /** Mean per round (each round a fraction of `calls`): the spread says how stable the figure is. */
  roundMeansUs: number[];
  /** Cross-check: the bare `createHmac(key).update(content).digest('base64')` over the same content. */
  hmacOnlyUs: number;
  /** Cross-check: `webhookHeaders` (the signature plus the header object) as the worker calls it. */
  headersUs: number;
}

/** One stage of the delivery pipeline, per delivery. */
export interface Stage {
  name: string;
  what: string;
  ms: MsDistribution;
}

/** A component's share of the throughput window. */
export interface Component {
  name: string;
  detail: string;
}

export interface BacklogDrain {
  expected: number;
  received: number;
  /** How long the API took to create the conversations while the workers were held (not in the window). */
  createMs: number;
  /** Workers released → last delivery received. */
  windowMs: number;
  timedOut: boolean;
  perSecond: number;
  cpuPerDeliveryMs: number;
  detail: string;
}

export interface ThroughputResult {
  webhooks: number;
  conversations: number;
  parallel: number;
  expected: number;
  received: number;
  /** Distinct (webhook, event) pairs among what was received. */
  distinct: number;
  /** First request sent → every conversation answered. */
  createMs: number;
  /** First request sent → last delivery received (or the timeout). */
  windowMs: number;
  timedOut: boolean;
  perSecond: number;
  /** Receiver arrival − the event's `timestamp`. */
  latency: MsDistribution;
  /** The same, one conversation at a time (no backlog): the pipeline's own latency. */
  idleLatency: MsDistribution;
  /** CPU ms per delivery in the measured run: the service process, DynamoDB Local, the receiver. */
  cpuPerDelivery: { service: number; dynamoDbLocal: number | undefined; receiver: number };
  stages: Stage[];
  components: Component[];
  /** What bounds the rate, from the measurements above. */
  findings: string[];
  warmup: string;
  /** DynamoDB Local alone, right after the run, on the same table: the local stack's ceiling. */
  calibration?: Calibration;
  /** The pipeline alone: the same deliveries from events committed while the workers were held. */
  backlog?: BacklogDrain;
  /** The same pipeline with more delivery pollers (Lambda runs several batches at once). */
  whatIf?: WhatIf;
  /** Where the service process's CPU went, from a separate, shorter run under the sampling profiler. */
  profile?: { deliveries: number; windowMs: number; shares: { where: string; ms: number }[] };
}

export interface Calibration {
  concurrency: number;
  writesPerSecond: number;
  readsPerSecond: number;
  /** Table calls per delivery during the measured run (API writes and fan-out reads included). */
  writesPerDelivery: number;
  readsPerDelivery: number;
  /** 1 / (writes / writesPerSecond + reads / readsPerSecond): deliveries/s DynamoDB Local allows. */
  ceilingPerSecond: number;
}

export interface WhatIf {
  pollers: number;
  expected: number;
  received: number;
  windowMs: number;
  perSecond: number;
  detail: string;
}

export interface WebhookDeliveryResult {
  signing?: SigningResult;
  signingError?: string;
  throughput?: ThroughputResult;
  throughputError?: string;
}

/** Phase 6: concurrent writers on one conversation, one level of concurrency. */
export type WriteKind = 'post' | 'patch';

/** One burst of concurrent writers into a fresh conversation: all sent at once, one request each. */
export interface ContentionBurst {
  kind: WriteKind;
  writers: number;
  /** Count of answers by HTTP status. */
  statuses: Record<string, number>;
  p50Ms: number;
  p99Ms: number;
  maxMs: number;
  /** The slowest handler duration (its access line): what one Lambda instance spends on the request. */
  handlerMaxMs: number | null;
  /** 503 answers that came without `Retry-After` (the contract requires it). */
  unavailableWithoutRetryAfter: number;
  /** Posts: how much the conversation's `messageCount` grew over the burst (every 201 must count). */
  countedMessages: number | null;
  /** Answers with a 2xx status. */
  succeeded: number;
  /** What DynamoDB was asked during the burst, counted on the wire (contention-counter.ts). */
  wire?: { byOperation: Record<string, WireOperationCounts> };
}

/** One DynamoDB operation's calls during a burst, and how many of them lost or were retried. */
export interface WireOperationCounts {
  calls: number;
  sdkRetries: number;
  conditionFailed: number;
  transactionConflicts: number;
  otherErrors: Record<string, number>;
}

/** PATCHes arriving one after another into one conversation: who of them is shed (503). */
export interface StaggeredPatches {
  writers: number;
  spacingMs: number;
  /** 503s among the first half of the arrivals (those that waited longest)… */
  firstHalfShed: number;
  /** … and among the second half. */
  secondHalfShed: number;
  succeeded: number;
  slowestSucceededMs: number;
}

export interface ContentionResult {
  /** With the stream and queue workers paused, so that the wire counts are the writers' own. */
  bursts: ContentionBurst[];
  /** 50 posts with the workers running, as under `npm start` (they yield to a busy API). */
  withWorkers?: ContentionBurst;
  staggered?: StaggeredPatches;
}

/** How a probe's node was started: as Lambda starts it for the function's memory, or heap-capped. */
export type HeapMode = 'lambda' | 'capped';

/** Peak memory of a probe while it worked (bytes). */
export interface ProbeMemory {
  /** RSS after loading and a full collection, before the work. */
  baselineRss: number;
  peakRss: number;
  peakSource: 'kernel' | 'sampled';
  sampledPeakRss: number;
  heapUsedPeak: number;
  /** Committed sizes of V8's young generation and old space at their largest. */
  newSpacePeak: number;
  oldSpacePeak: number;
}

/** Phase 7: one conversation export by the bundled exports function into a counting sink. */
export interface ExportRun extends ProbeMemory {
  format: 'csv' | 'json';
  heap: HeapMode;
  /** The node flags it ran with. */
  flags: string;
  status: number;
  bytes: number;
  chunks: number;
  largestChunk: number;
  /** Conversations written (JSON: `"messages":[` heads; CSV: CRLF rows after the header). */
  rows: number;
  /** The stream ended cleanly and looks whole (JSON closed by `]`, CSV ends with a line end). */
  complete: boolean;
  failure?: string | undefined;
  /** Messages the export read (Items of its message Queries). */
  messages: number;
  elapsedMs: number;
  /** DynamoDB read units of the whole request (auth, count, listing, conversations, messages). */
  readUnits: number;
  commands: number;
}

/** Phase 7: the PDF worker's first job, in its own process. */
export interface PdfWorkerRun extends ProbeMemory {
  flags: string;
  handlerMs: number;
  failures: number;
}

/** Phase 7, one data set: seeded, then exported as CSV and as JSON. */
export interface ExportVolumeSet {
  messages: number;
  conversations: number;
  /** Items written (messages and conversations) and how long seeding took. */
  seededItems: number;
  seedMs: number;
  runs: ExportRun[];
  errors: string[];
}

export interface PdfJobResult {
  messages: number;
  /** 202 answered → the job status read `completed`. */
  completedMs: number;
  status: string;
  pdfBytes: number;
  /** The file at `downloadUrl` starts with `%PDF-`. */
  isPdf: boolean;
  worker: PdfWorkerRun;
}

export interface ExportVolumeResult {
  sets: ExportVolumeSet[];
  pdf?: PdfJobResult | undefined;
  pdfError?: string | undefined;
  /** How the probes ran (bundled with the CDK options, node version). */
  runtime: string;
  /** The functions' memory size (CDK) and the node flags Lambda derives from it. */
  functionMemoryMb: number;
  lambdaFlags: string;
  /** What the exports function's exec wrapper adds (infra/function-tuning.ts); empty when it has none. */
  wrapperFlags: string;
  cappedFlags: string;
  /** The PDF worker's timeout (functions/workers.ts). */
  pdfTimeoutSeconds: number;
}

/** upload-complete-main.ts: `complete` of one large upload, in a process of its own. */
export interface UploadCompleteResult {
  status: number;
  bytes: number;
  elapsedMs: number;
  /** Bytes: the process's peak RSS during `complete`, and its settled RSS before. */
  peakRss: number;
  baselineRss: number;
  body?: string;
}

/** Phase 8: one query of the search phase, through the HTTP API. */
export interface SearchQueryResult {
  name: string;
  q: string;
  sort?: string;
  ms: MsDistribution;
  total: number;
  totalCapped: boolean;
  /** Hits on the first page (limit 20). */
  hits: number;
  statuses: number[];
}

export interface SearchResult {
  messages: number;
  conversations: number;
  /** Index rows written by the bulk seed (projection + writer), and how long it took. */
  seedRows: number;
  seedMs: number;
  /** Conversations put into the table with BatchWriteItem (a sample and the measured pages'). */
  tablePut: { conversations: number; ms: number };
  /** Until the stream worker had re-projected them (a conversation created after them searchable). */
  streamCatchUpMs: number;
  vacuumMs: number;
  storage: {
    documents: number;
    messageDocuments: number;
    conversations: number;
    /** pg_total_relation_size: heap, TOAST and indexes. */
    documentBytes: number;
    documentHeapBytes: number;
    documentIndexBytes: number;
    termsIndexBytes: number;
    conversationBytes: number;
  };
  /** Commit (the message's createdAt) → first search that finds it. */
  lag: MsDistribution;
  /** The POST of each lag sample. */
  postMs: MsDistribution;
  queries: SearchQueryResult[];
  rebuild: {
    messages: number;
    conversations: number;
    rows: number;
    ms: number;
    rowsBefore: number;
    rowsAfter: number;
    /** Its messages put into the table (BatchWriteItem). */
    tableSeedMs: number;
    /** From the first put until the stream worker had indexed them all. */
    streamIndexMs: number;
  };
  /** Load averages (1, 5, 15 min) at the start of each step. */
  load: { start: string; lag: string; queries: string; rebuild: string; end: string };
}

/** One background job of issue 27 measured in-process (data layer against DynamoDB Local). */
export interface ContactJobRun {
  /** Conversations moved (merge) or messages blanked (erasure). */
  items: number;
  /** The request's own transaction (mark the source / accept the erasure). */
  beginMs: number;
  /** Everything, from the request's transaction to the last batch. */
  wallMs: number;
  /** DynamoDB requests sent (each is one round trip; the SDK's retries are counted apart). */
  roundTrips: number;
  attempts: number;
  writeUnits: number;
  readUnits: number;
  /** Steps (erasure) or pages (merge) the job took: each bounded, each resumable. */
  steps: number;
}

export interface ContactVolumeResult {
  merge: ContactJobRun;
  erasure: ContactJobRun;
  /** Seeding, for context (not measured). */
  seedMs: number;
}
