import { keys } from '../db/keys';
import { imageOf } from '../db/stream-image';
import { searchConfigOf } from './schema';

/**
 * What the search index keeps of a table item: the projection of one stream record (or of one item
 * read by the rebuild). Each row carries a `version` that orders the states of its source item, so
 * a record handled late or twice never overwrites a newer state.
 */
export interface OrgRow {
  table: 'org';
  orgId: string;
  config: string;
  version: string;
}

export interface ConversationRow {
  table: 'conversation';
  orgId: string;
  conversationId: string;
  version: string;
  deleted: boolean;
  status: string;
  priority: string;
  tags: string[];
  operatorId: string | null;
  teamId: string | null;
  visitorId: string;
  customFields: Record<string, unknown>;
  createdAt: string;
  updatedAt: string;
  lastMessageAt: string;
}

export type DocumentKind = 'title' | 'message' | 'note';

export interface DocumentRow {
  table: 'document';
  orgId: string;
  conversationId: string;
  docId: string;
  kind: DocumentKind;
  /** The sender's side for messages (`from:`): visitor, operator (operators and the bot), or null. */
  side: 'visitor' | 'operator' | null;
  createdAt: string;
  version: string;
  deleted: boolean;
  body: string;
}

export type IndexRow = OrgRow | ConversationRow | DocumentRow;

/** The row's identity: rows of one key in a batch are reduced to the newest. */
export function rowKey(row: IndexRow): string {
  if (row.table === 'org') return `org|${row.orgId}`;
  if (row.table === 'conversation') return `conversation|${row.orgId}|${row.conversationId}`;
  return `document|${row.orgId}|${row.docId}`;
}

/** The title's document id: a conversation has one title. */
export const titleDocId = (conversationId: string): string => `title:${conversationId}`;

const pad = (value: unknown): string => String(Number(value ?? 0)).padStart(12, '0');
/** PostgreSQL text cannot hold NUL. */
const withoutNul = (text: string): string => text.replaceAll('\u0000', '');
const str = (value: unknown): string | null => (typeof value === 'string' ? value : null);

/**
 * The order of a conversation's states: every state write moves `rev`; a message post leaves `rev`
 * alone and moves `lastMessageAt` (forward only) and `messageCount` (ADD).
 */
const conversationVersion = (item: Record<string, unknown>): string =>
  `${pad(item.rev ?? 1)}:${String(item.lastMessageAt ?? '')}:${pad(item.messageCount)}`;

function sideOf(senderType: unknown): DocumentRow['side'] {
  if (senderType === 'visitor') return 'visitor';
  if (senderType === 'operator' || senderType === 'bot') return 'operator';
  return null;
}

/**
 * The rows an item stands for. `removed`: the item was deleted from the table (a note's deletion,
 * the only text the service deletes outright) and only its old image is known.
 */
export function rowsOfItem(item: Record<string, unknown>, removed = false): IndexRow[] {
  const entity = item.entity;
  const pk = String(item.pk ?? '');
  if (entity === 'organization') {
    const orgId = keys.parseOrganization(pk);
    if (!orgId || removed) return [];
    return [
      {
        table: 'org',
        orgId,
        config: searchConfigOf(str(item.defaultLocale) ?? undefined),
        version: String(item.updatedAt ?? ''),
      },
    ];
  }
  const owner = keys.parseConversationPartition(pk);
  if (!owner) return [];
  const { orgId, conversationId } = owner;
  if (entity === 'conversation') {
    const version = conversationVersion(item);
    const deleted = removed || Boolean(item.deletedAt);
    return [
      {
        table: 'conversation',
        orgId,
        conversationId,
        version,
        deleted,
        status: String(item.status ?? 'open'),
        priority: String(item.priority ?? 'normal'),
        tags: Array.isArray(item.tags) ? item.tags.map(String) : [],
        operatorId: str(item.operatorId),
        teamId: str(item.teamId),
        visitorId: String(item.visitorId ?? ''),
        customFields:
          item.customFields && typeof item.customFields === 'object'
            ? (item.customFields as Record<string, unknown>)
            : {},
        createdAt: String(item.createdAt),
        updatedAt: String(item.updatedAt ?? item.createdAt),
        lastMessageAt: String(item.lastMessageAt ?? item.createdAt),
      },
      {
        table: 'document',
        orgId,
        conversationId,
        docId: titleDocId(conversationId),
        kind: 'title',
        side: null,
        createdAt: String(item.createdAt),
        version,
        deleted,
        body: deleted ? '' : withoutNul(String(item.title ?? '')),
      },
    ];
  }
  if (entity === 'message' || entity === 'note') {
    const id = str(item.id);
    if (!id) return [];
    const deleted = removed || Boolean(item.deletedAt);
    return [
      {
        table: 'document',
        orgId,
        conversationId,
        docId: id,
        kind: entity,
        side: entity === 'message' ? sideOf(item.senderType) : null,
        createdAt: String(item.createdAt),
        // A message changes by edits (editCount) and by its deletion; a note is created, then deleted.
        version: `${pad(entity === 'message' ? item.editCount : 0)}:${deleted ? 1 : 0}`,
        deleted,
        body: deleted ? '' : withoutNul(String(item.content ?? '')),
      },
    ];
  }
  return [];
}

/** The rows a stream record stands for (its new image, or the old one of a removal). */
export function rowsOfStreamRecord(record: {
  eventName?: string | undefined;
  dynamodb?:
    | {
        NewImage?: Record<string, unknown> | undefined;
        OldImage?: Record<string, unknown> | undefined;
      }
    | undefined;
}): IndexRow[] {
  const image = record.eventName === 'REMOVE' ? record.dynamodb?.OldImage : record.dynamodb?.NewImage;
  if (!image) return [];
  return rowsOfItem(imageOf(image) ?? {}, record.eventName === 'REMOVE');
}
