import { Agent, request } from 'node:http';

/**
 * A small closed-loop HTTP load generator (autocannon's model: N connections, each sending its next
 * request when the previous answer has arrived), for the local gateway's throughput figures:
 *
 *   npx tsx bench/http-load.ts --url=http://localhost:3000/api/conversations?limit=20 \
 *     --header="Authorization: Bearer svc_sk_…" --connections=100 --seconds=10
 */

export interface LoadResult {
  requests: number;
  perSecond: number;
  p50Ms: number;
  p99Ms: number;
  statuses: Record<number, number>;
}

export async function load(options: {
  url: string;
  headers?: Record<string, string>;
  connections: number;
  seconds: number;
}): Promise<LoadResult> {
  const agent = new Agent({ keepAlive: true, maxSockets: options.connections });
  const latencies: number[] = [];
  const statuses: Record<number, number> = {};
  const url = new URL(options.url);
  const deadline = Date.now() + options.seconds * 1000;
  const once = () =>
    new Promise<void>((resolve, reject) => {
      const t0 = performance.now();
      const outgoing = request(url, { agent, headers: options.headers }, (response) => {
        response.resume();
        response.on('end', () => {
          latencies.push(performance.now() - t0);
          statuses[response.statusCode ?? 0] = (statuses[response.statusCode ?? 0] ?? 0) + 1;
          resolve();
        });
      });
      outgoing.on('error', reject);
      outgoing.end();
    });
  const started = performance.now();
  await Promise.all(
    Array.from({ length: options.connections }, async () => {
      while (Date.now() < deadline) await once();
    }),
  );
  const elapsed = (performance.now() - started) / 1000;
  agent.destroy();
  latencies.sort((a, b) => a - b);
  const at = (q: number) => latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))] ?? 0;
  return {
    requests: latencies.length,
    perSecond: latencies.length / elapsed,
    p50Ms: at(0.5),
    p99Ms: at(0.99),
    statuses,
  };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const arg = (name: string) =>
    process.argv.filter((a) => a.startsWith(`--${name}=`)).map((a) => a.slice(name.length + 3));
  const headers: Record<string, string> = {};
  for (const header of arg('header')) {
    const at = header.indexOf(':');
    headers[header.slice(0, at).trim()] = header.slice(at + 1).trim();
  }
  const result = await load({
    url: arg('url')[0] ?? 'http://localhost:3000/api/health',
    headers,
    connections: Number(arg('connections')[0] ?? 100),
    seconds: Number(arg('seconds')[0] ?? 10),
  });
  console.log(
    `${result.perSecond.toFixed(0)} req/s, p50 ${result.p50Ms.toFixed(0)} ms, p99 ${result.p99Ms.toFixed(0)} ms, ${result.requests} requests, statuses ${JSON.stringify(result.statuses)}`,
  );
}
