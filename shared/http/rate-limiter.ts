import { clock } from '../clock';
import { config } from '../config';
import { leaseFromWindow } from '../db/rate-windows';

const WINDOW_MS = 60_000;

interface Lease {
  windowStartMs: number;
  /** Requests this instance may still admit without asking DynamoDB. */
  available: number;
  /** The shared window count after this instance's last lease. */
  sharedUsed: number;
  exhausted: boolean;
  /** The lease request in flight: concurrent requests wait for it instead of leasing again. */
  refilling?: Promise<void>;
}

export interface RateDecision {
  allowed: boolean;
  limit: number;
  remaining: number;
  resetSeconds: number;
}

/**
 * Fixed one-minute window per credential, shared by every instance through one DynamoDB counter.
 * Instances lease quota in chunks so most requests need no round trip; an instance that dies with
 * part of a lease unused makes the limit stricter for the rest of that minute, never looser.
 */
export class RateLimiter {
  private readonly leases = new Map<string, Lease>();

  constructor(
    private readonly limit: number = config.rateLimitPerMinute,
    private readonly chunk: number = Math.max(1, Math.floor(config.rateLimitPerMinute / 50)),
  ) {}

  async take(orgId: string | undefined, credentialId: string): Promise<RateDecision> {
    const now = clock.nowMs();
    const windowStartMs = now - (now % WINDOW_MS);
    const lease = this.currentLease(credentialId, windowStartMs);
    while (lease.available === 0 && !lease.exhausted) {
      lease.refilling ??= this.refill(lease, orgId, credentialId).finally(() => {
        lease.refilling = undefined;
      });
      await lease.refilling;
    }
    return this.decide(lease, now, windowStartMs);
  }

  /**
   * `take` without waiting: the decision when this instance's lease can answer it now (quota left,
   * or the window known to be exhausted), else undefined and nothing taken (call `take`).
   */
  takeNow(credentialId: string): RateDecision | undefined {
    const now = clock.nowMs();
    const windowStartMs = now - (now % WINDOW_MS);
    const lease = this.leases.get(credentialId);
    if (!lease || lease.windowStartMs !== windowStartMs || (lease.available === 0 && !lease.exhausted)) {
      return undefined;
    }
    return this.decide(lease, now, windowStartMs);
  }

  private decide(lease: Lease, now: number, windowStartMs: number): RateDecision {
    const resetSeconds = Math.max(1, Math.ceil((windowStartMs + WINDOW_MS - now) / 1000));
    if (lease.available === 0) return { allowed: false, limit: this.limit, remaining: 0, resetSeconds };
    lease.available -= 1;
    const remaining = Math.max(0, this.limit - lease.sharedUsed + lease.available);
    return { allowed: true, limit: this.limit, remaining, resetSeconds };
  }

  private currentLease(credentialId: string, windowStartMs: number): Lease {
    const existing = this.leases.get(credentialId);
    if (existing && existing.windowStartMs === windowStartMs) return existing;
    const lease: Lease = { windowStartMs, available: 0, sharedUsed: 0, exhausted: false };
    this.leases.set(credentialId, lease);
    this.forgetOldWindows(windowStartMs);
    return lease;
  }

  private async refill(lease: Lease, orgId: string | undefined, credentialId: string): Promise<void> {
    const { granted, used } = await leaseFromWindow({
      orgId,
      credentialId,
      windowStartMs: lease.windowStartMs,
      windowMs: WINDOW_MS,
      limit: this.limit,
      wanted: this.chunk,
    });
    lease.available += granted;
    lease.sharedUsed = used;
    lease.exhausted = granted === 0;
  }

  private forgetOldWindows(current: number): void {
    if (this.leases.size < 10_000) return;
    for (const [credential, lease] of this.leases) {
      if (lease.windowStartMs !== current) this.leases.delete(credential);
    }
  }
}
