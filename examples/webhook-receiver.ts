/**
 * Receive webhooks and verify each one (Standard Webhooks signature and timestamp) before trusting it.
 *
 *   WEBHOOK_SECRET=whsec_… PORT=8080 npx tsx examples/webhook-receiver.ts
 *
 * Answers 204 to a verified delivery and prints `verified <type> <webhook-id>`; answers 401 to
 * anything else. The same `webhook-id` can arrive more than once (retries): process it once.
 * With `EXIT_AFTER=n` it stops after n verified deliveries (used by the repository's tests).
 */
import { createServer } from 'node:http';
import { verifyWebhook } from '../clients/typescript/src/index.js';

const secret = process.env.WEBHOOK_SECRET;
if (!secret)
  throw new Error('WEBHOOK_SECRET must be set to the secret returned when the webhook was created');
const port = Number(process.env.PORT ?? 8080);
const exitAfter = Number(process.env.EXIT_AFTER ?? 0);
const seen = new Set<string>();

const server = createServer((request, response) => {
  const chunks: Buffer[] = [];
  request.on('data', (chunk: Buffer) => chunks.push(chunk));
  request.on('end', () => {
    try {
      const event = verifyWebhook(secret, Buffer.concat(chunks).toString('utf8'), request.headers);
      const id = String(request.headers['webhook-id']);
      response.writeHead(204).end();
      if (seen.has(id)) return;
      seen.add(id);
      console.log(`verified ${event.type} ${id}`);
      if (exitAfter && seen.size >= exitAfter) server.close();
    } catch (error) {
      console.log(`refused a delivery: ${(error as Error).message}`);
      response.writeHead(401).end();
    }
  });
});
server.listen(port, '127.0.0.1', () => console.log(`listening on http://127.0.0.1:${port}/`));
