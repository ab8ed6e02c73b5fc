import type { Stack } from 'aws-cdk-lib';
import type { IKey } from 'aws-cdk-lib/aws-kms';
import type { ServiceFunction } from '../../constructs/service-function';

/**
 * The parts of the service stack (storage, secrets, REST API, realtime, workers, operations) are
 * plain classes that create their resources in the stack's own scope, not constructs of their own:
 * a construct scope would prefix every logical id, and the table, buckets, keys and secrets (retained,
 * some deletion-protected) would be replaced. One file per part keeps each readable in one sitting.
 */
export type StackScope = Stack;

/** A function of the stack: its name (route group, worker, `realtime`) and construct id prefix. */
export interface FunctionEntry {
  name: string;
  id: string;
  fn: ServiceFunction;
  /** Triggered by the table's stream. */
  stream?: boolean;
}

/** What every function of the stack starts from. */
export interface FunctionDefaults {
  /** The variables every function gets (its SERVICE_FUNCTION added per function). */
  environment: Readonly<Record<string, string>>;
  logsKey: IKey;
  /** Reserved concurrency of the function of that name (undefined: none reserved). */
  reserved(name: string): number | undefined;
}

/** `webhook-deliveries` → `WebhookDeliveries`: construct ids from definition names. */
export const pascal = (name: string): string =>
  name.replace(/(^|[-_/])([a-z0-9])/g, (_match, _sep: string, char: string) => char.toUpperCase());

/** Tags on our functions, so tests and operators can tell them apart and from CDK helper functions. */
export const ROUTE_GROUP_TAG = 'service:route-group';
export const WORKER_TAG = 'service:worker';

/** The custom rotation function of the cursor key ring (Secrets Manager's rotation steps). */
export const cursorKeyRotationEntry = 'functions/rotation/cursor-signing-key.ts';
