import { clock } from '../clock';
import type { Actor } from '../conversations/actor';
import { uuidv7 } from '../ids';
import type { AssignmentEvent } from '../schemas/conversation';
import { assignmentEventProjection } from '../schemas/projections';
import { tableName } from './client';
import { type AuditCategory, keys } from './keys';
import { project } from './project';
import { queryPrefix } from './query';
import type { Write } from './transaction';

/** An audit entry in the conversation's partition, written in the transaction of its change. */
export function auditWrite(
  orgId: string,
  conversationId: string,
  category: AuditCategory,
  entry: Record<string, unknown> & { actor: Actor },
): Write {
  const id = uuidv7();
  return {
    action: {
      Put: {
        TableName: tableName,
        Item: {
          ...keys.conversationAudit(orgId, conversationId, category, id),
          entity: 'audit',
          id,
          conversationId,
          at: clock.nowIso(),
          ...entry,
        },
      },
    },
  };
}

const kindOf = (from: string | null, to: string | null): AssignmentEvent['type'] =>
  from === null ? 'assigned' : to === null ? 'unassigned' : 'transferred';

/**
 * The assignment change an operator or team change amounts to, or undefined when both stay. The
 * operator decides the type when it changes; otherwise the team does (to a team from none:
 * `assigned`, to none: `unassigned`, to another: `transferred`).
 */
export function assignmentEntry(
  from: string | null,
  to: string | null,
  teamId: string | null,
  actor: Actor,
  fromTeamId: string | null = teamId,
): (Omit<AssignmentEvent, 'id' | 'at'> & { actor: Actor }) | undefined {
  if (from === to && fromTeamId === teamId) return undefined;
  const type = from !== to ? kindOf(from, to) : kindOf(fromTeamId, teamId);
  return { type, fromOperatorId: from, toOperatorId: to, fromTeamId, teamId, actor };
}

const toAssignmentEvent = project<AssignmentEvent>(assignmentEventProjection);

/** The assignment and transfer entries of a conversation, oldest first: one Query. */
export async function assignmentHistory(orgId: string, conversationId: string): Promise<AssignmentEvent[]> {
  const items = await queryPrefix(
    keys.conversationPartition(orgId, conversationId),
    keys.conversationAuditPrefix('ASSIGNMENT'),
  );
  return items.map((item) =>
    toAssignmentEvent({
      ...item,
      // Entries written before teams existed have no `fromTeamId`: their team did not change.
      fromTeamId: ('fromTeamId' in item ? item.fromTeamId : item.teamId) ?? null,
      teamId: item.teamId ?? null,
    }),
  );
}
