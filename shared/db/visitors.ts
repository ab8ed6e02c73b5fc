import { GetCommand, TransactWriteCommand } from '@aws-sdk/lib-dynamodb';
import { clock } from '../clock';
import { uuidv7 } from '../ids';
import type { Visitor } from '../schemas/visitor';
import { db, tableName } from './client';
import { credentials } from './credentials';
import { recordOf } from './item';
import { keys } from './keys';

export type { Visitor };

export interface NewVisitor {
  identifier?: string | undefined;
  fingerprint?: string | undefined;
  metadata?: Record<string, unknown> | undefined;
}

export const visitors = {
  /** A new visitor and its first token, in one transaction. */
  async createWithToken(orgId: string, input: NewVisitor, tokenTtlHours: number) {
    const now = clock.nowIso();
    const id = uuidv7();
    const visitor: Visitor = {
      id,
      identifier: input.identifier ?? id,
      fingerprint: input.fingerprint ?? null,
      geoCountry: null,
      geoCity: null,
      totalSessions: 1,
      firstSeenAt: now,
      lastSeenAt: now,
      metadata: input.metadata ?? {},
    };
    const token = credentials.visitorTokenItem(orgId, id, tokenTtlHours);
    await db.send(
      new TransactWriteCommand({
        TransactItems: [
          {
            Put: {
              TableName: tableName,
              Item: { ...keys.visitor(orgId, id), entity: 'visitor', ...visitor },
            },
          },
          { Put: { TableName: tableName, Item: token.item } },
        ],
      }),
    );
    return { visitor, token: token.token, expiresAt: token.expiresAt };
  },

  async get(orgId: string, visitorId: string): Promise<Visitor | undefined> {
    const { Item } = await db.send(
      new GetCommand({ TableName: tableName, Key: keys.visitor(orgId, visitorId) }),
    );
    return Item ? recordOf<Visitor>(Item) : undefined;
  },
};
