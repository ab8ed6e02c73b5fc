import { Duration, NestedStack, Tags } from 'aws-cdk-lib';
import {
  AccessLogFormat,
  type IResource,
  LambdaIntegration,
  LogGroupLogDestination,
  type Method,
  MethodLoggingLevel,
  Resource,
  ResponseTransferMode,
  ResponseType,
  RestApi,
} from 'aws-cdk-lib/aws-apigateway';
import { MathExpression } from 'aws-cdk-lib/aws-cloudwatch';
import { fallbackGroup, groupEntry, routeTable } from '../../../functions/routes';
import { alarmPeriod, type PagingAlarm } from '../../constructs/alarms';
import { ServiceFunction } from '../../constructs/service-function';
import { acknowledge } from '../../nag';
import { thresholds } from '../../operations/thresholds';
import type { RoutedMethod } from '../route-alarms';
import { groupBuildProps } from './build';
import {
  type FunctionDefaults,
  type FunctionEntry,
  pascal,
  ROUTE_GROUP_TAG,
  type StackScope,
} from './context';
import { grantNeeds, propsForNeeds } from './grants';
import type { Secrets } from './secrets';
import type { FunctionSettings } from './settings';
import type { Storage } from './storage';

/** API Gateway's own errors, in the contract's envelope. */
const gatewayErrors: readonly [ResponseType, string, string?][] = [
  [ResponseType.DEFAULT_4XX, 'BAD_REQUEST'],
  [ResponseType.DEFAULT_5XX, 'INTERNAL_ERROR'],
  [ResponseType.THROTTLED, 'RATE_LIMITED'],
  [ResponseType.QUOTA_EXCEEDED, 'RATE_LIMITED'],
  [ResponseType.ACCESS_DENIED, 'FORBIDDEN'],
  [ResponseType.REQUEST_TOO_LARGE, 'PAYLOAD_TOO_LARGE'],
  [ResponseType.UNSUPPORTED_MEDIA_TYPE, 'UNSUPPORTED_MEDIA_TYPE'],
  // Without an authorizer this only means "no such resource" (the proxies should catch those first).
  [ResponseType.MISSING_AUTHENTICATION_TOKEN, 'NOT_FOUND', '404'],
  [ResponseType.INTEGRATION_TIMEOUT, 'SERVICE_UNAVAILABLE'],
];

export interface RestApiProps {
  storage: Storage;
  secrets: Secrets;
  settings: FunctionSettings;
  defaults: FunctionDefaults;
  /** REST stage throttling (requests per second, burst). */
  throttle: { rateLimit: number; burstLimit: number };
}

/**
 * The REST API from the route table: one function per route group, built and granted from the
 * group's definition (functions/routes.ts), a method per route in a nested stack of its own, and the
 * fallback function's ANY methods for 404 and 405.
 */
export class ServiceRestApi {
  readonly api: RestApi;
  readonly accessLogs;
  readonly functions: readonly FunctionEntry[];
  readonly routeMethods: readonly (RoutedMethod & { group: string })[];
  /** The API-wide paging alarms (latency, 5XX rate). */
  readonly alarms: readonly [string, PagingAlarm][];

