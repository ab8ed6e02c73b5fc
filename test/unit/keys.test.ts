import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { type Key, keys } from '../../shared/db/keys';
import { LISTING_SHARDS, shardOf } from '../../shared/db/shards';
import { uuidv7 } from '../../shared/ids';

/** Every partition key the table can hold for one organization, through every builder. */
function partitionKeysOf(orgId: string): string[] {
  const id = uuidv7();
  const itemKeys: Key[] = [
    keys.organization(orgId),
    keys.apiKey(orgId, id),
    keys.operator(orgId, id),
    keys.operatorEmail(orgId, 'Ann@Example.com'),
    keys.operatorSession(orgId, id),
    keys.visitor(orgId, id),
    keys.visitorToken(orgId, id),
    keys.conversation(orgId, id),
    keys.message(orgId, id, uuidv7()),
    keys.event(orgId, id),
    keys.idempotency(orgId, 'key-1'),
    keys.rateWindow(orgId, id, 1_800_000_000_000),
    keys.customField(orgId, id),
    keys.customFieldName(orgId, 'orderNumber'),
    keys.customFieldTotals(orgId),
    keys.orgAudit(orgId, id),
    keys.discordChannel(orgId, '1187654321098765432'),
    keys.discordChannelTotals(orgId),
    keys.statsShard(orgId, '2026-11-21', 7),
    keys.statsOperatorDay(orgId, '2026-11-21', id),
    keys.survey(orgId, id, uuidv7()),
    keys.surveyLocator(orgId, id),
  ];
  const indexes = keys.conversationIndexes({
    orgId,
    id,
    status: 'open',
    operatorId: uuidv7(),
    visitorId: uuidv7(),
    lastMessageAt: '2026-11-21T10:00:00.000Z',
  });
  const listings = [
    keys.conversationListPartition.status(orgId, 'open', 0),
    keys.conversationListPartition.operator(orgId, id, 0),
    keys.conversationListPartition.visitor(orgId, id),
  ];
  return [
    ...itemKeys.map((key) => key.pk),
    indexes.gsi2pk,
    indexes.gsi3pk ?? 'missing gsi3pk',
    indexes.gsi4pk,
    ...listings.map((listing) => listing.pk),
  ];
}

const conversation = (overrides: Partial<Parameters<typeof keys.conversationIndexes>[0]> = {}) => ({
  orgId: uuidv7(),
  id: uuidv7(),
  status: 'open',
  operatorId: null,
  visitorId: uuidv7(),
  lastMessageAt: '2026-11-21T10:00:00.000Z',
  ...overrides,
});

