import { NestedStack, type NestedStackProps } from 'aws-cdk-lib';
import type { Method, Stage } from 'aws-cdk-lib/aws-apigateway';
import { MathExpression } from 'aws-cdk-lib/aws-cloudwatch';
import type { Construct } from 'constructs';
import { alarmPeriod, type ServiceAlarms } from '../constructs/alarms';
import { thresholds } from '../operations/thresholds';

export interface RoutedMethod {
  /** `GET /api/conversations/{conversationId}` */
  key: string;
  method: Method;
}

export interface RouteAlarmsProps extends NestedStackProps {
  routes: readonly RoutedMethod[];
  stage: Stage;
  alarms: ServiceAlarms;
}

/** `GET /api/conversations/{id}` → `GetApiConversationsId`. */
export const routeAlarmId = (key: string): string =>
  key
    .split(/[^A-Za-z0-9]+/)
    .filter(Boolean)
    .map((part) => `${part[0]?.toUpperCase()}${part.slice(1).toLowerCase()}`)
    .join('');

/**
 * Two alarms per route, from API Gateway's detailed metrics (the stage enables them for every
 * method: dimensions ApiName, Stage, Resource, Method): p99 latency and 5XX rate, each judged only
 * when the route had enough requests in the period, so a quiet route's one slow call pages nobody.
 * A nested stack of their own: two alarms per route would take the main stack towards
 * CloudFormation's 500 resources as routes are added.
 */
export class RouteAlarms extends NestedStack {
  constructor(scope: Construct, id: string, { routes, stage, alarms, ...props }: RouteAlarmsProps) {
    super(scope, id, { description: 'p99 latency and 5XX rate alarms of every REST route', ...props });
    const { route } = thresholds;
    for (const { key, method } of routes) {
      const requests = method.metricCount(stage, { statistic: 'Sum' });
      const id = routeAlarmId(key);
      alarms.add(
        `${id}Latency`,
        {
          metric: new MathExpression({
            expression: `IF(FILL(requests, 0) >= ${route.minRequests}, latency, 0)`,
            usingMetrics: { requests, latency: method.metricLatency(stage, { statistic: 'p99' }) },
            period: alarmPeriod,
            label: `${key} p99 latency (ms)`,
          }),
          summary: `${key}: p99 latency above ${route.p99LatencyMs} ms.`,
          runbook: 'route-latency',
          threshold: route.p99LatencyMs,
          datapoints: route.datapoints,
          periods: route.periods,
        },
        this,
      );
      alarms.add(
        `${id}ErrorRate`,
        {
          metric: new MathExpression({
            expression: `IF(FILL(requests, 0) >= ${route.minRequests}, 100 * FILL(errors, 0) / requests, 0)`,
            usingMetrics: { requests, errors: method.metricServerError(stage, { statistic: 'Sum' }) },
            period: alarmPeriod,
            label: `${key} 5XX rate (%)`,
          }),
          summary: `${key}: more than ${route.errorRatePercent}% of responses are 5XX.`,
          runbook: 'route-error-rate',
          threshold: route.errorRatePercent,
          datapoints: route.datapoints,
          periods: route.periods,
        },
        this,
      );
    }
  }
}
