/**
 * What pages, in one place: the stack's alarms read these, the template tests assert them, and
 * docs/operations.md explains each. Periods are five minutes unless said otherwise; an alarm fires
 * when `datapoints` of the last `periods` breach, so one slow request or one failed delivery
 * never wakes anyone.
 */
export const PERIOD_MINUTES = 5;

export const thresholds = {
  /** The REST API as a whole (API Gateway's own metrics: every route, the fallback included). */
  api: {
    p99LatencyMs: 2500,
    /** 5XX responses over all responses, in percent, judged only with enough traffic. */
    errorRatePercent: 1,
    minRequests: 50,
    datapoints: 3,
    periods: 3,
  },
  /** Each route (API Gateway detailed metrics: one series per resource and method). */
  route: {
    p99LatencyMs: 5000,
    errorRatePercent: 5,
    minRequests: 20,
    datapoints: 3,
    periods: 3,
  },
  /** Dead-letter queues and the stream triggers' on-failure queues: anything there is lost work. */
  deadLetters: {
    /** Messages visible (Maximum): more than this pages at once. */
    depth: 0,
    /** Age of the oldest message, seconds: nobody redrove within a day (14 days' retention). */
    oldestAgeSeconds: 24 * 3600,
  },
  streamFailures: {
    depth: 0,
    /** The failure message names stream records, which expire 24 h after they were written. */
    oldestAgeSeconds: 6 * 3600,
  },
  /** A stream worker falling behind (IteratorAge, Maximum): webhooks and realtime notices are late. */
  streamIteratorAgeMs: 10 * 60 * 1000,
  /** Failed webhook attempts over all attempts, percent, over 15 minutes with enough attempts. */
  webhooks: { failureRatePercent: 25, minDeliveries: 20, datapoints: 3, periods: 3 },
  /** Read + write throttle events of the table or one index (on demand: a hot key or a 2x surge). */
  dynamoThrottleEvents: { count: 10, datapoints: 2, periods: 3 },
  /** Lambda Errors and Throttles (Sum) per function: any in five minutes, as before. */
  functionErrors: 0,
  functionThrottles: 0,
} as const;
