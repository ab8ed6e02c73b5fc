/**
 * The scaled run: one tenant's mixed load (posts by API key, operator and visitor, creates, PATCHes,
 * over a pool of conversations) offered at a fixed rate, open loop, for a few seconds a level. The
 * partition limits are divided by the divisor, and so is the rate: a level stands for `posts/s` in
 * AWS and is offered here at posts/s ÷ divisor. A request is sent on time unless `concurrency` are
 * already unanswered (then it is skipped and counted: a closed client would have waited).
 * http-load.ts is closed loop with one URL; this needs bodies, a mix and a rate.
 */
import { loadavg } from 'node:os';
import type { Ledger } from '../infra/local/dynamodb-semantics';
import type { ScaledLevel } from './tenant-ceiling-report';
import { throttledPartitions } from './tenant-ceiling-report';
import { type Call, send, type Tenant, type Visitor } from './tenant-ceiling-scenarios';

/** The pool the load writes to: visitors and the conversations each started. */
export interface Pool {
  tenant: Tenant;
  visitors: (Visitor & { conversations: string[] })[];
}

export interface Mix {
  posts: number;
  creates: number;
  patches: number;
}

type Kind = 'post · API key' | 'post · operator' | 'post · visitor' | 'create' | 'PATCH';

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));
const PRIORITIES = ['high', 'low', 'urgent', 'normal'] as const;

/** The kinds of one cycle of the mix, interleaved so that each second sees the same mix. */
function cycle(mix: Mix): Kind[] {
  const posts: Kind[] = ['post · API key', 'post · operator', 'post · visitor'];
  const kinds: Kind[] = [];
  const total = mix.posts + mix.creates + mix.patches;
  let [p, c, q] = [0, 0, 0];
  for (let i = 0; i < total; i++) {
    // Whichever kind is furthest behind its share goes next.
    const behind = [
      { kind: 'post' as const, lag: ((i + 1) * mix.posts) / total - p },
      { kind: 'create' as const, lag: ((i + 1) * mix.creates) / total - c },
      { kind: 'patch' as const, lag: ((i + 1) * mix.patches) / total - q },
    ].sort((a, b) => b.lag - a.lag)[0];
    if (behind?.kind === 'create') {
      kinds.push('create');
      c++;
    } else if (behind?.kind === 'patch') {
      kinds.push('PATCH');
      q++;
    } else {
      kinds.push(posts[p % posts.length] as Kind);
      p++;
    }
  }
  return kinds;
}

export async function runLevel(options: {
  base: string;
  pool: Pool;
  ledger: Ledger;
  divisor: number;
  postsPerSecond: number;
  seconds: number;
  mix: Mix;
  concurrency: number;
}): Promise<ScaledLevel> {
  const { pool, mix } = options;
  const { tenant } = pool;
  const conversations = pool.visitors.flatMap((visitor) => visitor.conversations);
  const kinds = cycle(mix);
  const perSecond =
    (options.postsPerSecond / options.divisor) * ((mix.posts + mix.creates + mix.patches) / mix.posts);
  const interval = 1000 / perSecond;
  let next = 0;
  const callFor = (kind: Kind, i: number): Call => {
    const conversation = conversations[i % conversations.length] as string;
    const visitor = pool.visitors[i % pool.visitors.length] as Pool['visitors'][number];
    switch (kind) {
      case 'post · API key':
      case 'post · operator':
        return {
          method: 'POST',
          path: `/api/conversations/${conversation}/messages`,
          token: kind === 'post · API key' ? tenant.apiKey : tenant.session,
          body: {
            content: `Reply ${i}`,
            ...(kind === 'post · API key' ? { operatorId: tenant.operatorId } : {}),
          },
        };
      case 'post · visitor':
        return {
          method: 'POST',
          path: `/api/conversations/${visitor.conversations[i % visitor.conversations.length]}/messages`,
          token: visitor.token,
          body: { content: `Question ${i}` },
        };
      case 'create':
        return {
          method: 'POST',
          path: '/api/conversations',
          token: tenant.apiKey,
          body: { visitorId: visitor.id, message: `New question ${i}` },
        };
      case 'PATCH':
        return {
          method: 'PATCH',
          path: `/api/conversations/${conversation}`,
          token: tenant.apiKey,
          body: { priority: PRIORITIES[i % PRIORITIES.length] },
        };
    }
  };

  options.ledger.reset();
  const load = loadavg()[0] ?? 0;
  const statuses: Record<string, number> = {};
  const byKind: Record<string, Record<string, number>> = {};
  const latencies: number[] = [];
  const inFlight = new Set<Promise<void>>();
  let offered = 0;
  let skipped = 0;
  let postsCreated = 0;
  const started = performance.now();
  const windowMs = options.seconds * 1000;
  for (let i = 0; ; i++) {
    const due = started + i * interval;
    if (due - started >= windowMs) break;
    const wait = due - performance.now();
    if (wait > 0) await sleep(wait);
    offered++;
    if (inFlight.size >= options.concurrency) {
      skipped++;
      continue;
    }
    const kind = kinds[i % kinds.length] as Kind;
    const index = next++;
    const request = send(options.base, callFor(kind, index))
      .then(
        (answer) => {
          latencies.push(answer.ms);
          return String(answer.status);
        },
        () => 'error',
      )
      .then((status) => {
        statuses[status] = (statuses[status] ?? 0) + 1;
        byKind[kind] ??= {};
        const mine = byKind[kind] as Record<string, number>;
        mine[status] = (mine[status] ?? 0) + 1;
        if (kind.startsWith('post') && status === '201') postsCreated++;
      });
    inFlight.add(request);
    void request.finally(() => inFlight.delete(request));
  }
  await Promise.all(inFlight);
  const snapshot = options.ledger.snapshot();
  latencies.sort((a, b) => a - b);
  const at = (q: number) => latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))] ?? 0;
  return {
    postsPerSecond: options.postsPerSecond,
    offeredPerSecond: perSecond,
    offered,
    sent: offered - skipped,
    skipped,
    durationMs: windowMs,
    statuses,
    byKind,
    p50Ms: at(0.5),
    p99Ms: at(0.99),
    achievedPostsPerSecond: (postsCreated / options.seconds) * options.divisor,
    throttles: snapshot.throttles,
    throttledPartitions: throttledPartitions(snapshot),
    transactionConflicts: snapshot.items.reduce((sum, each) => sum + each.conflicts, 0),
    loadAverage: `${load.toFixed(2)}→${(loadavg()[0] ?? 0).toFixed(2)}`,
  };
}
