import { CfnOutput, Stack, type StackProps } from 'aws-cdk-lib';
import type { Construct } from 'constructs';
import { routeTable } from '../../functions/routes';
import { workerDefinitions } from '../../functions/workers';
import type { FunctionDefaults } from './parts/context';
import { Operations } from './parts/operations';
import { Realtime } from './parts/realtime';
import { ServiceRestApi } from './parts/rest-api';
import { Secrets } from './parts/secrets';
import { FunctionSettings } from './parts/settings';
import { Storage } from './parts/storage';
import { Workers } from './parts/workers';

export { groupBuildProps, workerBuildProps } from './parts/build';
export { cursorKeyRotationEntry, ROUTE_GROUP_TAG, WORKER_TAG } from './parts/context';
export { webhookDeliveries } from './parts/operations';

export interface ServiceStackProps extends StackProps {
  rateLimitPerMinute?: number;
  authCacheTtlMs?: number;
  /** Two alarms per REST route (p99 latency, 5XX rate) in a nested stack; API-wide alarms always. Default true. */
  routeAlarms?: boolean;
  /**
   * Reserved concurrency per function (route group, `realtime`, worker), over `defaultReservedConcurrency`;
   * `false` reserves none. An account must keep 100 unreserved: lower these (or pass `false`) where the
   * account's concurrency quota is below ~600.
   */
  reservedConcurrency?: false | Partial<Record<string, number>>;
  /** REST stage throttling (requests per second, burst), default 1000 / 2000. */
  apiThrottle?: { rateLimit: number; burstLimit: number };
  /** WebSocket stage throttling (messages per second, burst), default 500 / 1000. */
  realtimeThrottle?: { rateLimit: number; burstLimit: number };
  /**
   * Percent of all organizations' requests one organization may take for 15 minutes before the
   * noisy-neighbour alarm fires; default: context `noisyNeighbourSharePercent`, else 50.
   */
  noisyNeighbourSharePercent?: number;
}

/** The realtime connections function and the cursor key rotation (Secrets Manager runs its steps one after another). */
const ownReservedConcurrency = { realtime: 50, 'cursor-key-rotation': 1 } as const;

/**
 * Reserved concurrency of every function by name, as the route groups' and workers' definitions
 * give it (a ceiling and a floor per function): what the stack reserves unless told otherwise.
 */
export const defaultReservedConcurrency: Readonly<Record<string, number>> = {
  ...Object.fromEntries(routeTable().map((group) => [group.name, group.reservedConcurrency])),
  ...Object.fromEntries(workerDefinitions.map((worker) => [worker.name, worker.reservedConcurrency])),
  ...ownReservedConcurrency,
};

/**
 * The service: storage, secrets, the REST API from the route table, the realtime channel, the
 * workers, and what operators watch (one file each under ./parts, all in this stack's scope so the
 * deployed logical ids stay what they are).
 */
export class ServiceStack extends Stack {
  constructor(scope: Construct, id: string, props: ServiceStackProps = {}) {
    super(scope, id, props);
    // S3 server access logs are delivered under a bucket policy (log delivery ACLs are legacy and
    // would need ObjectWriter ownership): set here so the template does not depend on cdk.json.
    this.node.setContext('@aws-cdk/aws-s3:serverAccessLogsUseBucketPolicy', true);

    const storage = new Storage(this);
    const secrets = new Secrets(this);
    const settings = new FunctionSettings(this, props);
    const defaults: FunctionDefaults = {
      environment: settings.environment,
      logsKey: storage.logsKey,
      reserved: (name) => {
        if (props.reservedConcurrency === false) return undefined;
        const reserved = props.reservedConcurrency?.[name] ?? defaultReservedConcurrency[name];
        if (reserved === undefined) throw new Error(`No reserved concurrency for ${name}`);
        return reserved;
      },
    };
    const restApi = new ServiceRestApi(this, {
      storage,
      secrets,
      settings,
      defaults,
      throttle: props.apiThrottle ?? { rateLimit: 1000, burstLimit: 2000 },
    });
    const realtime = new Realtime(this, {
      storage,
      defaults,
      throttle: props.realtimeThrottle ?? { rateLimit: 500, burstLimit: 1000 },
    });
    const workers = new Workers(this, { storage, secrets, realtime, defaults });
    const operations = new Operations(this, {
      storage,
      restApi,
      realtime,
      workers,
      functions: [...restApi.functions, ...realtime.functions, ...workers.functions],
      routeAlarms: props.routeAlarms ?? true,
      noisyNeighbourSharePercent: props.noisyNeighbourSharePercent,
    });

    new CfnOutput(this, 'AlarmTopicArn', { value: operations.alarms.topic.topicArn });
    new CfnOutput(this, 'RealtimeUrl', { value: realtime.stage.url });
    new CfnOutput(this, 'ApiUrl', { value: restApi.api.url });
    new CfnOutput(this, 'TableName', { value: storage.table.tableName });
  }
}
