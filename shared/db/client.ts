import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { config } from '../config';
import { traced } from '../tracing';
import { meterDynamo } from './meter';

/**
 * One client per container, created at cold start. The endpoint comes from the SDK's own
 * `AWS_ENDPOINT_URL_DYNAMODB`, which the local stack sets; nothing here knows about emulators.
 */
export const dynamo = traced(new DynamoDBClient({ maxAttempts: 3 }));
meterDynamo(dynamo);

export const db = DynamoDBDocumentClient.from(dynamo, {
  marshallOptions: { removeUndefinedValues: true },
});

export const tableName = config.tableName;

/** Epoch seconds for the TTL attribute. */
export function ttlSeconds(expiresAtMs: number): number {
  return Math.floor(expiresAtMs / 1000);
}
