import { clock } from '../clock';
import { NotFoundError } from '../errors';
import { eventWrite } from './events';
import { type AuditBy, orgAudit } from './org-audit';
import { ConcurrentChangeError, RetryBudget, transact } from './transaction';
import { profileOf, type StoredVisitor } from './visitor-record';
import { conversationCountOf, getStored, guardWrites, visitorPut } from './visitor-store';

/*
 * The erasure as the request makes it (DELETE /api/visitors/{id}); the worker's steps are in
 * visitor-erasure.ts (apart: they delete files, which the visitors function is not granted).
 */

/** The visitor without personal data: what `GET` shows from the erasure on. */
export function erased(visitor: StoredVisitor, now: string): StoredVisitor {
  return {
    ...visitor,
    identifier: '',
    fingerprint: null,
    geoCountry: null,
    geoCity: null,
    metadata: {},
    externalId: null,
    name: null,
    email: null,
    phone: null,
    erasedAt: visitor.erasedAt ?? now,
    updatedAt: now,
    version: visitor.version + 1,
    rev: visitor.rev + 1,
  };
}

export const visitorErasureRequest = {
  /**
   * Accepts the erasure, one transaction: the visitor's personal fields cleared and `erasedAt`
   * set (so its tokens stop working and it leaves the e-mail and identifier listings), its external
   * id released, `visitor.erased` with the anonymized visitor, and the audit entry. The rest (its
   * messages, conversations and uploads) follows from the stream (`eraseStep`). A visitor already
   * erased is left as it is (no second event or entry).
   */
  async begin(orgId: string, visitorId: string, by: AuditBy): Promise<StoredVisitor> {
    const budget = new RetryBudget();
    for (let attempt = 1; ; attempt++) {
      const current = await getStored(orgId, visitorId);
      if (!current) throw new NotFoundError('Visitor not found');
      if (current.erasedAt !== null) return current;
      const next = erased(current, clock.nowIso());
      try {
        await transact([
          { action: visitorPut(orgId, current, next) },
          ...guardWrites(orgId, current, next),
          eventWrite(orgId, 'visitor.erased', profileOf(next, await conversationCountOf(orgId, visitorId))),
          {
            action: orgAudit.write(orgId, {
              ...by,
              type: 'visitor.erased',
              target: { type: 'visitor', id: visitorId },
            }),
          },
        ]);
        return next;
      } catch (error) {
        if (!(error instanceof ConcurrentChangeError) || !(await budget.pause(attempt))) throw error;
      }
    }
  },
};
