/**
 * Every key string of the table is spelled here and only here. Each partition key begins with the
 * organization (`ORG#<orgId>`), or with `PLATFORM` for the few records that belong to no
 * organization, so a query can never reach across tenants. See docs/data-model.md.
 */
import { allShards, EVENT_SHARDS, LISTING_SHARDS, REALTIME_SHARDS, shardOf } from './shards';

export type AuditCategory = 'ASSIGNMENT' | 'SNOOZE' | 'NOTE' | 'DELETION';

/** A type alias, not an interface, so a key is assignable wherever the SDK wants an attribute map. */
export type Key = {
  pk: string;
  sk: string;
};

const org = (orgId: string): string => `ORG#${orgId}`;
const eventsPartition = (orgId: string, shard: number): string => `${org(orgId)}#EVENTS#${shard}`;

/**
 * One shard (`…#<n>`) of each conversation listing that moves with every message; spelled once here
 * for the entries (`conversationIndexes`, `conversationUpdated`) and the readers alike.
 */
const conversationShard = {
  status: (orgId: string, status: string, shard: number) =>
    ({ index: 'gsi2', pk: `${org(orgId)}#CONVS#STATUS#${status}#${shard}` }) as const,
  operator: (orgId: string, operatorId: string, shard: number) =>
    ({ index: 'gsi3', pk: `${org(orgId)}#CONVS#OPERATOR#${operatorId}#${shard}` }) as const,
  updated: (orgId: string, shard: number) =>
    ({ index: 'gsi1', pk: `${org(orgId)}#CONVS#UPDATED#${shard}` }) as const,
};

