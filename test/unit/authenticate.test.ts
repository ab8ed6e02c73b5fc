import { BatchGetCommand, DynamoDBDocumentClient, GetCommand } from '@aws-sdk/lib-dynamodb';
import { mockClient } from 'aws-sdk-client-mock';
import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';
import { authCache, authenticate } from '../../shared/auth/authenticate';
import { mintOrgToken, mintPlatformToken } from '../../shared/auth/tokens';
import { clock } from '../../shared/clock';
import { keys } from '../../shared/db/keys';
import { ForbiddenError, UnauthorizedError } from '../../shared/errors';
import { uuidv7 } from '../../shared/ids';
import { batchGetFrom, organizationItem } from './helpers/auth-items';

const ddb = mockClient(DynamoDBDocumentClient);
afterAll(() => ddb.restore());
beforeEach(() => {
  ddb.reset();
  authCache.clear();
});
afterEach(() => clock.reset());

const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

function session(orgId: string, options: { expiresInMs?: number; role?: 'admin' | 'operator' } = {}) {
  const minted = mintOrgToken('operatorSession', orgId);
  const operatorId = uuidv7();
  return {
    token: minted.token,
    operatorId,
    item: {
      ...keys.operatorSession(orgId, minted.credentialId),
      kind: 'operatorSession',
      id: minted.credentialId,
      orgId,
      hash: minted.hash,
      operatorId,
      role: options.role ?? 'operator',
      expiresAt: Math.floor((clock.nowMs() + (options.expiresInMs ?? 3_600_000)) / 1000),
    },
  };
}

