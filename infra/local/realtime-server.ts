import { randomBytes } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import { WebSocket, WebSocketServer } from 'ws';
import type { WebSocketEvent } from '../../functions/realtime/handler';

type ConnectionHandler = (event: WebSocketEvent) => Promise<{ statusCode: number; body: string }>;

const MANAGEMENT_PATH = /^\/@connections\/([^/?]+)$/;

/**
 * The realtime channel as API Gateway's WebSocket API serves it: clients connect to `/realtime`
 * (with `?token=`), the same connection handler as in AWS decides, and the push worker posts to
 * `/@connections/{id}` exactly as to the Management API (a connection that is gone answers 410
 * GoneException). So the handler and the worker run unchanged.
 */
export function createRealtimeServer(invoke: (event: WebSocketEvent) => Promise<unknown>) {
  const handler = invoke as ConnectionHandler;
  const sockets = new Map<string, WebSocket>();
  const wss = new WebSocketServer({ noServer: true });

  const event = (routeKey: string, connectionId: string, query?: URLSearchParams): WebSocketEvent => ({
    requestContext: { routeKey, connectionId, requestId: randomBytes(8).toString('hex') },
    queryStringParameters: query ? Object.fromEntries(query) : null,
  });

  return {
    /** Upgrades `/realtime` requests after the `$connect` handler admits them. */
    async upgrade(request: IncomingMessage, socket: Duplex, head: Buffer): Promise<void> {
      const url = new URL(request.url ?? '/', 'http://localhost');
      if (url.pathname !== '/realtime') {
        socket.end('HTTP/1.1 404 Not Found\r\n\r\n');
        return;
      }
      const connectionId = `${randomBytes(9).toString('base64url')}=`;
      const admitted = await handler(event('$connect', connectionId, url.searchParams));
      if (admitted.statusCode !== 200) {
        socket.end(`HTTP/1.1 ${admitted.statusCode} Refused\r\nContent-Length: 0\r\n\r\n`);
        return;
      }
      wss.handleUpgrade(request, socket, head, (ws) => {
        sockets.set(connectionId, ws);
        ws.on('message', () => void handler(event('$default', connectionId)));
        ws.on('close', () => {
          sockets.delete(connectionId);
          void handler(event('$disconnect', connectionId));
        });
      });
    },

    /** The Management API's PostToConnection; true when the request was one. */
    handle(request: IncomingMessage, response: ServerResponse): boolean {
      const match = MANAGEMENT_PATH.exec(new URL(request.url ?? '/', 'http://localhost').pathname);
      if (!match || request.method !== 'POST') return false;
      const chunks: Buffer[] = [];
      request.on('data', (chunk: Buffer) => chunks.push(chunk));
      request.on('end', () => {
        const ws = sockets.get(decodeURIComponent(match[1] ?? ''));
        if (!ws || ws.readyState !== WebSocket.OPEN) {
          response.writeHead(410, {
            'Content-Type': 'application/json',
            'x-amzn-ErrorType': 'GoneException',
          });
          response.end(JSON.stringify({ message: 'Gone' }));
          return;
        }
        ws.send(Buffer.concat(chunks).toString('utf8'));
        response.writeHead(200).end();
      });
      return true;
    },

    close(): void {
      for (const ws of sockets.values()) ws.terminate();
      wss.close();
    },
  };
}
