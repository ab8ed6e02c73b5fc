import type { CreateTableCommandInput } from '@aws-sdk/client-dynamodb';

/**
 * The single table, described once. CDK (`infra/`) and the local bootstrap both build the table
 * from this object, so the deployed table and the one tests run against cannot drift.
 * Index names are generic on purpose: each entity overloads them (see docs/data-model.md).
 */
export const tableDefinition = {
  partitionKey: 'pk',
  sortKey: 'sk',
  globalIndexes: [
    { name: 'gsi1', partitionKey: 'gsi1pk', sortKey: 'gsi1sk' },
    { name: 'gsi2', partitionKey: 'gsi2pk', sortKey: 'gsi2sk' },
    { name: 'gsi3', partitionKey: 'gsi3pk', sortKey: 'gsi3sk' },
    { name: 'gsi4', partitionKey: 'gsi4pk', sortKey: 'gsi4sk' },
  ],
  /** Epoch seconds. DynamoDB deletes lazily (and DynamoDB Local never does): reads must also check it. */
  timeToLiveAttribute: 'expiresAt',
  streamView: 'NEW_AND_OLD_IMAGES',
} as const;

export type IndexName = (typeof tableDefinition.globalIndexes)[number]['name'];

export function createTableInput(tableName: string): CreateTableCommandInput {
  const { partitionKey, sortKey, globalIndexes } = tableDefinition;
  const keyAttributes = [partitionKey, sortKey, ...globalIndexes.flatMap((i) => [i.partitionKey, i.sortKey])];
  return {
    TableName: tableName,
    BillingMode: 'PAY_PER_REQUEST',
    AttributeDefinitions: keyAttributes.map((name) => ({ AttributeName: name, AttributeType: 'S' })),
    KeySchema: [
      { AttributeName: partitionKey, KeyType: 'HASH' },
      { AttributeName: sortKey, KeyType: 'RANGE' },
    ],
    GlobalSecondaryIndexes: globalIndexes.map((index) => ({
      IndexName: index.name,
      KeySchema: [
        { AttributeName: index.partitionKey, KeyType: 'HASH' },
        { AttributeName: index.sortKey, KeyType: 'RANGE' },
      ],
      Projection: { ProjectionType: 'ALL' },
    })),
    StreamSpecification: { StreamEnabled: true, StreamViewType: tableDefinition.streamView },
  };
}
