import { NestedStack, RemovalPolicy } from 'aws-cdk-lib';
import { MathExpression, Metric } from 'aws-cdk-lib/aws-cloudwatch';
import type { TableV2 } from 'aws-cdk-lib/aws-dynamodb';
import { Key } from 'aws-cdk-lib/aws-kms';
import type { Queue } from 'aws-cdk-lib/aws-sqs';
import { tableDefinition } from '../../../shared/db/table';
import {
  METRICS_NAMESPACE,
  METRICS_SERVICE,
  SEARCH_METRICS,
  WEBHOOK_DELIVERIES,
} from '../../../shared/metrics-contract';
import { alarmPeriod, type PagingAlarm, ServiceAlarms } from '../../constructs/alarms';
import { ServiceDashboard } from '../../constructs/dashboard';
import { LogQueries } from '../../constructs/log-queries';
import { TenantInsights } from '../../constructs/tenant-insights';
import { RateLimitedWebAcl } from '../../constructs/web-acl';
import { thresholds } from '../../operations/thresholds';
import { RouteAlarms } from '../route-alarms';
import { type FunctionEntry, pascal, type StackScope } from './context';
import type { Realtime } from './realtime';
import type { ServiceRestApi } from './rest-api';
import type { Storage } from './storage';
import type { Workers } from './workers';

/** The delivery worker's outcome metric (shared/metrics-contract.ts), Sum per period. */
export const webhookDeliveries = (outcome: (typeof WEBHOOK_DELIVERIES.outcomes)[number]): Metric =>
  new Metric({
    namespace: METRICS_NAMESPACE,
    metricName: WEBHOOK_DELIVERIES.name,
    dimensionsMap: { service: METRICS_SERVICE, [WEBHOOK_DELIVERIES.dimension]: outcome },
    statistic: 'Sum',
    period: alarmPeriod,
  });

/** Percent of webhook attempts that failed, 0 while there are too few to judge. */
const webhookFailureRate = (): MathExpression =>
  new MathExpression({
    expression: `IF(FILL(ok, 0) + FILL(failed, 0) >= ${thresholds.webhooks.minDeliveries}, 100 * FILL(failed, 0) / (FILL(ok, 0) + FILL(failed, 0)), 0)`,
    usingMetrics: { ok: webhookDeliveries('succeeded'), failed: webhookDeliveries('failed') },
    period: alarmPeriod,
    label: 'Webhook attempts failed (%)',
  });

export interface OperationsProps {
  storage: Storage;
  restApi: ServiceRestApi;
  realtime: Realtime;
  workers: Workers;
  /** Every function of the stack, in the order the dashboard shows them. */
  functions: readonly FunctionEntry[];
  /** Two alarms per REST route in a nested stack of their own. */
  routeAlarms: boolean;
  /**
   * The noisy-neighbour alarm's threshold: percent of all organizations' requests one organization
   * may take for 15 minutes. Default: context `noisyNeighbourSharePercent`, else 50.
   */
  noisyNeighbourSharePercent?: number;
}

/**
 * What operators watch and are paged by: the paging alarms (API, queues nobody consumes, the table,
 * the search index, webhooks) and the dashboard and saved log queries in one nested stack, every
 * function's alarms in another, the per-route alarms in a third, and the optional web ACL.
 */
export class Operations {
  readonly alarms: ServiceAlarms;

