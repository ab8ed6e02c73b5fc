import { paginateQuery, QueryCommand, type QueryCommandInput } from '@aws-sdk/lib-dynamodb';
import { addDays } from '../analytics/days';
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

/**
 * Days per Query: 92 days of a day-keyed partition's items (≤ 8 of ~0.5 KB a day: ≤ 736) stay
 * within one 1 MB page, and longer ranges are split into Queries sent together, so a read costs one
 * round trip for any range the endpoints accept, in the common case.
 */
const DAYS_PER_QUERY = 92;

/**
 * Every item of partition `pk` whose sort key is `prefix` + a day from `from` to `to` (both
 * included, `YYYY-MM-DD`, anything may follow the day): one Query per 92 days, in parallel, each
 * following its pages. Eventually consistent: the day aggregates read this way may be a second
 * old, at half the read units.
 */
export async function readDayRange(
  pk: string,
  prefix: string,
  from: string,
  to: string,
): Promise<Record<string, unknown>[]> {
  const segments: [string, string][] = [];
  for (let start = from; start <= to; start = addDays(start, DAYS_PER_QUERY)) {
    const end = addDays(start, DAYS_PER_QUERY - 1);
    segments.push([start, end < to ? end : to]);
  }
  const pages = await Promise.all(
    segments.map(([start, end]) =>
      queryAll({
        TableName: tableName,
        KeyConditionExpression: 'pk = :pk AND sk BETWEEN :from AND :to',
        ExpressionAttributeValues: {
          ':pk': pk,
          ':from': `${prefix}${start}`,
          // '~' sorts after every character of the rest of the key: the whole last day.
          ':to': `${prefix}${end}~`,
        },
      }),
    ),
  );
  return pages.flat();
}

/** A Query whose page the caller does not shape: `queryPage` sets where it starts and how much it reads. */
type PagedQuery = Omit<QueryCommandInput, 'Limit' | 'ExclusiveStartKey' | 'Select'>;

/**
 * One cursor page of a Query: up to `limit` items from `start`, and whether any follow. A response
 * ends at 1 MB however many items `Limit` asks for (twenty large messages can fill it), so responses
 * are followed from their `LastEvaluatedKey` until `limit + 1` items are in hand (the one past the
 * page tells that more follow) or the Query ends: a short response never ends a listing early, and
 * a page that ends exactly where a response did still knows whether more follow. The caller resumes
 * after the page's last item (its cursor names that item's key).
 *
 * `maxBytes` ends the page early, before the item that would take it past that many bytes of JSON
 * (never before its first item), with `more` set: a Lambda answers at most 6 MB, which a hundred
 * large items can pass.
 */
export async function queryPage(
  input: PagedQuery,
  start: Record<string, unknown> | undefined,
  limit: number,
  options: { maxBytes?: number } = {},
): Promise<{ items: Record<string, unknown>[]; more: boolean }> {
  const read: Record<string, unknown>[] = [];
  let bytes = 0;
  let startKey = start;
  do {
    const page = await db.send(
      new QueryCommand({ ...input, Limit: limit + 1 - read.length, ExclusiveStartKey: startKey }),
    );
    for (const item of page.Items ?? []) {
      if (options.maxBytes !== undefined && read.length < limit) {
        bytes += Buffer.byteLength(JSON.stringify(item));
        if (bytes > options.maxBytes && read.length > 0) return { items: read, more: true };
      }
      read.push(item);
    }
    startKey = page.LastEvaluatedKey;
  } while (startKey && read.length <= limit);
  return { items: read.slice(0, limit), more: read.length > limit };
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
