import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { uuidv7 } from '../ids';
import { visitorProjection } from '../schemas/projections';
import type { Visitor } from '../schemas/visitor';
import { db, tableName } from './client';
import { credentials } from './credentials';
import { eventWrite } from './events';
import { keys } from './keys';
import { project } from './project';
import { transact } from './transaction';
import { newStoredVisitor, profileOf, visitorItem } from './visitor-record';

const toVisitor = project<Visitor>(visitorProjection);

export type { Visitor };

export interface NewVisitor {
  identifier?: string | undefined;
  fingerprint?: string | undefined;
  metadata?: Record<string, unknown> | undefined;
}

export const visitors = {
  /** A new visitor and its first token, in one transaction. */
  async createWithToken(orgId: string, input: NewVisitor, tokenTtlHours: number) {
    const id = uuidv7();
    // A contact from the start: listed, synced and announced (`visitor.created`) like an upserted one.
    const stored = newStoredVisitor({
      id,
      identifier: input.identifier ?? id,
      fingerprint: input.fingerprint ?? null,
      metadata: input.metadata ?? {},
    });
    const profile = profileOf(stored, 0);
    const visitor: Visitor = toVisitor(profile);
    const token = credentials.visitorTokenItem(orgId, id, tokenTtlHours);
    await transact([
      { Put: { TableName: tableName, Item: visitorItem(orgId, stored) } },
      { Put: { TableName: tableName, Item: token.item } },
      eventWrite(orgId, 'visitor.created', profile),
    ]);
    return { visitor, token: token.token, expiresAt: token.expiresAt };
  },

  /**
   * Strongly consistent: a conversation started for a visitor created a moment before (widget
   * bootstrap, then its first conversation) must find it, not answer 422.
   */
  async get(orgId: string, visitorId: string): Promise<Visitor | undefined> {
    const { Item } = await db.send(
      new GetCommand({ TableName: tableName, Key: keys.visitor(orgId, visitorId), ConsistentRead: true }),
    );
    return Item ? toVisitor(Item) : undefined;
  },
};