  constructor(stack: StackScope, props: OperationsProps) {
    const { table, deadLetterQueues } = props.storage;
    const { api, routeMethods, accessLogs } = props.restApi;
    const { functions } = props;
    const { streamFailureQueues } = props.workers;
    const dashboardQueues = [...props.storage.dashboardQueues, ...props.workers.dashboardQueues];
    const realtimeApi = props.realtime.api;
    const realtimeStage = props.realtime.stage;
    const operationsKey = new Key(stack, 'OperationsKey', {
      description: 'Encrypts the alarm topic',
      enableKeyRotation: true,
      removalPolicy: RemovalPolicy.RETAIN,
    });
    const alarms = new ServiceAlarms(stack, 'Alarms', { key: operationsKey });
    const paging: [string, PagingAlarm][] = [
      ...props.restApi.alarms,
      ...queueAlarms(deadLetterQueues, thresholds.deadLetters, 'dead-letters'),
      ...queueAlarms(streamFailureQueues, thresholds.streamFailures, 'stream-failures'),
      ...tableAlarms(table),
      [
        'SearchIndexLag',
        {
          metric: new Metric({
            namespace: METRICS_NAMESPACE,
            metricName: SEARCH_METRICS.indexLag,
            dimensionsMap: { service: METRICS_SERVICE, function: 'search-index' },
            statistic: 'p99',
            period: alarmPeriod,
            label: 'search index lag p99 (ms)',
          }),
          summary: 'Search: changes take more than 5 s (p99) from their commit to the search index.',
          runbook: 'search-index-lag',
          threshold: 5_000,
          datapoints: 2,
          periods: 3,
        },
      ],
      [
        'WebhookFailureRate',
        {
          metric: webhookFailureRate(),
          summary: `Webhooks: more than ${thresholds.webhooks.failureRatePercent}% of delivery attempts fail.`,
          runbook: 'webhook-failure-rate',
          threshold: thresholds.webhooks.failureRatePercent,
          datapoints: thresholds.webhooks.datapoints,
          periods: thresholds.webhooks.periods,
        },
      ],
    ];
    // The paging alarms, the dashboard and the saved queries: a nested stack of their own, like the
    // function and route alarms, so the main stack's resources (the API's method tree above all)
    // stay clear of CloudFormation's 500.
    const operations = new NestedStack(stack, 'Operations', {
      description: 'paging alarms, the dashboard and the saved log queries',
    });
    // Contributor Insights over the API functions' access lines: the top organizations by requests,
    // capacity units, 5XX, 429 and time served, and the noisy-neighbour alarm on their share.
    const tenants = new TenantInsights(operations, 'TenantInsights', {
      apiLogs: props.restApi.functions.map(({ fn }) => fn.logGroup),
      stackName: stack.stackName,
      sharePercent: props.noisyNeighbourSharePercent ?? contextNumber(stack, 'noisyNeighbourSharePercent'),
    });
    const shareAlarm = alarms.add('NoisyNeighbourAlarm', tenants.shareAlarm, operations);
    // It reads the requests rule by name: created once the rule exists.
    shareAlarm.node.addDependency(tenants.requestsRule);
    const stackAlarms = [
      ...paging.map(([alarmId, alarm]) => alarms.add(`${alarmId}Alarm`, alarm, operations)),
      shareAlarm,
    ];
    // Two or three alarms per function: a nested stack of their own keeps the main stack's count of
    // resources (API methods above all) clear of CloudFormation's 500 as routes and workers are added.
    const functionAlarms = new NestedStack(stack, 'FunctionAlarms', {
      description: 'errors, throttles and stream iterator-age alarms of every function',
    });
    for (const [alarmId, alarm] of functionAlarmsOf(functions))
      alarms.add(`${alarmId}Alarm`, alarm, functionAlarms);
    if (props.routeAlarms) {
      new RouteAlarms(stack, 'RouteAlarms', { routes: routeMethods, stage: api.deploymentStage, alarms });
    }

    new RateLimitedWebAcl(stack, 'WebAcl', {
      stageArn: api.deploymentStage.stageArn,
      dependsOn: api.deploymentStage,
    });

    new ServiceDashboard(operations, 'Dashboard', {
      api,
      stage: api.deploymentStage,
      routes: routeMethods,
      functions,
      table,
      indexNames: tableDefinition.globalIndexes.map((index) => index.name),
      queues: dashboardQueues,
      realtime: { apiId: realtimeApi.apiId, stageName: realtimeStage.stageName },
      webhookDeliveries: { succeeded: webhookDeliveries('succeeded'), failed: webhookDeliveries('failed') },
      // The per-route alarms stay out of it (their routes' graphs are there): no nested-stack outputs.
      alarms: stackAlarms,
      tenants: { rules: tenants.rules, topShare: tenants.topShare, sharePercent: tenants.sharePercent },
    });
    new LogQueries(operations, 'LogQueries', {
      functionLogs: functions.map(({ fn }) => fn.logGroup),
      accessLog: accessLogs,
      folder: stack.stackName,
    });

    this.alarms = alarms;
  }
}