describe('authenticate', () => {
  it('resolves an operator session to its operator and role, and refuses it once expired', async () => {
    const orgId = uuidv7();
    const live = session(orgId, { role: 'admin' });
    ddb.on(BatchGetCommand).callsFake(batchGetFrom([live.item, organizationItem(orgId)]));
    const { caller } = await authenticate(bearer(live.token), ['operator']);
    expect(caller).toMatchObject({ kind: 'operator', orgId, operatorId: live.operatorId, role: 'admin' });

    const expiring = session(orgId, { expiresInMs: 1_000 });
    ddb.on(BatchGetCommand).callsFake(batchGetFrom([expiring.item, organizationItem(orgId)]));
    clock.advance(2_000);
    await expect(authenticate(bearer(expiring.token), ['operator'])).rejects.toBeInstanceOf(
      UnauthorizedError,
    );
  });

  it('refuses a cached session once it expires, even within the cache lifetime', async () => {
    const orgId = uuidv7();
    const expiring = session(orgId, { expiresInMs: 2_000 });
    ddb.on(BatchGetCommand).callsFake(batchGetFrom([expiring.item, organizationItem(orgId)]));
    await authenticate(bearer(expiring.token), ['operator']);
    clock.advance(3_000);
    await expect(authenticate(bearer(expiring.token), ['operator'])).rejects.toBeInstanceOf(
      UnauthorizedError,
    );
  });

  it('resolves a visitor token to its visitor', async () => {
    const orgId = uuidv7();
    const minted = mintOrgToken('visitorToken', orgId);
    const visitorId = uuidv7();
    const item = {
      ...keys.visitorToken(orgId, minted.credentialId),
      kind: 'visitorToken',
      id: minted.credentialId,
      orgId,
      hash: minted.hash,
      visitorId,
      expiresAt: Math.floor(clock.nowMs() / 1000) + 3_600,
    };
    ddb.on(BatchGetCommand).callsFake(batchGetFrom([item, organizationItem(orgId)]));
    ddb.on(GetCommand).resolves({ Item: { mergedInto: null, erasedAt: null } });
    const { caller, organization } = await authenticate(bearer(minted.token), ['visitor']);
    expect(caller).toMatchObject({ kind: 'visitor', orgId, visitorId });
    expect(organization?.id).toBe(orgId);
  });

  it.each([
    ['merged', { mergedInto: uuidv7(), erasedAt: null }],
    ['erased', { mergedInto: null, erasedAt: '2026-11-21T12:00:00.000Z' }],
    ['gone', undefined],
  ])('refuses the token of a visitor %s (401)', async (_state, visitor) => {
    const orgId = uuidv7();
    const minted = mintOrgToken('visitorToken', orgId);
    const item = {
      ...keys.visitorToken(orgId, minted.credentialId),
      kind: 'visitorToken',
      id: minted.credentialId,
      orgId,
      hash: minted.hash,
      visitorId: uuidv7(),
      expiresAt: Math.floor(clock.nowMs() / 1000) + 3_600,
    };
    ddb.on(BatchGetCommand).callsFake(batchGetFrom([item, organizationItem(orgId)]));
    ddb.on(GetCommand).resolves({ Item: visitor });
    await expect(authenticate(bearer(minted.token), ['visitor'])).rejects.toBeInstanceOf(UnauthorizedError);
  });

  it('refuses a token whose id exists but whose secret differs', async () => {
    const orgId = uuidv7();
    const real = session(orgId);
    const forged = mintOrgToken('operatorSession', orgId);
    // Same organization and credential id as the real session, another secret.
    const forgedToken = `svc_os_${Buffer.concat([
      Buffer.from(real.token.slice('svc_os_'.length), 'base64url').subarray(0, 32),
      Buffer.from(forged.token.slice('svc_os_'.length), 'base64url').subarray(32),
    ]).toString('base64url')}`;
    ddb.on(BatchGetCommand).callsFake(batchGetFrom([real.item, organizationItem(orgId)]));
    await expect(authenticate(bearer(forgedToken), ['operator'])).rejects.toBeInstanceOf(UnauthorizedError);
  });

  it('answers 403 when the credential is valid but its organization is gone', async () => {
    const orgId = uuidv7();
    const live = session(orgId);
    ddb.on(BatchGetCommand).callsFake(batchGetFrom([live.item]));
    await expect(authenticate(bearer(live.token), ['operator'])).rejects.toBeInstanceOf(ForbiddenError);
  });

  it('accepts widget keys only from X-Widget-Key and only when they match the organization', async () => {
    const orgId = uuidv7();
    const organization = organizationItem(orgId);
    const widgetKey = String(organization.widgetKey);
    ddb.on(GetCommand, { Key: keys.organization(orgId) }).resolves({ Item: organization });
    const { caller } = await authenticate({ 'x-widget-key': widgetKey }, ['widget']);
    expect(caller).toMatchObject({ kind: 'widget', orgId });
    await expect(authenticate(bearer(widgetKey), ['widget'])).rejects.toBeInstanceOf(UnauthorizedError);
    const stale = mintOrgToken('widgetKey', orgId).token;
    await expect(authenticate({ 'x-widget-key': stale }, ['widget'])).rejects.toBeInstanceOf(
      UnauthorizedError,
    );
  });

  it('forgets a cached credential when it is revoked on this instance', async () => {
    const orgId = uuidv7();
    const live = session(orgId);
    ddb.on(BatchGetCommand).callsFake(batchGetFrom([live.item, organizationItem(orgId)]));
    await authenticate(bearer(live.token), ['operator']);
    await authenticate(bearer(live.token), ['operator']);
    expect(ddb.commandCalls(BatchGetCommand)).toHaveLength(1);
    authCache.forgetCredential(live.item.id);
    await authenticate(bearer(live.token), ['operator']);
    expect(ddb.commandCalls(BatchGetCommand)).toHaveLength(2);
  });

  it('never looks up a platform token, and refuses a wrong one', async () => {
    await expect(authenticate(bearer(mintPlatformToken()), ['platform'])).rejects.toBeInstanceOf(
      UnauthorizedError,
    );
    expect(ddb.calls()).toHaveLength(0);
  });
});