  constructor(stack: StackScope, props: RestApiProps) {
    const { logGroup } = props.storage;
    const { secrets, settings } = props;
    const { environment, logsKey, reserved } = { ...props.defaults, environment: settings.environment };
    const accessLogs = logGroup('ApiAccessLogs');
    const apiThrottle = props.throttle;
    const api = new RestApi(stack, 'Api', {
      // The ApiName dimension of every API Gateway metric: unique per stack, not CDK's default 'Api'.
      restApiName: `${stack.stackName}-api`,
      description: 'Customer-conversation platform public API',
      cloudWatchRole: true,
      disableExecuteApiEndpoint: false,
      deployOptions: {
        stageName: 'v1',
        tracingEnabled: true,
        metricsEnabled: true,
        loggingLevel: MethodLoggingLevel.ERROR,
        accessLogDestination: new LogGroupLogDestination(accessLogs),
        accessLogFormat: AccessLogFormat.jsonWithStandardFields(),
        // Below the account's regional limit (10,000/s), so one stage cannot take all of it.
        throttlingRateLimit: apiThrottle.rateLimit,
        throttlingBurstLimit: apiThrottle.burstLimit,
      },
    });
    const inMiddleware =
      'Authentication and authorization happen in the shared middleware of every function (five credential kinds, SHA-256 hashed, constant-time compare; caller kind, module, scope and admin role checks; tenancy by construction), not in an API Gateway or Cognito authorizer: API keys, operator sessions, visitor and widget tokens and the platform token are the contract, and the public routes (health, openapi.json, docs) need none.';
    acknowledge(api, {
      'AwsSolutions-APIG4': inMiddleware,
      'AwsSolutions-COG4': inMiddleware,
      'AwsSolutions-APIG2':
        "Requests are validated strictly in the shared middleware (zod strict schemas, 422 with the failing field), from the same schemas the OpenAPI document is generated from; API Gateway's validator would duplicate them and answer outside the contract's error envelope.",
      'AwsSolutions-IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/AmazonAPIGatewayPushToCloudWatchLogs]':
        "CDK's account-level role that lets API Gateway write execution and access logs; the managed policy is the one AWS documents for it.",
    });
    for (const [type, code, statusCode] of gatewayErrors) {
      api.addGatewayResponse(`${type.responseType}Response`, {
        type,
        ...(statusCode && { statusCode }),
        templates: {
          'application/json': `{"error":{"code":"${code}","message":$context.error.messageString,"correlationId":"$context.requestId"}}`,
        },
      });
    }
    const functions: FunctionEntry[] = [];

    const integrations = new Map<string, LambdaIntegration>();
    for (const group of routeTable()) {
      const groupId = pascal(group.name);
      // Every API group reads and writes the table: authentication records rate-limit windows.
      const needs = { ...group, table: 'readWrite' as const };
      const grantScope = { stack, storage: props.storage, secrets, settings };
      const fn = new ServiceFunction(stack, `${groupId}Function`, {
        entry: groupEntry(group.name),
        description: group.description,
        // SERVICE_FUNCTION: the `function` dimension of its metrics (stable across deployments).
        environment: { ...environment, SERVICE_FUNCTION: group.name },
        logsKey,
        reservedConcurrentExecutions: reserved(group.name),
        ...groupBuildProps(group),
        ...(group.streams && { timeout: Duration.seconds(group.streams.timeoutSeconds) }),
        ...propsForNeeds(needs, grantScope),
      });
      grantNeeds(fn, group.name, needs, grantScope);
      Tags.of(fn).add(ROUTE_GROUP_TAG, group.name);
      // One API-wide permission per function instead of one per method: keeps the resource policy
      // far below Lambda's 20 KB limit however many routes a group has.
      integrations.set(
        group.name,
        new LambdaIntegration(fn, {
          scopePermissionToMethod: false,
          ...(group.streams && { responseTransferMode: ResponseTransferMode.STREAM }),
        }),
      );
      functions.push({ name: group.name, id: groupId, fn });
    }

    const apiRequests = api.metricCount({ statistic: 'Sum', period: alarmPeriod });
    this.alarms = [
      [
        'ApiLatency',
        {
          metric: new MathExpression({
            expression: `IF(FILL(requests, 0) >= ${thresholds.api.minRequests}, latency, 0)`,
            usingMetrics: { requests: apiRequests, latency: api.metricLatency({ statistic: 'p99' }) },
            period: alarmPeriod,
            label: 'REST API p99 latency (ms)',
          }),
          summary: `REST API: p99 latency above ${thresholds.api.p99LatencyMs} ms.`,
          runbook: 'api-latency',
          threshold: thresholds.api.p99LatencyMs,
          datapoints: thresholds.api.datapoints,
          periods: thresholds.api.periods,
        },
      ],
      [
        'ApiErrorRate',
        {
          metric: new MathExpression({
            expression: `IF(FILL(requests, 0) >= ${thresholds.api.minRequests}, 100 * FILL(errors, 0) / requests, 0)`,
            usingMetrics: { requests: apiRequests, errors: api.metricServerError({ statistic: 'Sum' }) },
            period: alarmPeriod,
            label: 'REST API 5XX rate (%)',
          }),
          summary: `REST API: more than ${thresholds.api.errorRatePercent}% of responses are 5XX.`,
          runbook: 'api-error-rate',
          threshold: thresholds.api.errorRatePercent,
          datapoints: thresholds.api.datapoints,
          periods: thresholds.api.periods,
        },
      ],
    ];

    const fallback = integrations.get(fallbackGroup);
    if (!fallback) throw new Error(`Fallback group "${fallbackGroup}" is not in the route table`);

    // The API's method tree (a method per route and an ANY fallback per path) is most of the
    // template: a nested stack of its own keeps the main stack clear of CloudFormation's 500
    // resources. Its methods join the stage through the deployment below.
    const methodTree = new NestedStack(stack, 'ApiMethods', {
      description: "the REST API's resources and methods, from the route table",
    });
    acknowledge(methodTree, {
      'AwsSolutions-APIG4': inMiddleware,
      'AwsSolutions-COG4': inMiddleware,
    });
    const treeApi = RestApi.fromRestApiAttributes(methodTree, 'Api', {
      restApiId: api.restApiId,
      rootResourceId: api.restApiRootResourceId,
      restApiName: api.restApiName,
    });
    const routed = new Set<IResource>();
    const routeMethods: (RoutedMethod & { group: string })[] = [];
    for (const group of routeTable()) {
      const integration = integrations.get(group.name);
      if (!integration) continue;
      for (const route of group.routes) {
        const resource = resourceForPath(treeApi.root, route.path);
        const method: Method = resource.addMethod(route.method, integration);
        routeMethods.push({ key: `${route.method} ${route.path}`, method, group: group.name });
        routed.add(resource);
      }
    }
    // Unmatched methods on a known path reach the fallback function, which answers 405 with `Allow`.
    for (const resource of routed) resource.addMethod('ANY', fallback);
    // Unknown paths reach it too (404 in the envelope) rather than API Gateway's 403 "Missing Authentication Token".
    const apiRoot = resourceForPath(treeApi.root, '/api');
    if (!routed.has(apiRoot)) apiRoot.addMethod('ANY', fallback);
    apiRoot.addProxy({ defaultIntegration: fallback, anyMethod: true });
    // The root's own stay here: a REST API with no method of its own does not synthesize.
    api.root.addMethod('ANY', fallback);
    api.root.addProxy({ defaultIntegration: fallback, anyMethod: true });
    // A new deployment whenever the routes change, made once the method tree exists.
    const deployment = api.latestDeployment;
    if (!deployment) throw new Error('The REST API has no deployment');
    deployment.node.addDependency(methodTree);
    deployment.addToLogicalId(
      routeTable().map((group) => [group.name, group.routes.map((route) => `${route.method} ${route.path}`)]),
    );

    this.api = api;
    this.accessLogs = accessLogs;
    this.functions = functions;
    this.routeMethods = routeMethods;
  }
}
/**
 * Finds or creates the resource for `/a/{b}/c`. API Gateway rejects two differently named path
 * variables under one parent only at deploy time; failing here points at the offending route.
 */
function resourceForPath(root: IResource, path: string): IResource {
  return path
    .split('/')
    .filter(Boolean)
    .reduce((parent, part) => {
      const existing = parent.getResource(part);
      if (existing) return existing;
      const variable = (segment = '') => segment.startsWith('{');
      const sibling = parent.node.children.find(
        (child): child is Resource => child instanceof Resource && variable(child.path.split('/').pop()),
      );
      if (variable(part) && sibling) throw new Error(`${parent.path}/${part} clashes with ${sibling.path}`);
      return parent.addResource(part);
    }, root);
}
