import {
  BatchGetCommand,
  DynamoDBDocumentClient,
  UpdateCommand,
  type UpdateCommandInput,
} from '@aws-sdk/lib-dynamodb';
import type { APIGatewayProxyResult } from 'aws-lambda';
import { mockClient } from 'aws-sdk-client-mock';
import { afterAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { authCache } from '../../shared/auth/authenticate';
import { config } from '../../shared/config';
import type { StoredConversation } from '../../shared/conversations/state';
import { assignmentEntry } from '../../shared/db/audit';
import { keys } from '../../shared/db/keys';
import { teamLoadWrites } from '../../shared/db/team-load';
import { RateLimitedError } from '../../shared/errors';
import { ok, route } from '../../shared/http/route';
import { createHandler } from '../../shared/http/stack';
import { logger } from '../../shared/logger';
import * as z from '../../shared/schemas/zod';
import { apiGatewayEvent, lambdaContext } from './helpers/apigw-event';
import { apiKeyFixture, batchGetFrom, organizationItem } from './helpers/auth-items';

type Counted = Pick<StoredConversation, 'teamId' | 'status' | 'deletedAt'>;

const ORG = '019a7c1e-5b2a-7c31-9f4e-2d8a6b0c1e01';
const A = '019a7c1e-5e30-7f54-8a65-5b76c87d9801';
const B = '019a7c1e-5e30-7f54-8a65-5b76c87d9802';
const open = (teamId: string | null, status = 'open'): Counted => ({
  teamId,
  status: status as Counted['status'],
  deletedAt: null,
});

/** Each write as [team, kind, delta, checks that the team is live]. */
function summary(changes: { before: Counted; after: Counted }[]) {
  return teamLoadWrites(ORG, changes).map(({ action, onConditionFailed }) => {
    const write = action.Update ?? action.ConditionCheck;
    const teamId = String(write?.Key?.sk).replace('TEAM#', '');
    expect(write?.Key).toEqual(keys.teamExists(ORG, teamId));
    const live = write?.ConditionExpression?.includes('attribute_not_exists(deletedAt)') ?? false;
    // A newly named team that is missing is the client's mistake (422), anything else a conflict.
    expect(onConditionFailed !== undefined).toBe(live);
    return [
      teamId,
      action.Update ? 'count' : 'check',
      action.Update?.ExpressionAttributeValues?.[':delta'] ?? 0,
      live,
    ];
  });
}

describe('team counts of open conversations', () => {
  it('follows assignment, moves, closing, reopening and deletion, one action per team', () => {
    expect(summary([{ before: open(null), after: open(A) }])).toEqual([[A, 'count', 1, true]]);
    expect(summary([{ before: open(A), after: open(B) }])).toEqual([
      [A, 'count', -1, false],
      [B, 'count', 1, true],
    ]);
    expect(summary([{ before: open(A), after: open(null) }])).toEqual([[A, 'count', -1, false]]);
    expect(summary([{ before: open(A), after: open(A, 'closed') }])).toEqual([[A, 'count', -1, false]]);
    // Reopening counts again, also on a deleted team's tombstone (no liveness check).
    expect(summary([{ before: open(A, 'closed'), after: open(A, 'snoozed') }])).toEqual([
      [A, 'count', 1, false],
    ]);
    expect(summary([{ before: open(A, 'pending'), after: { ...open(A), deletedAt: 'now' } }])).toEqual([
      [A, 'count', -1, false],
    ]);
    // Not counted either way, but a newly named team must exist.
    expect(summary([{ before: open(null, 'closed'), after: open(A, 'closed') }])).toEqual([
      [A, 'check', 0, true],
    ]);
    expect(summary([{ before: open(A), after: open(A, 'pending') }])).toEqual([]);
    expect(
      summary([{ before: open(A, 'closed'), after: { ...open(A, 'closed'), deletedAt: 'now' } }]),
    ).toEqual([]);
  });

  it('adds up the conversations of a bulk chunk per team', () => {
    const closing = (teamId: string | null) => ({ before: open(teamId), after: open(teamId, 'closed') });
    expect(summary([closing(A), closing(B), closing(A), closing(null)])).toEqual([
      [A, 'count', -2, false],
      [B, 'count', -1, false],
    ]);
  });
});

describe('assignment history entries', () => {
  const actor = { type: 'api_key' as const, id: 'key' };
  const kind = (from: string | null, to: string | null, fromTeam: string | null, team: string | null) =>
    assignmentEntry(from, to, team, actor, fromTeam)?.type;

  it('types operator changes by the operator, and team-only changes by the team', () => {
    expect(kind(null, 'op', A, B)).toBe('assigned');
    expect(kind('op', null, A, A)).toBe('unassigned');
    expect(kind('op', 'op2', null, null)).toBe('transferred');
    expect(kind(null, null, null, A)).toBe('assigned');
    expect(kind('op', 'op', A, null)).toBe('unassigned');
    expect(kind('op', 'op', A, B)).toBe('transferred');
    expect(kind('op', 'op', A, A)).toBeUndefined();
    expect(assignmentEntry(null, 'op', null, actor)).toMatchObject({ fromTeamId: null, teamId: null });
  });
});

describe('a route with a rate limit of its own', () => {
  const ddb = mockClient(DynamoDBDocumentClient);
  const quota = { limit: 30, remaining: 0, resetSeconds: 12 };
  const handler = createHandler([
    route({
      method: 'POST',
      path: '/api/limited',
      operationId: 'limited',
      summary: 'Reports its own limit',
      tag: 'Test',
      callers: ['apiKey'],
      body: z.strictObject({ remaining: z.int() }),
      response: { status: 200, schema: z.unknown(), description: 'Done' },
      handle: async ({ body }) => {
        if (body.remaining < 0) throw new RateLimitedError(quota.resetSeconds, { quota });
        return ok(
          {},
          { 'RateLimit-Limit': '30', 'RateLimit-Remaining': String(body.remaining), 'RateLimit-Reset': '12' },
        );
      },
    }),
  ]);
  const key = apiKeyFixture();
  const send = async (remaining: number): Promise<APIGatewayProxyResult> =>
    handler(
      apiGatewayEvent({
        method: 'POST',
        resource: '/api/limited',
        headers: { Authorization: `Bearer ${key.token}`, 'Content-Type': 'application/json' },
        body: JSON.stringify({ remaining }),
      }),
      lambdaContext(),
    );

  beforeEach(() => {
    ddb.reset();
    authCache.clear();
    ddb.on(BatchGetCommand).callsFake(batchGetFrom([key.item, organizationItem(key.orgId)]));
    // The credential's window: this instance leases its first chunk.
    ddb.on(UpdateCommand).callsFake((input: UpdateCommandInput) => ({
      Attributes: { used: input.ExpressionAttributeValues?.[':wanted'] },
    }));
    vi.spyOn(logger, 'info').mockImplementation(() => undefined);
  });
  afterAll(() => {
    ddb.restore();
    vi.restoreAllMocks();
  });

  it('reports whichever limit is closer to running out', async () => {
    const own = await send(7);
    expect(own.headers).toMatchObject({ 'RateLimit-Limit': '30', 'RateLimit-Remaining': '7' });
    const credential = await send(config.rateLimitPerMinute);
    expect(credential.headers?.['RateLimit-Limit']).toBe(String(config.rateLimitPerMinute));
    expect(Number(credential.headers?.['RateLimit-Remaining'])).toBeLessThan(config.rateLimitPerMinute);
  });

  it('answers its own 429 with its own limit in the RateLimit headers and Retry-After', async () => {
    const refused = await send(-1);
    expect(refused.statusCode).toBe(429);
    expect(refused.headers).toMatchObject({
      'Retry-After': '12',
      'RateLimit-Limit': '30',
      'RateLimit-Remaining': '0',
      'RateLimit-Reset': '12',
    });
  });
});
