import { Tags } from 'aws-cdk-lib';
import { AccessLogFormat } from 'aws-cdk-lib/aws-apigateway';
import {
  WebSocketApi,
  LogGroupLogDestination as WebSocketLogDestination,
  WebSocketStage,
} from 'aws-cdk-lib/aws-apigatewayv2';
import { WebSocketLambdaIntegration } from 'aws-cdk-lib/aws-apigatewayv2-integrations';
import { realtimeConnectionsEntry } from '../../../functions/workers';
import { ServiceFunction } from '../../constructs/service-function';
import { acknowledge } from '../../nag';
import type { FunctionDefaults, FunctionEntry, StackScope } from './context';
import type { Storage } from './storage';

/**
 * The realtime channel: a WebSocket API whose routes all reach one connection handler; the push
 * worker (workers part) posts to its connections.
 */
export class Realtime {
  readonly api: WebSocketApi;
  readonly stage: WebSocketStage;
  readonly functions: readonly FunctionEntry[];

  constructor(
    stack: StackScope,
    props: {
      storage: Storage;
      defaults: FunctionDefaults;
      /** WebSocket stage throttling (messages per second, burst). */
      throttle: { rateLimit: number; burstLimit: number };
    },
  ) {
    const { table, logGroup } = props.storage;
    const { environment, logsKey, reserved } = props.defaults;
    const functions: FunctionEntry[] = [];
    // The realtime channel: a WebSocket API whose routes all reach one connection handler.
    const realtimeFunction = new ServiceFunction(stack, 'RealtimeConnectionsFunction', {
      entry: realtimeConnectionsEntry,
      description: 'realtime WebSocket connections: authenticates and records them',
      environment: { ...environment, SERVICE_FUNCTION: 'realtime' },
      logsKey,
      reservedConcurrentExecutions: reserved('realtime'),
    }).bindTable(table, 'readWrite');
    Tags.of(realtimeFunction).add('service:realtime', 'connections');
    const realtimeIntegration = (id: string) => new WebSocketLambdaIntegration(id, realtimeFunction);
    const realtimeApi = new WebSocketApi(stack, 'RealtimeApi', {
      description: 'Realtime notices for operators and visitors',
      connectRouteOptions: { integration: realtimeIntegration('RealtimeConnect') },
      disconnectRouteOptions: { integration: realtimeIntegration('RealtimeDisconnect') },
      defaultRouteOptions: { integration: realtimeIntegration('RealtimeDefault') },
    });
    acknowledge(realtimeApi, {
      'AwsSolutions-APIG4':
        'The $connect handler authenticates the session or visitor token itself (shared middleware code) and refuses the connection with 401; $disconnect and $default only act on a connection it accepted.',
    });
    const realtimeThrottle = props.throttle;
    const realtimeStage = new WebSocketStage(stack, 'RealtimeStage', {
      webSocketApi: realtimeApi,
      stageName: 'v1',
      autoDeploy: true,
      throttle: realtimeThrottle,
      accessLogSettings: {
        destination: new WebSocketLogDestination(logGroup('RealtimeAccessLogs')),
        format: AccessLogFormat.custom(
          JSON.stringify({
            requestId: '$context.requestId',
            connectionId: '$context.connectionId',
            routeKey: '$context.routeKey',
            eventType: '$context.eventType',
            status: '$context.status',
            requestTime: '$context.requestTime',
            ip: '$context.identity.sourceIp',
            integrationStatus: '$context.integration.status',
            integrationLatency: '$context.integration.latency',
            error: '$context.error.message',
          }),
        ),
      },
    });
    functions.push({ name: 'realtime', id: 'RealtimeConnections', fn: realtimeFunction });

    this.api = realtimeApi;
    this.stage = realtimeStage;
    this.functions = functions;
  }
}
