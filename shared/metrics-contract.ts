/**
 * The custom CloudWatch metrics the service emits (EMF lines, shared/metrics.ts: no PutMetricData)
 * and the stack alarms and graphs on, named once. Every metric gets a `service` dimension (as
 * Powertools Metrics added it), so the dimension set CloudWatch stores is `service` + the metric's own dimensions: the
 * alarms declare exactly that set, and an emitter that adds or drops one would silently miss them.
 */
export const METRICS_NAMESPACE = 'ConversationService';
/** The `service` dimension's value (the logger's `serviceName` is the same). */
export const METRICS_SERVICE = 'conversation-service';

/**
 * One per webhook delivery attempt (the delivery worker), Count, dimension `outcome`:
 * `succeeded` (2xx) or `failed` (anything else: timeout, refused, non-2xx, blocked target).
 */
export const WEBHOOK_DELIVERIES = {
  name: 'WebhookDeliveries',
  dimension: 'outcome',
  outcomes: ['succeeded', 'failed'],
} as const;

/** Dimension of the per-request metrics: the route's operationId (a fixed set, one per route). */
export const ROUTE_DIMENSION = 'route';
/** Dimension of the per-function metrics: the endpoint group or worker name (`SERVICE_FUNCTION`). */
export const FUNCTION_DIMENSION = 'function';

/**
 * One EMF line per API request, dimensions `service` + `route`. Every status-class metric is
 * emitted on every request (0 or 1), so its Average is the class's rate and its Sum the count.
 */
export const REQUEST_METRICS = {
  latency: 'Latency',
  requests: 'Requests',
  /** 2xx and 3xx (a 304 Not Modified is a success). */
  status2xx: 'Status2xx',
  status4xx: 'Status4xx',
  status5xx: 'Status5xx',
  /** 409 and 412: lost races and stale If-Match, the optimistic-concurrency signal. */
  conflicts: 'Conflicts',
  /** DynamoDB calls retried by the SDK, and throttling errors among the attempts. */
  dynamoDbRetries: 'DynamoDbRetries',
  dynamoDbThrottles: 'DynamoDbThrottles',
} as const;

/** The cold-start metric, Powertools' name and dimensions: `service` + `function_name`. */
export const COLD_START = { name: 'ColdStart', dimension: 'function_name' } as const;

/**
 * Per SQS job, dimensions `service` + `function` (each queue has one worker): milliseconds from the
 * message's send to the start of its handling, redeliveries and delays included.
 */
export const QUEUE_JOB_AGE = 'QueueJobAge';

/** Per webhook attempt, dimensions `service` + `outcome` + `attempt` (1..retry schedule length + 1). */
export const WEBHOOK_DELIVERY_ATTEMPTS = { name: 'WebhookDeliveryAttempts', dimension: 'attempt' } as const;

/** Per export (streamed or job), dimensions `service` + `function`. */
export const EXPORT_METRICS = { rows: 'ExportRows', bytes: 'ExportBytes' } as const;
/** Per e-mail handed to SES, dimensions `service` + `function`. */
export const EMAILS_SENT = 'EmailsSent';
/** Per message posted to Discord, dimensions `service` + `function`. */
export const DISCORD_POSTS = 'DiscordPosts';

/**
 * The search index (dimensions `service` + `function`): `SearchIndexLag` per stream record indexed,
 * milliseconds from its commit (the record's creation time, to the second) to its write in the
 * index; `SearchQueryLatency` per search, milliseconds spent in the index.
 */
export const SEARCH_METRICS = { indexLag: 'SearchIndexLag', queryLatency: 'SearchQueryLatency' } as const;
