import {
  BatchGetCommand,
  type BatchGetCommandInput,
  DynamoDBDocumentClient,
  GetCommand,
  type GetCommandInput,
  QueryCommand,
} from '@aws-sdk/lib-dynamodb';
import { mockClient } from 'aws-sdk-client-mock';
import { afterAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { authCache, authenticate } from '../../shared/auth/authenticate';
import { mintOrgToken } from '../../shared/auth/tokens';
import { credentials } from '../../shared/db/credentials';
import { INDEX_LAG_MS } from '../../shared/db/index-lag';
import { keys } from '../../shared/db/keys';
import { operators } from '../../shared/db/operators';
import { organizations } from '../../shared/db/organizations';
import { visitors } from '../../shared/db/visitors';
import { uuidv7 } from '../../shared/ids';
import { organizationItem } from './helpers/auth-items';

/**
 * Reads right after a create, as AWS answers them: an eventually consistent read may not see an
 * item written a moment ago, a strongly consistent one always does, and an index shows a new entry
 * a moment late. DynamoDB Local answers every read at once, so the table is played here.
 */
const ddb = mockClient(DynamoDBDocumentClient);
afterAll(() => ddb.restore());
beforeEach(() => {
  ddb.reset();
  authCache.clear();
});

type Item = Record<string, unknown>;
const keyOf = (key: Record<string, unknown> | undefined) => `${key?.pk}|${key?.sk}`;

/** A table whose every item was written a moment ago: only strongly consistent reads see them. */
function justWritten(items: Item[]): void {
  const byKey = new Map(items.map((item) => [keyOf(item), item]));
  ddb.on(GetCommand).callsFake((input: GetCommandInput) => ({
    Item: input.ConsistentRead ? byKey.get(keyOf(input.Key)) : undefined,
  }));
  ddb.on(BatchGetCommand).callsFake((input: BatchGetCommandInput) => {
    const [table, request] = Object.entries(input.RequestItems ?? {})[0] ?? [];
    const found = request?.ConsistentRead
      ? (request.Keys ?? []).flatMap((key) => byKey.get(keyOf(key)) ?? [])
      : [];
    return { Responses: { [String(table)]: found } };
  });
}

describe('a read by id right after the create', () => {
  it('finds the visitor a conversation is started for, the operator, and the organization', async () => {
    const orgId = uuidv7();
    const visitorId = uuidv7();
    const operatorId = uuidv7();
    justWritten([
      organizationItem(orgId),
      { ...keys.visitor(orgId, visitorId), entity: 'visitor', id: visitorId, identifier: visitorId },
      {
        ...keys.operator(orgId, operatorId),
        entity: 'operator',
        id: operatorId,
        orgId,
        name: 'New Hire',
        email: 'new@example.com',
        role: 'operator',
        createdAt: '2026-11-21T10:00:00.000Z',
      },
    ]);

    expect((await visitors.get(orgId, visitorId))?.id).toBe(visitorId);
    expect((await operators.get(orgId, operatorId))?.id).toBe(operatorId);
    expect((await organizations.get(orgId))?.id).toBe(orgId);
  });

  it('authenticates a session used the moment the login minted it', async () => {
    const orgId = uuidv7();
    const minted = mintOrgToken('operatorSession', orgId);
    const session = {
      ...keys.operatorSession(orgId, minted.credentialId),
      kind: 'operatorSession',
      id: minted.credentialId,
      orgId,
      hash: minted.hash,
      operatorId: uuidv7(),
      role: 'operator',
      expiresAt: Math.floor(Date.now() / 1000) + 3_600,
    };
    justWritten([session, organizationItem(orgId)]);

    const found = await credentials.getWithOrganization('operatorSession', orgId, minted.credentialId);
    expect(found.credential?.id).toBe(minted.credentialId);
    expect(found.organization?.id).toBe(orgId);
    const { caller } = await authenticate({ authorization: `Bearer ${minted.token}` }, ['operator']);
    expect(caller).toMatchObject({ kind: 'operator', orgId, operatorId: session.operatorId });
  });
});

describe('the organization of an operator id (impersonation)', () => {
  /** The lookup index shows the operator's entry from the `shownFrom`-th Query on (never: Infinity). */
  function lookupIndex(orgId: string, shownFrom: number): void {
    let queries = 0;
    ddb.on(QueryCommand).callsFake(() => {
      queries++;
      return { Items: queries >= shownFrom ? [{ pk: `ORG#${orgId}`, sk: 'OPERATOR#x' }] : [] };
    });
  }

  it('finds an operator created a moment ago once the index shows it', async () => {
    const orgId = uuidv7();
    lookupIndex(orgId, 3);

    expect(await operators.organizationOf(uuidv7())).toBe(orgId);
    expect(ddb.commandCalls(QueryCommand)).toHaveLength(3);
  });

  it('answers at once for an id older than the index lag, and within the lag for a new unknown one', async () => {
    lookupIndex(uuidv7(), Number.POSITIVE_INFINITY);

    expect(await operators.organizationOf(uuidv7(Date.now() - INDEX_LAG_MS - 1_000))).toBeUndefined();
    expect(ddb.commandCalls(QueryCommand)).toHaveLength(1);
    // A version 4 id tells no time: one look.
    expect(await operators.organizationOf(crypto.randomUUID())).toBeUndefined();
    expect(ddb.commandCalls(QueryCommand)).toHaveLength(2);

    // On a fake clock (timers, Date and performance): the wait is the lookup's own, not the machine's.
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date', 'performance'] });
    try {
      const started = performance.now();
      let waited = Number.NaN;
      const lookup = operators.organizationOf(uuidv7()).finally(() => {
        waited = performance.now() - started;
      });
      await vi.advanceTimersByTimeAsync(INDEX_LAG_MS + 1_000);
      expect(await lookup).toBeUndefined();
      expect(waited).toBeGreaterThan(INDEX_LAG_MS - 200);
      expect(waited).toBeLessThanOrEqual(INDEX_LAG_MS + 100);
    } finally {
      vi.useRealTimers();
    }
  });
});
