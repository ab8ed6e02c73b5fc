/**
 * Phase 5's webhook receiver, in a process of its own (forked with IPC by webhook-delivery.ts) so
 * that it neither competes with the service's event loop nor is slowed by it: node:http with
 * keep-alive, answers 200 at once, and records per request the arrival instant (epoch ms, sub-ms
 * precision), the `webhook-id` header, the path (one per registered webhook) and the payload's
 * `timestamp`. It exits when its parent goes away.
 */
import { createServer } from 'node:http';
import type { ReceiverReply, ReceiverRequest } from './protocol';

const port = Number(process.env.BENCH_RECEIVER_PORT);
if (!Number.isInteger(port) || port <= 0) throw new Error('BENCH_RECEIVER_PORT is not set');

/** Arrivals as parallel arrays: cheap to append at a few thousand per second. */
const arrivals = {
  atMs: [] as number[],
  webhookIds: [] as string[],
  paths: [] as string[],
  eventMs: [] as number[],
};
let unparsable = 0;

const server = createServer({ keepAlive: true }, (request, response) => {
  const chunks: Buffer[] = [];
  request.on('data', (chunk: Buffer) => chunks.push(chunk));
  request.on('end', () => {
    const atMs = performance.timeOrigin + performance.now();
    response.writeHead(200, { 'content-type': 'text/plain', 'content-length': '2' }).end('ok');
    let eventMs = Number.NaN;
    try {
      const payload = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { timestamp?: unknown };
      eventMs = typeof payload.timestamp === 'string' ? Date.parse(payload.timestamp) : Number.NaN;
    } catch {
      unparsable += 1;
    }
    const id = request.headers['webhook-id'];
    arrivals.atMs.push(atMs);
    arrivals.webhookIds.push(typeof id === 'string' ? id : '');
    arrivals.paths.push(request.url ?? '');
    arrivals.eventMs.push(eventMs);
  });
});
server.keepAliveTimeout = 60_000;

const reply = (message: ReceiverReply) => process.send?.(message);

process.on('message', (message: ReceiverRequest) => {
  if (message.type === 'count') reply({ type: 'count', count: arrivals.atMs.length });
  else if (message.type === 'report') {
    const cpu = process.cpuUsage();
    reply({ type: 'report', ...arrivals, unparsable, cpuMs: (cpu.user + cpu.system) / 1000 });
  } else if (message.type === 'reset') {
    arrivals.atMs.length = 0;
    arrivals.webhookIds.length = 0;
    arrivals.paths.length = 0;
    arrivals.eventMs.length = 0;
    unparsable = 0;
    reply({ type: 'count', count: 0 });
  }
});
process.on('disconnect', () => {
  server.closeAllConnections();
  server.close(() => process.exit(0));
});

server.listen(port, '127.0.0.1', () => reply({ type: 'listening', port }));
