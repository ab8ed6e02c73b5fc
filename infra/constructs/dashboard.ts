import { Duration, Stack } from 'aws-cdk-lib';
import type { Method, RestApi, Stage } from 'aws-cdk-lib/aws-apigateway';
import {
  type Alarm,
  AlarmStatusWidget,
  Dashboard,
  GraphWidget,
  type IMetric,
  MathExpression,
  Metric,
  Row,
  TextWidget,
} from 'aws-cdk-lib/aws-cloudwatch';
import type { ITable } from 'aws-cdk-lib/aws-dynamodb';
import type { IFunction } from 'aws-cdk-lib/aws-lambda';
import type { IQueue } from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import {
  COLD_START,
  FUNCTION_DIMENSION,
  METRICS_NAMESPACE,
  METRICS_SERVICE,
  QUEUE_JOB_AGE,
  REQUEST_METRICS,
  ROUTE_DIMENSION,
} from '../../shared/metrics-contract';
import { RUNBOOK } from './alarms';
import { ContributorInsightsWidget } from './tenant-insights';

export interface DashboardRoute {
  /** `GET /api/conversations` */
  key: string;
  /** Its route group (one function). */
  group: string;
  method: Method;
}

export interface DashboardQueue {
  name: string;
  queue: IQueue;
  kind: 'queue' | 'dead letters' | 'stream failures';
}

export interface ServiceDashboardProps {
  api: RestApi;
  stage: Stage;
  routes: readonly DashboardRoute[];
  functions: readonly { name: string; fn: IFunction; stream?: boolean }[];
  table: ITable;
  indexNames: readonly string[];
  queues: readonly DashboardQueue[];
  /** The realtime WebSocket API: id and stage name. */
  realtime: { apiId: string; stageName: string };
  webhookDeliveries: { succeeded: Metric; failed: Metric };
  alarms: readonly Alarm[];
  /**
   * Contributor Insights over the API functions' access lines (infra/constructs/tenant-insights.ts):
   * each rule's top organizations, and the top organization's share of requests against the
   * noisy-neighbour alarm's threshold.
   */
  tenants?: {
    rules: readonly { title: string; ruleName: string; unit: string }[];
    topShare: IMetric;
    sharePercent: number;
  };
}

const period = Duration.minutes(5);
const FULL = 24;

/**
 * The on-call view, in CDK: alarm states, the golden signals of the REST API and of each route
 * (traffic, errors, p50/p99 latency; grouped by the function that serves them), each function
 * (invocations, errors, throttles, duration p50/p99, concurrency), DynamoDB capacity and throttles
 * (table and indexes), queue depth and age (queues, dead letters, stream failures), stream lag,
 * the realtime channel and the webhook success rate.
 */
export class ServiceDashboard extends Construct {
  readonly dashboard: Dashboard;

