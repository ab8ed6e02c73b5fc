import { type CfnElement, Token } from 'aws-cdk-lib';
import type { FunctionNeeds } from '../../../functions/needs';
import { bucketDefinitions, queueDefinitions } from '../../../shared/resources';
import type { ServiceFunction, ServiceFunctionProps } from '../../constructs/service-function';
import { acknowledge } from '../../nag';
import type { StackScope } from './context';
import type { Realtime } from './realtime';
import type { Secrets } from './secrets';
import type { FunctionSettings } from './settings';
import type { Storage } from './storage';

/** What the stack offers the functions it grants to. */
export interface GrantScope {
  stack: StackScope;
  storage: Storage;
  secrets: Secrets;
  /** Only the stacks that host a function with `email` pass it. */
  settings?: FunctionSettings;
  /** Only the stacks that host a function with `realtime` pass it. */
  realtime?: Realtime;
}

/**
 * The props a function's needs decide at its construction: its network (the search index's) and
 * the secrets it reads, for an endpoint group and a worker alike.
 */
export function propsForNeeds(
  needs: FunctionNeeds,
  scope: GrantScope,
): Pick<ServiceFunctionProps, 'vpc' | 'vpcSubnets' | 'securityGroups' | 'secrets'> {
  return {
    ...(needs.searchIndex && scope.storage.searchIndex.networkProps()),
    secrets: [
      ...(needs.discordToken ? [scope.secrets.discordToken] : []),
      ...(needs.cursorKeys ? [scope.secrets.cursorKeys] : []),
    ],
  };
}

/**
 * Grants `fn` exactly what `needs` says and sets the matching environment: the one grant loop of
 * the stack. A queue, bucket or stack part a function names and the stack does not have is a
 * mistake in its definition: it throws rather than leave the function without it.
 */
export function grantNeeds(fn: ServiceFunction, name: string, needs: FunctionNeeds, scope: GrantScope): void {
  const { table, queues, buckets, searchIndex } = scope.storage;
  if (needs.table) fn.bindTable(table, needs.table);
  if (needs.searchIndex) searchIndex.connect(fn);
  for (const queueName of needs.sendsTo ?? []) {
    const definition = queueDefinitions.find((q) => q.name === queueName);
    const queue = queues.get(queueName);
    if (!definition || !queue) throw new Error(`${name}: no queue ${queueName}`);
    fn.bindQueue(queue, definition);
  }
  for (const [bucketName, access] of needs.buckets ?? []) {
    const definition = bucketDefinitions.find((b) => b.name === bucketName);
    const bucket = buckets.get(bucketName);
    if (!definition || !bucket) throw new Error(`${name}: no bucket ${bucketName}`);
    fn.bindBucket(bucket, definition, access);
  }
  if (needs.webhookSecrets) scope.secrets.withWebhookSecrets(fn, needs.webhookSecrets);
  if (needs.aiProviderKeys) scope.secrets.withAiProviderKeys(fn);
  if (needs.email) {
    if (!scope.settings) throw new Error(`${name}: sends e-mail, but no settings were given`);
    scope.settings.withEmail(fn);
  }
  if (needs.realtime) {
    if (!scope.realtime) throw new Error(`${name}: pushes realtime notices, but no realtime API was given`);
    grantRealtime(fn, scope.stack, scope.realtime);
  }
}

/** The WebSocket API's callback URL and the right to post to its connections. */
function grantRealtime(fn: ServiceFunction, stack: StackScope, realtime: Realtime): void {
  fn.addEnvironment('REALTIME_ENDPOINT', realtime.stage.callbackUrl);
  realtime.api.grantManageConnections(fn);
  // cdk-nag names the resource as the template has it: pseudo parameters or the env's values.
  const named = (value: string, pseudo: string) => (Token.isUnresolved(value) ? `<AWS::${pseudo}>` : value);
  const apiLogicalId = stack.resolve(stack.getLogicalId(realtime.api.node.defaultChild as CfnElement));
  const connections = `arn:${named(stack.partition, 'Partition')}:execute-api:${named(stack.region, 'Region')}:${named(stack.account, 'AccountId')}:<${apiLogicalId}>/*/*/@connections/*`;
  acknowledge(fn, {
    [`AwsSolutions-IAM5[Resource::${connections}]`]:
      'Posting to a WebSocket connection names the connection, known only at run time; the grant is limited to the realtime API.',
  });
}
