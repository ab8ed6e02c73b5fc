/**
 * The custom CloudWatch metrics the service emits (Powertools Metrics, EMF: no PutMetricData) and
 * the stack alarms and graphs on, named once. Powertools adds a `service` dimension to every metric
 * it emits, so the dimension set CloudWatch stores is `service` + the metric's own dimensions: the
 * alarms declare exactly that set, and an emitter that adds or drops one would silently miss them.
 */
export const METRICS_NAMESPACE = 'ConversationService';
/** Powertools' `serviceName` (the logger uses the same). */
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
