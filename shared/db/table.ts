import type { CreateTableCommandInput } from '@aws-sdk/client-dynamodb';

/**
 * The single table, described once. CDK (`infra/`) and the local bootstrap both build the table
 * from this object, so the deployed table and the one tests run against cannot drift.
 * Index names are generic on purpose: each entity overloads them (see docs/data-model.md).
 */
export const tableDefinition = {
  partitionKey: 'pk',
  sortKey: 'sk',
  /**
   * Indexes hold keys and the few attributes their listings filter or sort on, never whole items:
   * an entry of ~200 bytes costs one write unit wherever it moves, and changing an attribute no
   * index holds (title, metadata, counts…) costs no index write at all. Listings read the page's
   * items by key afterwards (one BatchGetItem). See docs/data-model.md, "What the indexes hold".
   */
  globalIndexes: [
    // Organizations by creation; conversations by `updatedAt` (incremental sync).
    { name: 'gsi1', partitionKey: 'gsi1pk', sortKey: 'gsi1sk', projection: [] },
    // Conversations by status, most recent message first (filters: priority, tag).
    { name: 'gsi2', partitionKey: 'gsi2pk', sortKey: 'gsi2sk', projection: ['priority', 'tags'] },
    // Conversations of an operator, most recent message first (filters: status, priority, tag).
    { name: 'gsi3', partitionKey: 'gsi3pk', sortKey: 'gsi3sk', projection: ['status', 'priority', 'tags'] },
    // Conversations of a visitor, by creation: a visitor has few, sorted by `lastMessageAt` when read
    // and filtered on the items (a status, priority, tag or operator change rewrites no entry here).
    { name: 'gsi4', partitionKey: 'gsi4pk', sortKey: 'gsi4sk', projection: ['lastMessageAt'] },
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
      Projection: index.projection.length
        ? { ProjectionType: 'INCLUDE', NonKeyAttributes: [...index.projection] }
        : { ProjectionType: 'KEYS_ONLY' },
    })),
    StreamSpecification: { StreamEnabled: true, StreamViewType: tableDefinition.streamView },
  };
}
