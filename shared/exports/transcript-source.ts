import { messagePages } from '../db/exports';
import type { StoredMessage } from '../db/messages';
import { shown, TRANSCRIPT_MAX_MESSAGES } from './transcript';

/**
 * The messages a transcript shows, oldest first, page by page: deleted ones left out, at most
 * `max`. Once read to its end, `state` says how many were shown and whether more exist.
 */
export function transcriptSource(orgId: string, conversationId: string, max = TRANSCRIPT_MAX_MESSAGES) {
  const state = { count: 0, truncated: false };
  async function* pages(): AsyncGenerator<StoredMessage[]> {
    for await (const page of messagePages(orgId, conversationId)) {
      const taken: StoredMessage[] = [];
      for (const message of page) {
        if (!shown(message)) continue;
        if (state.count >= max) {
          state.truncated = true;
          if (taken.length) yield taken;
          return;
        }
        taken.push(message);
        state.count++;
      }
      if (taken.length) yield taken;
    }
  }
  return { state, pages };
}
