/**
 * A small bounded map whose entries expire. Map keeps insertion order, so the oldest entry is the
 * first one and eviction is O(1).
 */
export class TtlCache<V> {
  private readonly entries = new Map<string, { value: V; expiresAtMs: number }>();

  constructor(
    private readonly ttlMs: number,
    private readonly maxEntries: number,
    private readonly now: () => number,
  ) {}

  get(key: string): V | undefined {
    const entry = this.entries.get(key);
    if (!entry) return undefined;
    if (entry.expiresAtMs <= this.now()) {
      this.entries.delete(key);
      return undefined;
    }
    return entry.value;
  }

  set(key: string, value: V): void {
    this.entries.delete(key);
    if (this.entries.size >= this.maxEntries) {
      const oldest = this.entries.keys().next();
      if (!oldest.done) this.entries.delete(oldest.value);
    }
    this.entries.set(key, { value, expiresAtMs: this.now() + this.ttlMs });
  }

  deleteWhere(predicate: (value: V) => boolean): void {
    for (const [key, entry] of this.entries) {
      if (predicate(entry.value)) this.entries.delete(key);
    }
  }

  /** Visits every live value (to update it in place); expiry is left as it was. */
  forEach(visit: (value: V) => void): void {
    const now = this.now();
    for (const entry of this.entries.values()) if (entry.expiresAtMs > now) visit(entry.value);
  }

  clear(): void {
    this.entries.clear();
  }
}