describe('keys', () => {
  it('starts every organization partition key with ORG#<orgId>', () => {
    // Prepare
    const orgId = uuidv7();

    // Act
    const partitionKeys = partitionKeysOf(orgId);

    // Assess
    expect(partitionKeys).toHaveLength(28);
    for (const pk of partitionKeys) {
      expect(pk === `ORG#${orgId}` || pk.startsWith(`ORG#${orgId}#`), pk).toBe(true);
    }
  });

  it('puts records that belong to no organization under PLATFORM', () => {
    // Act
    const rate = keys.rateWindow(undefined, 'platform-admin', 1_800_000_000_000);
    const listing = keys.organizationListing('2026-11-21T10:00:00.000Z', uuidv7());

    // Assess
    expect(rate.pk).toBe('PLATFORM#RATE#platform-admin');
    expect(keys.aiProvider(uuidv7()).pk).toBe('PLATFORM#AI_PROVIDERS');
    expect(keys.operatorLookup(uuidv7()).gsi1pk.startsWith('PLATFORM#OPERATOR#')).toBe(true);
    expect(listing.gsi1pk.startsWith('PLATFORM')).toBe(true);
  });

  it('never gives two organizations the same partition key', () => {
    fc.assert(
      fc.property(fc.uuid(), fc.uuid(), (a, b) => {
        fc.pre(a !== b);
        const ofA = new Set(partitionKeysOf(a));
        for (const pk of partitionKeysOf(b)) expect(ofA.has(pk)).toBe(false);
      }),
      { numRuns: 200 },
    );
  });

  it('keeps a rate window per organization even for the same credential id and window', () => {
    // Act
    const first = keys.rateWindow(uuidv7(), 'cred', 0);
    const second = keys.rateWindow(uuidv7(), 'cred', 0);

    // Assess
    expect(first.pk).not.toBe(second.pk);
  });

  it('lower-cases the operator e-mail guard so one address cannot be registered twice', () => {
    // Prepare
    const orgId = uuidv7();

    // Act / Assess
    expect(keys.operatorEmail(orgId, 'Ann@Example.COM')).toEqual(
      keys.operatorEmail(orgId, 'ann@example.com'),
    );
  });

  it('omits the operator index (gsi3) for an unassigned conversation', () => {
    // Act
    const indexes = keys.conversationIndexes(conversation({ operatorId: null }));

    // Assess
    expect(indexes).not.toHaveProperty('gsi3pk');
    expect(indexes).not.toHaveProperty('gsi3sk');
    expect(indexes).not.toHaveProperty('gsi1pk');
    expect(indexes).toHaveProperty('gsi2pk');
    expect(indexes).toHaveProperty('gsi4pk');
  });

  it('writes each conversation index under the partition that the matching listing reads', () => {
    // Prepare
    const c = conversation({ operatorId: uuidv7(), status: 'pending' });

    // Act
    const indexes = keys.conversationIndexes(c);

    // Assess
    const shard = shardOf(c.id, LISTING_SHARDS);
    expect(indexes.gsi2pk).toBe(keys.conversationListPartition.status(c.orgId, 'pending', shard).pk);
    expect(indexes.gsi3pk).toBe(
      keys.conversationListPartition.operator(c.orgId, c.operatorId ?? '', shard).pk,
    );
    expect(indexes.gsi4pk).toBe(keys.conversationListPartition.visitor(c.orgId, c.visitorId).pk);
    expect(keys.conversationListPartition.operator(c.orgId, 'x', 0).index).toBe('gsi3');
    expect(keys.conversationUpdated(c.orgId, c.lastMessageAt, c.id).gsi1pk).toBe(
      keys.conversationListPartition.updated(c.orgId, shard).pk,
    );
  });

  it('keeps a conversation in one shard of each moving listing, and the shards cover the listing', () => {
    // Prepare
    const orgId = uuidv7();
    const conversations = Array.from({ length: 64 }, () => conversation({ orgId, operatorId: 'bot' }));

    // Act
    const statusShards = keys.conversationListPartition.statusShards(orgId, 'open').map((p) => p.pk);
    const operatorShards = keys.conversationListPartition.operatorShards(orgId, 'bot').map((p) => p.pk);
    const updatedShards = keys.conversationListPartition.updatedShards(orgId).map((p) => p.pk);

    // Assess: a message moves the entries within their shard; every entry is in a shard a reader reads.
    expect(new Set([...statusShards, ...operatorShards, ...updatedShards]).size).toBe(3 * LISTING_SHARDS);
    for (const c of conversations) {
      const [was, now] = [
        keys.conversationIndexes(c),
        keys.conversationIndexes({ ...c, lastMessageAt: '2026-11-21T10:05:00.000Z' }),
      ];
      expect(now.gsi2pk).toBe(was.gsi2pk);
      expect(now.gsi3pk).toBe(was.gsi3pk);
      expect(statusShards).toContain(now.gsi2pk);
      expect(operatorShards).toContain(now.gsi3pk);
      expect(keys.conversationUpdated(orgId, '2026-11-21T10:05:00.000Z', c.id).gsi1pk).toBe(
        keys.conversationUpdated(orgId, c.lastMessageAt, c.id).gsi1pk,
      );
      expect(updatedShards).toContain(keys.conversationUpdated(orgId, c.lastMessageAt, c.id).gsi1pk);
    }
    expect(new Set(conversations.map((c) => keys.conversationIndexes(c).gsi2pk)).size).toBeGreaterThan(1);
  });

  it('sorts conversation listings by lastMessageAt', () => {
    const instant = fc
      .date({
        min: new Date('2000-01-01T00:00:00.000Z'),
        max: new Date('2099-12-31T23:59:59.999Z'),
        noInvalidDate: true,
      })
      .map((date) => date.toISOString());
    fc.assert(
      fc.property(fc.array(instant, { minLength: 2, maxLength: 30 }), (instants) => {
        // Prepare
        const orgId = uuidv7();
        const conversations = instants.map((lastMessageAt) => conversation({ orgId, lastMessageAt }));

        // Act: DynamoDB orders a sort key by its UTF-8 bytes, i.e. plain string order for ASCII.
        const bySortKey = conversations
          .map((c) => ({ c, sk: keys.conversationIndexes(c).gsi2sk }))
          .sort((a, b) => (a.sk < b.sk ? -1 : a.sk > b.sk ? 1 : 0))
          .map(({ c }) => Date.parse(c.lastMessageAt));

        // Assess
        expect(bySortKey).toEqual([...bySortKey].sort((a, b) => a - b));
      }),
    );
  });

  it('moves the status and operator entries with each message, never the visitor entry', () => {
    // Prepare
    const before = conversation({ operatorId: uuidv7() });
    const after = { ...before, lastMessageAt: '2026-11-21T10:05:00.000Z' };

    // Act
    const [was, now] = [keys.conversationIndexes(before), keys.conversationIndexes(after)];

    // Assess: recency keys on the status and operator listings; the visitor's by creation (its id).
    expect(now.gsi2sk).toBe(now.gsi3sk);
    expect(now.gsi2sk > (was.gsi2sk ?? '')).toBe(true);
    expect(now.gsi4sk).toBe(was.gsi4sk);
    expect(now.gsi4sk).toBe(before.id);
  });

  it('sorts messages of a conversation by their UUIDv7 id, i.e. by creation time', () => {
    // Prepare
    const orgId = uuidv7();
    const conversationId = uuidv7();
    const base = Date.parse('2026-11-21T10:00:00.000Z');
    const ids = [base + 5, base + 1, base + 3].map((ms) => uuidv7(ms));

    // Act
    const sortKeys = ids.map((id) => keys.message(orgId, conversationId, id).sk).sort();

    // Assess
    expect(sortKeys).toEqual([ids[1], ids[2], ids[0]].map((id) => `MSG#${id}`));
  });
});