  constructor(scope: Construct, id: string, props: ServiceDashboardProps) {
    super(scope, id);
    const { api, stage, routes, functions, table, indexNames, queues, realtime, webhookDeliveries } = props;
    // Named after the service's stack, also when the dashboard sits in a nested stack of it.
    let stack = Stack.of(this);
    while (stack.nestedStackParent) stack = stack.nestedStackParent;
    this.dashboard = new Dashboard(this, 'Resource', {
      dashboardName: `${stack.stackName}-operations`,
      defaultInterval: Duration.hours(3),
    });
    const graph = (title: string, left: IMetric[], width: number, extra: Partial<GraphWidgetOptions> = {}) =>
      new GraphWidget({ title, left, width, height: 6, period, ...extra });

    // Alarms and what to do about them.
    this.dashboard.addWidgets(
      new TextWidget({
        markdown: [
          `# ${stack.stackName}`,
          `Runbook: \`${RUNBOOK}\` (one section per alarm). Logs Insights saved queries: folder **${stack.stackName}** (a request by X-Request-Id, errors by route, slowest routes, one tenant's traffic, one organization's requests, errors and slowest routes). Top organizations: Contributor Insights rules **${stack.stackName}-orgs-by-…**.`,
        ].join('\n\n'),
        width: FULL,
        height: 2,
      }),
    );
    // An alarm-status widget holds at most 100 alarms; the per-route ones live in their own stack.
    for (let start = 0; start < props.alarms.length; start += 100) {
      this.dashboard.addWidgets(
        new AlarmStatusWidget({
          title: 'Alarms',
          alarms: props.alarms.slice(start, start + 100),
          width: FULL,
          height: 4,
        }),
      );
    }

    // The REST API as a whole.
    const apiErrors = api.metricServerError({ statistic: 'Sum', period });
    const apiRequests = api.metricCount({ statistic: 'Sum', period });
    this.dashboard.addWidgets(
      graph('REST API: requests', [apiRequests], 6),
      graph('REST API: errors', [api.metricClientError({ statistic: 'Sum', period }), apiErrors], 6, {
        right: [
          new MathExpression({
            expression: '100 * FILL(errors, 0) / requests',
            usingMetrics: { errors: apiErrors, requests: apiRequests },
            label: '5XX rate (%)',
            period,
          }),
        ],
      }),
      graph(
        'REST API: latency (ms)',
        ['p50', 'p90', 'p99'].map((statistic) =>
          api.metricLatency({ statistic, period, label: `latency ${statistic}` }),
        ),
        6,
      ),
      graph(
        'REST API: integration latency (ms)',
        ['p50', 'p99'].map((statistic) =>
          api.metricIntegrationLatency({ statistic, period, label: `integration ${statistic}` }),
        ),
        6,
      ),
    );

    // Who takes the most: the top organizations of each Contributor Insights rule (one line per
    // organization id), and the top one's share of requests as the noisy-neighbour alarm reads it.
    if (props.tenants) {
      const { rules, topShare, sharePercent } = props.tenants;
      const contributors = (rule: (typeof rules)[number], width: number) =>
        new ContributorInsightsWidget({ title: rule.title, ruleName: rule.ruleName, unit: rule.unit, width });
      const [first, rest] = [rules.slice(0, 3), rules.slice(3)];
      this.dashboard.addWidgets(
        graph('Tenants: top organization, share of requests (%)', [topShare], 6, {
          leftYAxis: { min: 0, max: 100 },
          leftAnnotations: [{ value: sharePercent, label: 'noisy-neighbour alarm' }],
        }),
        ...first.map((rule) => contributors(rule, 6)),
      );
      if (rest.length > 0)
        this.dashboard.addWidgets(...rest.map((rule) => contributors(rule, Math.floor(FULL / rest.length))));
    }

    // Each route, grouped by the function that serves it.
    for (const group of [...new Set(routes.map((route) => route.group))]) {
      const own = routes.filter((route) => route.group === group);
      const perRoute = (metric: (route: DashboardRoute) => IMetric) => own.map(metric);
      this.dashboard.addWidgets(
        new Row(
          graph(
            `${group}: requests by route`,
            perRoute((r) => r.method.metricCount(stage, { statistic: 'Sum', period, label: r.key })),
            6,
          ),
          graph(
            `${group}: 5XX by route`,
            perRoute((r) => r.method.metricServerError(stage, { statistic: 'Sum', period, label: r.key })),
            6,
          ),
          graph(
            `${group}: p50 latency by route (ms)`,
            perRoute((r) => r.method.metricLatency(stage, { statistic: 'p50', period, label: r.key })),
            6,
          ),
          graph(
            `${group}: p99 latency by route (ms)`,
            perRoute((r) => r.method.metricLatency(stage, { statistic: 'p99', period, label: r.key })),
            6,
          ),
        ),
      );
    }

    // Every function.
    const perFunction = (metricName: string, statistic: string) =>
      functions.map(({ name, fn }) => fn.metric(metricName, { statistic, period, label: name }));
    this.dashboard.addWidgets(
      graph('Functions: invocations', perFunction('Invocations', 'Sum'), 8),
      graph('Functions: errors', perFunction('Errors', 'Sum'), 8),
      graph('Functions: throttles', perFunction('Throttles', 'Sum'), 8),
    );
    this.dashboard.addWidgets(
      graph('Functions: duration p50 (ms)', perFunction('Duration', 'p50'), 8),
      graph('Functions: duration p99 (ms)', perFunction('Duration', 'p99'), 8),
      graph('Functions: concurrent executions (max)', perFunction('ConcurrentExecutions', 'Maximum'), 8),
    );

    // DynamoDB: the table and each index.
    const dynamo = (metricName: string, index?: string) =>
      new Metric({
        namespace: 'AWS/DynamoDB',
        metricName,
        dimensionsMap: { TableName: table.tableName, ...(index && { GlobalSecondaryIndexName: index }) },
        statistic: 'Sum',
        period,
        label: index ?? 'table',
      });
    const tableAndIndexes = (metricName: string) => [
      dynamo(metricName),
      ...indexNames.map((index) => dynamo(metricName, index)),
    ];
    this.dashboard.addWidgets(
      graph('DynamoDB: consumed read units', tableAndIndexes('ConsumedReadCapacityUnits'), 6),
      graph('DynamoDB: consumed write units', tableAndIndexes('ConsumedWriteCapacityUnits'), 6),
      graph('DynamoDB: read throttle events', tableAndIndexes('ReadThrottleEvents'), 6),
      graph('DynamoDB: write throttle events', tableAndIndexes('WriteThrottleEvents'), 6),
    );

    // Queues, dead letters and stream failures; how far behind the stream workers are.
    const label = (q: DashboardQueue) => (q.kind === 'queue' ? q.name : `${q.name} (${q.kind})`);
    this.dashboard.addWidgets(
      graph(
        'Queues: messages visible (max)',
        queues.map((q) =>
          q.queue.metricApproximateNumberOfMessagesVisible({ statistic: 'Maximum', period, label: label(q) }),
        ),
        8,
      ),
      graph(
        'Queues: age of oldest message (s)',
        queues.map((q) =>
          q.queue.metricApproximateAgeOfOldestMessage({ statistic: 'Maximum', period, label: label(q) }),
        ),
        8,
      ),
      graph(
        'Stream workers: iterator age (ms, max)',
        functions
          .filter(({ stream }) => stream)
          .map(({ name, fn }) => fn.metric('IteratorAge', { statistic: 'Maximum', period, label: name })),
        8,
      ),
    );

    // What the functions report themselves (EMF): one line per route or function that has data.
    const search = (dimensions: string, metricName: string, statistic: string, label: string) =>
      new MathExpression({
        expression: `SEARCH('{${METRICS_NAMESPACE},service,${dimensions}} service="${METRICS_SERVICE}" MetricName="${metricName}"', '${statistic}', ${period.toSeconds()})`,
        usingMetrics: {},
        label,
        period,
      });
    this.dashboard.addWidgets(
      graph(
        'App: conflicts (409/412) by route',
        [search(ROUTE_DIMENSION, REQUEST_METRICS.conflicts, 'Sum', '')],
        6,
      ),
      graph(
        'App: DynamoDB retries and throttles by route',
        [
          search(ROUTE_DIMENSION, REQUEST_METRICS.dynamoDbRetries, 'Sum', 'retries'),
          search(ROUTE_DIMENSION, REQUEST_METRICS.dynamoDbThrottles, 'Sum', 'throttles'),
        ],
        6,
      ),
      graph('App: cold starts by function', [search(COLD_START.dimension, COLD_START.name, 'Sum', '')], 6),
      graph('App: queue job age p99 (ms)', [search(FUNCTION_DIMENSION, QUEUE_JOB_AGE, 'p99', '')], 6),
    );

    // Webhooks and the realtime channel.
    const { succeeded, failed } = webhookDeliveries;
    const websocket = (metricName: string) =>
      new Metric({
        namespace: 'AWS/ApiGateway',
        metricName,
        dimensionsMap: { ApiId: realtime.apiId, Stage: realtime.stageName },
        statistic: 'Sum',
        period,
        label: metricName,
      });
    this.dashboard.addWidgets(
      graph(
        'Webhooks: delivery success rate (%)',
        [
          new MathExpression({
            expression: '100 * FILL(ok, 0) / (FILL(ok, 0) + FILL(failed, 0))',
            usingMetrics: { ok: succeeded, failed },
            label: 'succeeded (%)',
            period,
          }),
        ],
        8,
        { leftYAxis: { min: 0, max: 100 } },
      ),
      graph(
        'Webhooks: attempts by outcome',
        [succeeded.with({ label: 'succeeded' }), failed.with({ label: 'failed' })],
        8,
      ),
      graph(
        'Realtime: connections and messages',
        ['ConnectCount', 'MessageCount', 'ClientError', 'IntegrationError', 'ExecutionError'].map(websocket),
        8,
      ),
    );
  }
}

type GraphWidgetOptions = ConstructorParameters<typeof GraphWidget>[0];
