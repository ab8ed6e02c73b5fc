/**
 * DynamoDB as AWS runs it, locally: a layer between every function and DynamoDB Local
 * (docs/local.md, "DynamoDB as AWS runs it").
 */
import type { RunningEmulator } from '../emulators';
import { describeSemantics, readSemanticsConfig, semanticsEnabled } from './config';
import { startDynamoDbSemantics } from './server';

export type { LedgerMode, SemanticsConfig } from './config';
export { DEFAULT_SEMANTICS, readSemanticsConfig, semanticsEnabled } from './config';
export type { Ledger, LedgerItem, LedgerPartition, LedgerSnapshot } from './ledger';
export type { DynamoDbSemantics, SemanticsOptions, SemanticsStats } from './server';
export { startDynamoDbSemantics } from './server';

/**
 * Starts DynamoDB Local with the layer in front, as the environment says
 * (`DYNAMODB_AWS_SEMANTICS=off`: DynamoDB Local as it is). The emulator returned has the layer's
 * endpoint; stopping (or killing) it stops both.
 */
export async function withAwsSemantics(
  start: () => Promise<RunningEmulator>,
  env: Record<string, string | undefined> = process.env,
): Promise<RunningEmulator> {
  // Read first: a misspelt value fails the start before DynamoDB Local is started.
  const config = semanticsEnabled(env) ? readSemanticsConfig(env) : undefined;
  const dynamodb = await start();
  if (!config) return dynamodb;
  let layer: Awaited<ReturnType<typeof startDynamoDbSemantics>>;
  try {
    layer = await startDynamoDbSemantics({ upstream: dynamodb.endpoint, config });
  } catch (error) {
    await dynamodb.stop();
    throw error;
  }
  const kill = dynamodb.kill;
  return {
    name: `${dynamodb.name} behind AWS semantics (${describeSemantics(config)})`,
    endpoint: layer.endpoint,
    stop: async () => {
      await layer.close();
      await dynamodb.stop();
    },
    ...(kill && {
      kill: async () => {
        await layer.close();
        await kill();
      },
    }),
  };
}
