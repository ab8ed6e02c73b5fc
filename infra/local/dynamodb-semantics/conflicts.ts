/**
 * Transaction conflicts as AWS documents them (Developer Guide, "Transaction conflict handling in
 * DynamoDB"): while a TransactWriteItems is in flight its items are held. Another TransactWriteItems
 * or a TransactGetItems naming one is cancelled (TransactionConflict); a PutItem, UpdateItem or
 * DeleteItem of one fails with TransactionConflictException. A single write (or a BatchWriteItem's
 * item) in flight cancels a transaction naming its item too. DynamoDB Local runs transactions one
 * after another and never says so.
 */

export const TRANSACTION_CONFLICT_MESSAGE = 'Transaction is ongoing for the item';

export class ConflictTracker {
  /** Items of TransactWriteItems in flight: how many hold each. */
  private readonly transactions = new Map<string, number>();
  /** Items of single writes (and BatchWriteItem items) in flight. */
  private readonly writes = new Map<string, number>();
  /** ClientRequestTokens of TransactWriteItems in flight. */
  private readonly tokens = new Set<string>();

  /** Held by a transaction in flight: a single write of it fails. */
  heldByTransaction(key: string): boolean {
    return this.transactions.has(key);
  }

  /** Held by a transaction or a write in flight: a transaction naming it is cancelled. */
  inFlight(key: string): boolean {
    return this.transactions.has(key) || this.writes.has(key);
  }

  /**
   * Holds the items until the returned function is called (once), or for at most `maxMs` (0: no
   * limit): AWS's lock lasts the write's own run, not DynamoDB Local's queue (`transactionMs`).
   */
  hold(kind: 'transaction' | 'write', keys: readonly string[], maxMs = 0): () => void {
    const map = kind === 'transaction' ? this.transactions : this.writes;
    for (const key of keys) map.set(key, (map.get(key) ?? 0) + 1);
    let released = false;
    const release = () => {
      if (released) return;
      released = true;
      clearTimeout(timer);
      for (const key of keys) {
        const count = (map.get(key) ?? 1) - 1;
        if (count <= 0) map.delete(key);
        else map.set(key, count);
      }
    };
    const timer = maxMs > 0 ? setTimeout(release, maxMs) : undefined;
    return release;
  }

  /** A TransactWriteItems with this token is in flight (AWS: TransactionInProgressException). */
  tokenInFlight(token: string): boolean {
    return this.tokens.has(token);
  }

  holdToken(token: string): () => void {
    this.tokens.add(token);
    return () => this.tokens.delete(token);
  }

  /** Items held right now (tests). */
  held(): number {
    return this.transactions.size + this.writes.size;
  }
}
