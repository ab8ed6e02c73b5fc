import type { StoredConversation } from '../conversations/state';
import { ValidationError } from '../errors';
import { tableName } from './client';
import { keys } from './keys';
import type { Write } from './transaction';

/**
 * A team's open conversations, counted exactly: every transaction that changes what a
 * conversation counts for (its `teamId`, its status to or from `closed`, its soft deletion) adds
 * the difference to the team's companion item `ORG#o`/`TEAM#t`, and deleting a team requires the
 * count to be 0 in its own transaction. DynamoDB serializes transactions on one item, so an
 * assignment and a deletion that race cannot both succeed.
 *
 * "Open" is every status but `closed` (`open`, `pending` and `snoozed` are all unresolved).
 */
type Counted = Pick<StoredConversation, 'teamId' | 'status' | 'deletedAt'>;

/** The team a conversation counts against, if any. */
const countedOn = (conversation: Counted): string | null =>
  conversation.teamId && conversation.status !== 'closed' && !conversation.deletedAt
    ? conversation.teamId
    : null;

/** A team that is named anew must exist and not be deleted (422 otherwise). */
const LIVE = 'attribute_exists(pk) AND attribute_not_exists(deletedAt)';

const noSuchTeam = () => ValidationError.field('teamId', 'No such team in this organization');

/**
 * The actions that keep the teams' counts (and the `teamId` reference check) in step with the
 * given conversation changes of one transaction: at most one action per team, as DynamoDB allows.
 * A team newly set as `teamId` is checked to exist (422 `teamId`); a count that only follows a
 * close, reopen or deletion is moved even on a deleted team's tombstone, so a closed conversation
 * of a deleted team can still be reopened.
 */
export function teamLoadWrites(
  orgId: string,
  changes: readonly { before: Counted; after: Counted }[],
): Write[] {
  const deltas = new Map<string, number>();
  const named = new Set<string>();
  for (const { before, after } of changes) {
    const from = countedOn(before);
    const to = countedOn(after);
    if (from) deltas.set(from, (deltas.get(from) ?? 0) - 1);
    if (to) deltas.set(to, (deltas.get(to) ?? 0) + 1);
    if (after.teamId && after.teamId !== before.teamId && !after.deletedAt) named.add(after.teamId);
  }
  const writes: Write[] = [];
  for (const teamId of new Set([...deltas.keys(), ...named])) {
    const delta = deltas.get(teamId) ?? 0;
    const live = named.has(teamId);
    const key = keys.teamExists(orgId, teamId);
    if (delta === 0) {
      if (live)
        writes.push({
          action: { ConditionCheck: { TableName: tableName, Key: key, ConditionExpression: LIVE } },
          onConditionFailed: noSuchTeam,
        });
      continue;
    }
    writes.push({
      action: {
        Update: {
          TableName: tableName,
          Key: key,
          UpdateExpression: 'ADD openConversations :delta',
          // Never creates the item: a count without a team would pass for one.
          ConditionExpression: live ? LIVE : 'attribute_exists(pk)',
          ExpressionAttributeValues: { ':delta': delta },
        },
      },
      ...(live ? { onConditionFailed: noSuchTeam } : {}),
    });
  }
  return writes;
}
