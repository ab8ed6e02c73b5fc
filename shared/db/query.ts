import { paginateQuery, QueryCommand, type QueryCommandInput } from '@aws-sdk/lib-dynamodb';
import { db, tableName } from './client';

/**
 * The Query input for the items of partition `pk` whose sort key starts with `prefix`; `values`
 * adds the ones a filter names.
 */
export function childrenQuery(pk: string, prefix: string, values: Record<string, unknown> = {}) {
  return {
    TableName: tableName,
    KeyConditionExpression: 'pk = :pk AND begins_with(sk, :prefix)',
    ExpressionAttributeValues: { ':pk': pk, ':prefix': prefix, ...values },
  };
}

/**
 * Every item of one partition whose sort key starts with `prefix`, following pages until done or
 * until `limit` items: the read behind each "list the children of X" in this table.
 */
export async function queryPrefix(
  pk: string,
  prefix: string,
  options: { limit?: number; newestFirst?: boolean; consistent?: boolean } = {},
): Promise<Record<string, unknown>[]> {
  const items: Record<string, unknown>[] = [];
  let startKey: Record<string, unknown> | undefined;
  do {
    const page = await db.send(
      new QueryCommand({
        ...childrenQuery(pk, prefix),
        ScanIndexForward: !options.newestFirst,
        ConsistentRead: options.consistent ?? false,
        ...(options.limit ? { Limit: options.limit - items.length } : {}),
        ExclusiveStartKey: startKey,
      }),
    );
    items.push(...(page.Items ?? []));
    startKey = page.LastEvaluatedKey;
  } while (startKey && (options.limit === undefined || items.length < options.limit));
  return items;
}

/** Every item a Query matches, all pages (the SDK's paginator). */
export async function queryAll(input: QueryCommandInput): Promise<Record<string, unknown>[]> {
  const items: Record<string, unknown>[] = [];
  for await (const page of paginateQuery({ client: db }, input)) items.push(...(page.Items ?? []));
  return items;
}

/** No projection: a COUNT Query takes none. */
type OffsetQuery = Omit<QueryCommandInput, 'Limit' | 'ExclusiveStartKey' | 'Select' | 'ProjectionExpression'>;

/**
 * One offset page of a Query and the exact number of items it matches, for the `pagination`
 * object. The page is read first (`Limit` offset + limit, following pages a filter or the 1 MB cap
 * cut short); only when items follow it is the rest counted, with `Select=COUNT` from where the page
 * stopped. A set that fits in offset + limit costs one request; a longer one a second, sequential
 * request whose read units are those of the items after the page. A count beside the page (the
 * earlier design) cost two requests for every page, small sets included, and read the page's items
 * twice.
 */
export async function offsetPage(
  input: OffsetQuery,
  offset: number,
  limit: number,
): Promise<{ items: Record<string, unknown>[]; total: number }> {
  const wanted = offset + limit;
  const read: Record<string, unknown>[] = [];
  let startKey: Record<string, unknown> | undefined;
  do {
    const page = await db.send(
      new QueryCommand({ ...input, Limit: wanted - read.length, ExclusiveStartKey: startKey }),
    );
    read.push(...(page.Items ?? []));
    startKey = page.LastEvaluatedKey;
  } while (startKey && read.length < wanted);
  let total = read.length;
  while (startKey) {
    const rest = await db.send(new QueryCommand({ ...input, Select: 'COUNT', ExclusiveStartKey: startKey }));
    total += rest.Count ?? 0;
    startKey = rest.LastEvaluatedKey;
  }
  return { items: read.slice(offset), total };
}
