import { clock } from '../../shared/clock';
import { type Conversation, conversations } from '../../shared/db/conversations';
import type { OrgCaller } from '../../shared/http/caller';
import { ForbiddenError, NotFoundError } from '../../shared/http/errors';
import type { Organization } from '../../shared/schemas/organization';

const DAY_MS = 86_400_000;

/** The oldest `lastMessageAt` the organization still shows, or undefined for unlimited history. */
export function historyCutoff(organization: Organization): string | undefined {
  if (organization.historyWindowDays === null) return undefined;
  return new Date(clock.nowMs() - organization.historyWindowDays * DAY_MS).toISOString();
}

/**
 * Every conversation-scoped endpoint starts here: another organization's id, a soft-deleted
 * conversation and another visitor's conversation are all simply missing (404); a conversation
 * older than the history window is 403 with its reason.
 */
export async function loadConversation(
  caller: OrgCaller,
  organization: Organization,
  id: string,
): Promise<Conversation> {
  const found = await conversations.get(caller.orgId, id);
  if (!found || (caller.kind === 'visitor' && found.visitorId !== caller.visitorId)) {
    throw new NotFoundError('Conversation not found');
  }
  const cutoff = historyCutoff(organization);
  if (cutoff && found.lastMessageAt < cutoff) {
    throw new ForbiddenError('This conversation is outside the organization history window', {
      reason: 'outside_history_window',
      historyWindowDays: organization.historyWindowDays,
    });
  }
  return found;
}