export const keys = {
  organization: (orgId: string): Key => ({ pk: org(orgId), sk: 'ORGANIZATION' }),
  /** gsi1: platform-wide list of organizations, oldest first. */
  organizationListing: (createdAt: string, orgId: string) => ({
    gsi1pk: 'PLATFORM#ORGANIZATIONS',
    gsi1sk: `${createdAt}#${orgId}`,
  }),

  apiKey: (orgId: string, keyId: string): Key => ({ pk: org(orgId), sk: `APIKEY#${keyId}` }),
  apiKeyPrefix: 'APIKEY#',

  operator: (orgId: string, operatorId: string): Key => ({ pk: org(orgId), sk: `OPERATOR#${operatorId}` }),
  operatorPrefix: 'OPERATOR#',
  /** Guard item that makes an operator e-mail unique within its organization. */
  operatorEmail: (orgId: string, email: string): Key => ({
    pk: org(orgId),
    sk: `OPERATOR_EMAIL#${email.toLowerCase()}`,
  }),

  operatorSession: (orgId: string, sessionId: string): Key => ({
    pk: `${org(orgId)}#SESSION#${sessionId}`,
    sk: 'SESSION',
  }),

  visitor: (orgId: string, visitorId: string): Key => ({
    pk: `${org(orgId)}#VISITOR#${visitorId}`,
    sk: 'VISITOR',
  }),
  /** The visitor id of a visitor item's `pk` (`keys.visitor`), as an index entry carries it. */
  visitorIdOf: (orgId: string, pk: string): string => {
    const prefix = `${org(orgId)}#VISITOR#`;
    if (!pk.startsWith(prefix)) throw new Error(`not a visitor of organization ${orgId}: ${pk}`);
    return pk.slice(prefix.length);
  },
  /** Guard item: an external id names one visitor of the organization (`{ visitorId }`). */
  visitorExternalId: (orgId: string, externalId: string): Key => ({
    pk: `${org(orgId)}#VISITOR_EXTERNAL#${externalId}`,
    sk: 'VISITOR_EXTERNAL',
  }),
  /**
   * A visitor's listing entries: gsi1 newest `lastSeenAt` first (absent once merged), gsi2 by
   * `updatedAt` for incremental sync (always), gsi3 by e-mail and gsi4 by identifier (sparse: absent
   * when empty, merged or erased). E-mail is compared lower-cased.
   */
  visitorIndexes: (v: {
    orgId: string;
    id: string;
    lastSeenAt: string;
    updatedAt: string;
    identifier: string;
    email: string | null;
    mergedInto: string | null;
    erasedAt: string | null;
  }) => {
    const seen = `${v.lastSeenAt}#${v.id}`;
    const listed = v.mergedInto === null;
    const findable = listed && v.erasedAt === null;
    return {
      ...(listed ? { gsi1pk: `${org(v.orgId)}#VISITORS`, gsi1sk: seen } : {}),
      gsi2pk: `${org(v.orgId)}#VISITORS#UPDATED`,
      gsi2sk: `${v.updatedAt}#${v.id}`,
      ...(findable && v.email
        ? { gsi3pk: `${org(v.orgId)}#VISITORS#EMAIL#${v.email.toLowerCase()}`, gsi3sk: seen }
        : {}),
      ...(findable && v.identifier
        ? { gsi4pk: `${org(v.orgId)}#VISITORS#IDENTIFIER#${v.identifier}`, gsi4sk: seen }
        : {}),
    };
  },
  visitorListPartition: {
    all: (orgId: string) => ({ index: 'gsi1', pk: `${org(orgId)}#VISITORS` }) as const,
    updated: (orgId: string) => ({ index: 'gsi2', pk: `${org(orgId)}#VISITORS#UPDATED` }) as const,
    email: (orgId: string, email: string) =>
      ({ index: 'gsi3', pk: `${org(orgId)}#VISITORS#EMAIL#${email.toLowerCase()}` }) as const,
    identifier: (orgId: string, identifier: string) =>
      ({ index: 'gsi4', pk: `${org(orgId)}#VISITORS#IDENTIFIER#${identifier}` }) as const,
  },
  /**
   * A visitor's uploads (gsi1, keys only; sparse: uploads of operators and keys have none): what an
   * erasure deletes besides the attachments of the visitor's messages.
   */
  visitorUploads: (orgId: string, visitorId: string, uploadId: string) => ({
    gsi1pk: `${org(orgId)}#UPLOADS#VISITOR#${visitorId}`,
    gsi1sk: uploadId,
  }),
  visitorUploadsPartition: (orgId: string, visitorId: string) =>
    ({ index: 'gsi1', pk: `${org(orgId)}#UPLOADS#VISITOR#${visitorId}` }) as const,
  visitorToken: (orgId: string, tokenId: string): Key => ({
    pk: `${org(orgId)}#VTOKEN#${tokenId}`,
    sk: 'VTOKEN',
  }),

  /** A conversation's partition holds the conversation, its messages, notes, revisions and audit trail. */
  conversation: (orgId: string, conversationId: string): Key => ({
    pk: `${org(orgId)}#CONV#${conversationId}`,
    sk: 'CONVERSATION',
  }),
  message: (orgId: string, conversationId: string, messageId: string): Key => ({
    pk: `${org(orgId)}#CONV#${conversationId}`,
    sk: `MSG#${messageId}`,
  }),
  messagePrefix: 'MSG#',
  /** Edit history of a message: a ring of 20 slots, so the newest 20 prior versions are kept. */
  revision: (orgId: string, conversationId: string, messageId: string, slot: number): Key => ({
    pk: `${org(orgId)}#CONV#${conversationId}`,
    sk: `REV#${messageId}#${String(slot).padStart(2, '0')}`,
  }),
  revisionPrefix: (messageId: string) => `REV#${messageId}#`,
  /** Every revision of every message of the conversation (what the purge deletes). */
  revisionsPrefix: 'REV#',
  note: (orgId: string, conversationId: string, noteId: string): Key => ({
    pk: `${org(orgId)}#CONV#${conversationId}`,
    sk: `NOTE#${noteId}`,
  }),
  notePrefix: 'NOTE#',
  /** The organization and conversation a conversation-partition key names (the search index's projection). */
  parseConversationPartition: (pk: string): { orgId: string; conversationId: string } | undefined => {
    const match = /^ORG#([^#]+)#CONV#([^#]+)$/.exec(pk);
    return match?.[1] && match[2] ? { orgId: match[1], conversationId: match[2] } : undefined;
  },
  /** The organization an organization item's key names. */
  /** The organization and visitor a visitor item's `pk` names; undefined for any other key. */
  parseVisitorPartition: (pk: string): { orgId: string; visitorId: string } | undefined => {
    const match = /^ORG#([^#]+)#VISITOR#([^#]+)$/.exec(pk);
    return match?.[1] && match[2] ? { orgId: match[1], visitorId: match[2] } : undefined;
  },
  parseOrganization: (pk: string): string | undefined => /^ORG#([^#]+)$/.exec(pk)?.[1],
  /** A conversation's audit trail, by category, time-ordered (assignment history is one Query). */
  conversationAudit: (
    orgId: string,
    conversationId: string,
    category: AuditCategory,
    entryId: string,
  ): Key => ({
    pk: `${org(orgId)}#CONV#${conversationId}`,
    sk: `AUDIT#${category}#${entryId}`,
  }),
  conversationAuditPrefix: (category: AuditCategory) => `AUDIT#${category}#`,
  conversationPartition: (orgId: string, conversationId: string) => `${org(orgId)}#CONV#${conversationId}`,

  /**
   * A conversation's listing entries: by status and by operator sorted by `<lastMessageAt>#<id>`
   * (newest first when read backwards), by visitor in creation order (see conversation-listing.ts).
   * The status and operator entries move (a delete and a put) with every message, and a whole
   * organization shares them (a bot operator may hold most of its conversations): in one partition
   * (~1,000 write units a second) they capped a tenant at ~250 posts a second. So they go to one of
   * LISTING_SHARDS partitions chosen by conversation id: an entry always moves within its own shard,
   * and the readers merge the shards by sort key.
   */
  conversationIndexes: (c: {
    orgId: string;
    id: string;
    status: string;
    operatorId: string | null;
    visitorId: string;
    lastMessageAt: string;
  }) => {
    const recency = `${c.lastMessageAt}#${c.id}`;
    const shard = shardOf(c.id, LISTING_SHARDS);
    return {
      // The whole organization is the four status partitions, read together (no fifth entry to move).
      gsi2pk: conversationShard.status(c.orgId, c.status, shard).pk,
      gsi2sk: recency,
      // Sparse: unassigned conversations are simply absent from the operator index.
      ...(c.operatorId
        ? { gsi3pk: conversationShard.operator(c.orgId, c.operatorId, shard).pk, gsi3sk: recency }
        : {}),
      // By creation: this entry does not move with every message (the listing sorts a visitor's few),
      // so it needs no shards.
      gsi4pk: `${org(c.orgId)}#CONVS#VISITOR#${c.visitorId}`,
      gsi4sk: c.id,
    };
  },
  /**
   * The incremental-sync entry of a conversation (gsi1, keys only): by `updatedAt`, kept when the
   * conversation is soft-deleted, so a sync sees the deletion. It moves with every message too, so
   * it is sharded like the listing entries (the same shard, by conversation id).
   */
  conversationUpdated: (orgId: string, updatedAt: string, conversationId: string) => ({
    gsi1pk: conversationShard.updated(orgId, shardOf(conversationId, LISTING_SHARDS)).pk,
    gsi1sk: `${updatedAt}#${conversationId}`,
  }),
  /**
   * The partitions the conversation listings read: one shard (a conversation's is
   * `shardOf(id, LISTING_SHARDS)`), or all of a listing's shards, which a reader merges by sort key.
   * A visitor's listing is one partition.
   */
  conversationListPartition: {
    status: conversationShard.status,
    statusShards: (orgId: string, status: string) =>
      allShards(LISTING_SHARDS).map((shard) => conversationShard.status(orgId, status, shard)),
    operator: conversationShard.operator,
    operatorShards: (orgId: string, operatorId: string) =>
      allShards(LISTING_SHARDS).map((shard) => conversationShard.operator(orgId, operatorId, shard)),
    updated: conversationShard.updated,
    updatedShards: (orgId: string) =>
      allShards(LISTING_SHARDS).map((shard) => conversationShard.updated(orgId, shard)),
    visitor: (orgId: string, visitorId: string) =>
      ({ index: 'gsi4', pk: `${org(orgId)}#CONVS#VISITOR#${visitorId}` }) as const,
  },

  /**
   * The organization's domain events (outbox and events feed), time-ordered by UUIDv7 within each of
   * `EVENT_SHARDS` partitions, the one its id hashes to: an event is written in the transaction of
   * its change at 2 write units per KB, so one partition (~1,000 WCU/s) would cap a tenant at ~500
   * events/s. Readers query every shard and merge by sort key (docs/data-model.md).
   */
  event: (orgId: string, eventId: string): Key => ({
    pk: eventsPartition(orgId, shardOf(eventId, EVENT_SHARDS)),
    sk: `EVENT#${eventId}`,
  }),
  eventsPartition: (orgId: string, shard: number) => eventsPartition(orgId, shard),
  /** Every partition of the organization's events, shard 0 first. */
  eventsPartitions: (orgId: string): string[] =>
    allShards(EVENT_SHARDS).map((shard) => eventsPartition(orgId, shard)),
  eventPrefix: 'EVENT#',
  /**
   * The sort key between the events minted before `ms` and those minted at or after it: UUIDv7 ids
   * begin with their millisecond, so this prefix sorts above every earlier id and below every later one.
   */
  eventKeyAt: (ms: number): string => {
    const hex = ms.toString(16).padStart(12, '0');
    return `EVENT#${hex.slice(0, 8)}-${hex.slice(8, 12)}`;
  },
  /**
   * An uploaded file (attachment): its own partition, read by id. Pending ones expire by TTL; once
   * attached, it names its conversation and message (what the purge and visitor reads follow).
   */
  upload: (orgId: string, uploadId: string): Key => ({
    pk: `${org(orgId)}#UPLOAD#${uploadId}`,
    sk: 'UPLOAD',
  }),
  /**
   * Realtime notices (message_edited, note invalidation, snooze) for connected clients; short-lived.
   * Read by key only (the stream hands each to its push), so they spread over REALTIME_SHARDS
   * partitions by id: one took every edit, snooze and note deletion of the tenant, 2 units each.
   */
  realtime: (orgId: string, noticeId: string): Key => ({
    pk: `${org(orgId)}#REALTIME#${shardOf(noticeId, REALTIME_SHARDS)}`,
    sk: `RT#${noticeId}`,
  }),
  /** Every partition of the organization's realtime notices. */
  realtimePartitions: (orgId: string): string[] =>
    allShards(REALTIME_SHARDS).map((shard) => `${org(orgId)}#REALTIME#${shard}`),
  realtimePrefix: 'RT#',
  /**
   * A team's small companion item beside the organization: whether the team exists (what a
   * conversation's `teamId` is checked against) and how many open conversations it holds (what
   * refuses its deletion). A deleted team leaves it as a tombstone (`deletedAt`).
   */
  teamExists: (orgId: string, teamId: string): Key => ({ pk: org(orgId), sk: `TEAM#${teamId}` }),

  /** Open realtime connections, by audience: every operator of the org, or one visitor (TTL 2 h). */
  realtimeConnections: (orgId: string, audience: { visitorId?: string | undefined }) =>
    audience.visitorId ? `${org(orgId)}#RT#VISITOR#${audience.visitorId}` : `${org(orgId)}#RT#OPERATORS`,
  realtimeConnection: (partition: string, connectionId: string): Key => ({
    pk: partition,
    sk: `CONN#${connectionId}`,
  }),
  realtimeConnectionPrefix: 'CONN#',

  /**
   * An organization's custom-field definitions: one small partition, so a list is one Query and a
   * read by id one GetItem. `begins_with(sk, 'FIELD#')` skips the guards and totals (`#` ≠ `_`).
   */
  customField: (orgId: string, fieldId: string): Key => ({
    pk: `${org(orgId)}#FIELDS`,
    sk: `FIELD#${fieldId}`,
  }),
  customFieldsPartition: (orgId: string) => `${org(orgId)}#FIELDS`,
  customFieldPrefix: 'FIELD#',
  /** Guard item that makes a field name unique in its organization, whatever its case or target. */
  customFieldName: (orgId: string, name: string): Key => ({
    pk: `${org(orgId)}#FIELDS`,
    sk: `FIELD_NAME#${name.toLowerCase()}`,
  }),
  /** How many definitions the organization has and their stored size: what bounds a list. */
  customFieldTotals: (orgId: string): Key => ({ pk: `${org(orgId)}#FIELDS`, sk: 'FIELD_TOTALS' }),

  /**
   * An organization's knowledge base: one partition holds its collections, articles, their guards
   * and the totals item. `begins_with(sk, 'COLLECTION#')` skips the key guards and
   * `begins_with(sk, 'ARTICLE#')` the slug guards (`#` ≠ `_`).
   */
  kbPartition: (orgId: string) => `${org(orgId)}#KB`,
  kbCollection: (orgId: string, collectionId: string): Key => ({
    pk: `${org(orgId)}#KB`,
    sk: `COLLECTION#${collectionId}`,
  }),
  kbCollectionPrefix: 'COLLECTION#',
  /** Guard item that makes a collection key unique in its organization, whatever its case. */
  kbCollectionKey: (orgId: string, key: string): Key => ({
    pk: `${org(orgId)}#KB`,
    sk: `COLLECTION_KEY#${key.toLowerCase()}`,
  }),
  kbArticle: (orgId: string, articleId: string): Key => ({
    pk: `${org(orgId)}#KB`,
    sk: `ARTICLE#${articleId}`,
  }),
  kbArticlePrefix: 'ARTICLE#',
  /** Guard item that makes an article slug unique in its organization, whatever its case. */
  kbArticleSlug: (orgId: string, slug: string): Key => ({
    pk: `${org(orgId)}#KB`,
    sk: `ARTICLE_SLUG#${slug.toLowerCase()}`,
  }),
  /** Article counts by status and stored sizes of the whole knowledge base: what bounds it. */
  kbTotals: (orgId: string): Key => ({ pk: `${org(orgId)}#KB`, sk: 'KB_TOTALS' }),
  /**
   * An article's listing entries, newest first by UUIDv7 id: by collection (gsi1), by status
   * (gsi2) and by both (gsi3), so every filter of the list is one exact index partition.
   */
  kbArticleIndexes: (a: { orgId: string; id: string; collectionId: string; status: string }) => ({
    gsi1pk: `${org(a.orgId)}#KB#COLLECTION#${a.collectionId}`,
    gsi1sk: a.id,
    gsi2pk: `${org(a.orgId)}#KB#STATUS#${a.status}`,
    gsi2sk: a.id,
    gsi3pk: `${org(a.orgId)}#KB#COLLECTION#${a.collectionId}#STATUS#${a.status}`,
    gsi3sk: a.id,
  }),
  kbArticleListPartition: {
    collection: (orgId: string, collectionId: string) =>
      ({ index: 'gsi1', pk: `${org(orgId)}#KB#COLLECTION#${collectionId}` }) as const,
    status: (orgId: string, status: string) =>
      ({ index: 'gsi2', pk: `${org(orgId)}#KB#STATUS#${status}` }) as const,
    collectionStatus: (orgId: string, collectionId: string, status: string) =>
      ({ index: 'gsi3', pk: `${org(orgId)}#KB#COLLECTION#${collectionId}#STATUS#${status}` }) as const,
  },

  /** An organization's webhooks: one small partition, so the list and the fan-out are one Query. */
  webhook: (orgId: string, webhookId: string): Key => ({
    pk: `${org(orgId)}#WEBHOOKS`,
    sk: `WEBHOOK#${webhookId}`,
  }),
  webhooksPartition: (orgId: string) => `${org(orgId)}#WEBHOOKS`,
  webhookPrefix: 'WEBHOOK#',
  /** Deliveries of one webhook, newest first by UUIDv7 id; they expire with the events (35 days). */
  delivery: (orgId: string, webhookId: string, deliveryId: string): Key => ({
    pk: `${org(orgId)}#WEBHOOK#${webhookId}#DELIVERIES`,
    sk: `DELIVERY#${deliveryId}`,
  }),
  deliveriesPartition: (orgId: string, webhookId: string) => `${org(orgId)}#WEBHOOK#${webhookId}#DELIVERIES`,
  deliveryPrefix: 'DELIVERY#',

  /**
   * An organization's operator teams (name, description, priority, members): one small partition,
   * so the list is one Query and a read by id one GetItem.
   */
  team: (orgId: string, teamId: string): Key => ({ pk: `${org(orgId)}#TEAMS`, sk: `TEAM#${teamId}` }),
  teamsPartition: (orgId: string) => `${org(orgId)}#TEAMS`,
  teamPrefix: 'TEAM#',

  /**
   * An organization's daily aggregates (UTC days). A day's organization counters are split over
   * `STATS_SHARDS` items chosen by conversation (writers of different conversations rarely meet on
   * one item; reads sum the shards); per-operator CSAT counters have one item per operator and day.
   */
  statsPartition: (orgId: string) => `${org(orgId)}#STATS`,
  statsShard: (orgId: string, day: string, shard: number): Key => ({
    pk: `${org(orgId)}#STATS`,
    sk: `DAY#${day}#S#${shard}`,
  }),
  statsDayPrefix: 'DAY#',
  statsOperatorDay: (orgId: string, day: string, operatorId: string): Key => ({
    pk: `${org(orgId)}#STATS`,
    sk: `OPERATOR_DAY#${day}#${operatorId}`,
  }),
  statsOperatorDayPrefix: 'OPERATOR_DAY#',
  /**
   * The marker of a stream record counted into the daily aggregates (stats-stream.ts): its
   * redelivery finds it and adds nothing. Spread over 16 partitions by the record's id, since every
   * counted record of the organization writes one; expires after the stream's retention.
   */
  countedRecord: (orgId: string, streamEventId: string): Key => ({
    pk: `${org(orgId)}#COUNTED#${shardOf(streamEventId, 16)}`,
    sk: `RECORD#${streamEventId}`,
  }),

  /**
   * An organization's usage (shared/db/usage.ts): a day's counters over `USAGE_SHARDS` items (the
   * stream's consumers and every function instance's flushes add to them; reads sum the shards),
   * and per day the bytes of uploads added and removed (`STORED#`), whose running sum is the bytes
   * stored at a day's end.
   */
  usagePartition: (orgId: string) => `${org(orgId)}#USAGE`,
  usageShard: (orgId: string, day: string, shard: number): Key => ({
    pk: `${org(orgId)}#USAGE`,
    sk: `DAY#${day}#S#${shard}`,
  }),
  usageDayPrefix: 'DAY#',
  usageStored: (orgId: string, day: string): Key => ({ pk: `${org(orgId)}#USAGE`, sk: `STORED#${day}` }),
  usageStoredPrefix: 'STORED#',

  /** A survey response lives with its conversation (listed by it); the locator finds it by id. */
  survey: (orgId: string, conversationId: string, surveyId: string): Key => ({
    pk: `${org(orgId)}#CONV#${conversationId}`,
    sk: `SURVEY#${surveyId}`,
  }),
  surveyPrefix: 'SURVEY#',
  surveyLocator: (orgId: string, surveyId: string): Key => ({
    pk: `${org(orgId)}#SURVEY#${surveyId}`,
    sk: 'SURVEY',
  }),
  /**
   * Sparse gsi1 entry of an active survey response: the organization's responses by the instant they
   * were given (the analytics export counts part of a day from it). Removed when the response is deleted.
   */
  surveyByTime: (orgId: string, createdAt: string, conversationId: string, surveyId: string) => ({
    gsi1pk: `${org(orgId)}#SURVEYS`,
    gsi1sk: `${createdAt}#${conversationId}#${surveyId}`,
  }),
  surveysByTimePartition: (orgId: string) => ({ index: 'gsi1', pk: `${org(orgId)}#SURVEYS` }) as const,
  /** What a `surveyByTime` sort key names; undefined for any other value. */
  surveyByTimeOf: (
    gsi1sk: string,
  ): { createdAt: string; conversationId: string; surveyId: string } | undefined => {
    const [createdAt, conversationId, surveyId, ...rest] = gsi1sk.split('#');
    if (!createdAt || !conversationId || !surveyId || rest.length) return undefined;
    return { createdAt, conversationId, surveyId };
  },

  idempotency: (orgId: string, idempotencyKey: string): Key => ({
    pk: `${org(orgId)}#IDEMPOTENCY#${idempotencyKey}`,
    sk: 'IDEMPOTENCY',
  }),

  /**
   * The audit log, time-ordered: an organization's (`GET /api/audit-events`), or with `null` the
   * platform's own (AI providers, which belong to no organization).
   */
  orgAudit: (orgId: string | null, entryId: string): Key => ({
    pk: `${orgId ? org(orgId) : 'PLATFORM'}#AUDIT`,
    sk: `AUDIT#${entryId}`,
  }),
  orgAuditPartition: (orgId: string | null) => `${orgId ? org(orgId) : 'PLATFORM'}#AUDIT`,
  orgAuditPrefix: 'AUDIT#',
  /** An asynchronous export (a PDF transcript): its own partition, read by id only. */
  exportJob: (orgId: string, jobId: string): Key => ({
    pk: `${org(orgId)}#EXPORT_JOB#${jobId}`,
    sk: 'EXPORT_JOB',
  }),
  /** The organization-wide limit on transcript e-mails uses a rate window under this fixed name. */
  transcriptEmailLimit: 'TRANSCRIPT_EMAIL',
  /** The organization's request ceiling (`rateLimitPerMinute`) uses a rate window under this name. */
  organizationRequestLimit: 'ORG_REQUESTS',

  /** Rate-limit window of one credential; platform credentials have no organization. */
  rateWindow: (orgId: string | undefined, credentialId: string, windowStartMs: number): Key => ({
    pk: `${orgId ? org(orgId) : 'PLATFORM'}#RATE#${credentialId}`,
    sk: `WINDOW#${windowStartMs}`,
  }),

  /**
   * gsi1 entry of an operator: finds the organization of an operator id alone (impersonation names
   * only the operator). One item per partition; KEYS_ONLY, so the entry's `pk` is `ORG#<orgId>`.
   */
  operatorLookup: (operatorId: string) => ({ gsi1pk: `PLATFORM#OPERATOR#${operatorId}`, gsi1sk: 'OPERATOR' }),
  operatorLookupPartition: (operatorId: string) =>
    ({ index: 'gsi1', pk: `PLATFORM#OPERATOR#${operatorId}` }) as const,
  /** The organization id an `ORG#<orgId>` partition key names; undefined for any other key. */
  organizationOfPartition: (pk: string): string | undefined =>
    /^ORG#[^#]+$/.test(pk) ? pk.slice('ORG#'.length) : undefined,

  /**
   * An organization's Discord channels, keyed by Discord's channel id: the same channel twice is a
   * failed `attribute_not_exists` (409), and the fan-out's one Query yields the ids to post to.
   * `begins_with(sk, 'CHANNEL#')` skips the totals (`#` ≠ `_`).
   */
  discordChannel: (orgId: string, discordChannelId: string): Key => ({
    pk: `${org(orgId)}#DISCORD`,
    sk: `CHANNEL#${discordChannelId}`,
  }),
  discordChannelsPartition: (orgId: string) => `${org(orgId)}#DISCORD`,
  discordChannelPrefix: 'CHANNEL#',
  /** How many channels the organization has: what bounds the fan-out per event. */
  discordChannelTotals: (orgId: string): Key => ({ pk: `${org(orgId)}#DISCORD`, sk: 'CHANNEL_TOTALS' }),

  /** Platform-wide AI providers: one small partition (a list is one Query). */
  aiProvider: (providerId: string): Key => ({ pk: 'PLATFORM#AI_PROVIDERS', sk: `PROVIDER#${providerId}` }),
  aiProvidersPartition: 'PLATFORM#AI_PROVIDERS',
  aiProviderPrefix: 'PROVIDER#',
} as const;
