import { clock } from '../clock';
import { config } from '../config';
import { leaseFromWindow, leaseOrganizationRequests } from '../db/rate-windows';

const WINDOW_MS = 60_000;

interface Lease {
  windowStartMs: number;
  /** The limit the lease was taken under: another limit (a changed organization ceiling) starts afresh. */
  limit: number;
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

/** Reserves up to `wanted` requests of the shared window that starts at `windowStartMs`. */
type LeaseWindow = (
  windowStartMs: number,
  limit: number,
  wanted: number,
) => Promise<{ granted: number; used: number }>;

/**
 * Fixed one-minute windows, each shared by every instance through one DynamoDB counter. Instances
 * lease quota in chunks so most requests need no round trip; an instance that dies with part of a
 * lease unused makes the limit stricter for the rest of that minute, never looser.
 */
class WindowLeases {
  private readonly leases = new Map<string, Lease>();

  async take(key: string, limit: number, chunk: number, lease: LeaseWindow): Promise<RateDecision> {
    const now = clock.nowMs();
    const windowStartMs = now - (now % WINDOW_MS);
    const current = this.currentLease(key, limit, windowStartMs);
    while (current.available === 0 && !current.exhausted) {
      current.refilling ??= this.refill(current, chunk, lease).finally(() => {
        current.refilling = undefined;
      });
      await current.refilling;
    }
    return decide(current, now, windowStartMs);
  }

  takeNow(key: string, limit: number): RateDecision | undefined {
    const now = clock.nowMs();
    const windowStartMs = now - (now % WINDOW_MS);
    const lease = this.leases.get(key);
    if (
      !lease ||
      lease.windowStartMs !== windowStartMs ||
      lease.limit !== limit ||
      (lease.available === 0 && !lease.exhausted)
    ) {
      return undefined;
    }
    return decide(lease, now, windowStartMs);
  }

  /**
   * This window's lease of `key`. A lease taken under another limit is dropped (what it still held
   * stays counted in the shared window: stricter, never looser) and the new limit asks DynamoDB.
   */
  private currentLease(key: string, limit: number, windowStartMs: number): Lease {
    const existing = this.leases.get(key);
    if (existing && existing.windowStartMs === windowStartMs && existing.limit === limit) return existing;
    const lease: Lease = { windowStartMs, limit, available: 0, sharedUsed: 0, exhausted: false };
    this.leases.set(key, lease);
    this.forgetOldWindows(windowStartMs);
    return lease;
  }

  private async refill(lease: Lease, chunk: number, leaseWindow: LeaseWindow): Promise<void> {
    const { granted, used } = await leaseWindow(lease.windowStartMs, lease.limit, chunk);
    lease.available += granted;
    lease.sharedUsed = used;
    lease.exhausted = granted === 0;
  }

  private forgetOldWindows(current: number): void {
    if (this.leases.size < 10_000) return;
    for (const [key, lease] of this.leases) {
      if (lease.windowStartMs !== current) this.leases.delete(key);
    }
  }
}

function decide(lease: Lease, now: number, windowStartMs: number): RateDecision {
  const resetSeconds = Math.max(1, Math.ceil((windowStartMs + WINDOW_MS - now) / 1000));
  if (lease.available === 0) return { allowed: false, limit: lease.limit, remaining: 0, resetSeconds };
  lease.available -= 1;
  const remaining = Math.max(0, lease.limit - lease.sharedUsed + lease.available);
  return { allowed: true, limit: lease.limit, remaining, resetSeconds };
}

/**
 * Fixed one-minute window per credential (`RATE_LIMIT_PER_MINUTE`), leased in chunks of 2% of the
 * limit: see `WindowLeases`.
 */
export class RateLimiter {
  private readonly windows = new WindowLeases();

  constructor(
    private readonly limit: number = config.rateLimitPerMinute,
    private readonly chunk: number = Math.max(1, Math.floor(config.rateLimitPerMinute / 50)),
  ) {}

  take(orgId: string | undefined, credentialId: string): Promise<RateDecision> {
    return this.windows.take(credentialId, this.limit, this.chunk, (windowStartMs, limit, wanted) =>
      leaseFromWindow({ orgId, credentialId, windowStartMs, windowMs: WINDOW_MS, limit, wanted }),
    );
  }

  /**
   * `take` without waiting: the decision when this instance's lease can answer it now (quota left,
   * or the window known to be exhausted), else undefined and nothing taken (call `take`).
   */
  takeNow(credentialId: string): RateDecision | undefined {
    return this.windows.takeNow(credentialId, this.limit);
  }
}

/**
 * The organization's chunk: 1% of its ceiling, at least 1. The organization's window is one item
 * that every credential and every function instance of the tenant leases from; as a credential's,
 * it is written per chunk, never per request. A minute's quota takes `limit / chunk` lease writes,
 * always under 200 (a ceiling under 200 has a chunk of 1: one write per admitted request), so
 * about 3 writes a second at most, plus one or two per instance when the window runs out (none
 * after that until the next minute). The chunk is smaller than a credential's (2%) because more
 * instances share the window, and what an instance leased and did not use is lost to the others.
 */
export const organizationChunk = (limit: number): number => Math.max(1, Math.floor(limit / 100));

/**
 * The organization's ceiling (`rateLimitPerMinute`), every credential of the organization together:
 * the same leasing as `RateLimiter` over one window per organization and minute. The ceiling comes
 * with each call (the organization as authentication read it), so a changed one applies as soon as
 * this instance sees the changed organization.
 */
export class OrganizationRateLimiter {
  private readonly windows = new WindowLeases();

  constructor(private readonly chunkOf: (limit: number) => number = organizationChunk) {}

  take(orgId: string, limit: number): Promise<RateDecision> {
    return this.windows.take(orgId, limit, this.chunkOf(limit), (windowStartMs, ceiling, wanted) =>
      leaseOrganizationRequests({ orgId, windowStartMs, windowMs: WINDOW_MS, limit: ceiling, wanted }),
    );
  }

  /** As `RateLimiter.takeNow`: undefined (and nothing taken) when DynamoDB must be asked. */
  takeNow(orgId: string, limit: number): RateDecision | undefined {
    return this.windows.takeNow(orgId, limit);
  }
}