/** A number given as context (`cdk synth -c name=40`), or undefined. */
function contextNumber(stack: StackScope, name: string): number | undefined {
  const raw: unknown = stack.node.tryGetContext(name);
  if (raw === undefined || raw === '') return undefined;
  const value = Number(raw);
  if (!Number.isFinite(value)) throw new Error(`Context ${name}: a number, not ${String(raw)}`);
  return value;
}

/** Depth and age of the oldest message of queues nobody consumes: dead letters, stream failures. */
function queueAlarms(
  queues: readonly [string, Queue][],
  limits: { depth: number; oldestAgeSeconds: number },
  runbook: string,
): [string, PagingAlarm][] {
  return queues.flatMap(([id, queue]): [string, PagingAlarm][] => [
    [
      id,
      {
        metric: queue.metricApproximateNumberOfMessagesVisible({
          statistic: 'Maximum',
          period: alarmPeriod,
        }),
        summary: `${id}: messages are waiting (work that failed every retry).`,
        runbook,
        threshold: limits.depth,
      },
    ],
    [
      `${id}Age`,
      {
        metric: queue.metricApproximateAgeOfOldestMessage({ statistic: 'Maximum', period: alarmPeriod }),
        summary: `${id}: the oldest message has waited more than ${limits.oldestAgeSeconds / 3600} h.`,
        runbook,
        threshold: limits.oldestAgeSeconds,
      },
    ],
  ]);
}

/** Errors and throttles of every function, as before; stream workers also on falling behind. */
function functionAlarmsOf(functions: readonly FunctionEntry[]): [string, PagingAlarm][] {
  return functions.flatMap(({ name, id, fn, stream }): [string, PagingAlarm][] => [
    [
      `${id}Errors`,
      {
        metric: fn.metricErrors({ statistic: 'Sum', period: alarmPeriod }),
        summary: `Function ${name}: invocations failed.`,
        runbook: 'function-errors',
        threshold: thresholds.functionErrors,
      },
    ],
    [
      `${id}Throttles`,
      {
        metric: fn.metricThrottles({ statistic: 'Sum', period: alarmPeriod }),
        summary: `Function ${name}: invocations throttled (reserved concurrency or account limit).`,
        runbook: 'function-throttles',
        threshold: thresholds.functionThrottles,
      },
    ],
    ...(stream
      ? ([
          [
            `${id}IteratorAge`,
            {
              metric: fn.metric('IteratorAge', { statistic: 'Maximum', period: alarmPeriod }),
              summary: `Function ${name}: stream records wait more than ${thresholds.streamIteratorAgeMs / 60_000} min.`,
              runbook: 'stream-iterator-age',
              threshold: thresholds.streamIteratorAgeMs,
            },
          ],
        ] satisfies [string, PagingAlarm][])
      : []),
  ]);
}

/** Read + write throttle events of the table, and of each index (their own capacity). */
function tableAlarms(table: TableV2): [string, PagingAlarm][] {
  const { dynamoThrottleEvents: limits } = thresholds;
  return [undefined, ...tableDefinition.globalIndexes.map((index) => index.name)].map(
    (index): [string, PagingAlarm] => {
      const throttles = (metricName: string) =>
        new Metric({
          namespace: 'AWS/DynamoDB',
          metricName,
          dimensionsMap: {
            TableName: table.tableName,
            ...(index && { GlobalSecondaryIndexName: index }),
          },
          statistic: 'Sum',
          period: alarmPeriod,
        });
      const what = index ? `index ${index}` : 'table';
      return [
        `${index ? pascal(index) : 'Table'}Throttles`,
        {
          metric: new MathExpression({
            expression: 'FILL(reads, 0) + FILL(writes, 0)',
            usingMetrics: {
              reads: throttles('ReadThrottleEvents'),
              writes: throttles('WriteThrottleEvents'),
            },
            period: alarmPeriod,
            label: `DynamoDB ${what} throttle events`,
          }),
          summary: `DynamoDB ${what}: requests throttled.`,
          runbook: 'dynamodb-throttling',
          threshold: limits.count,
          datapoints: limits.datapoints,
          periods: limits.periods,
        },
      ];
    },
  );
}
