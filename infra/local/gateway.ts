import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { APIGatewayProxyResult } from 'aws-lambda';
import { fallbackGroup, routeTable } from '../../functions/routes';
import { compileTemplates } from '../../shared/http/router';
import { toProxyEvent } from './lambda-event';
import { createRealtimeServer } from './realtime-server';
import type { LocalRuntime } from './runtime';

/** API Gateway's own payload ceiling; the functions enforce the API's 256 KiB limit themselves. */
const GATEWAY_MAX_BODY = 10 * 1024 * 1024;

function readBody(request: IncomingMessage): Promise<Buffer | 'too_large'> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    request.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size <= GATEWAY_MAX_BODY) chunks.push(chunk);
    });
    request.on('end', () => resolve(size > GATEWAY_MAX_BODY ? 'too_large' : Buffer.concat(chunks)));
    request.on('error', reject);
  });
}

function send(response: ServerResponse, result: APIGatewayProxyResult): void {
  const headers: Record<string, string | number | boolean> = {};
  for (const [name, value] of Object.entries(result.headers ?? {})) {
    if (value !== undefined) headers[name] = value;
  }
  const body = result.isBase64Encoded
    ? Buffer.from(result.body, 'base64')
    : Buffer.from(result.body ?? '', 'utf8');
  response.writeHead(result.statusCode, { ...headers, 'Content-Length': body.length });
  response.end(body);
}

/**
 * The local API Gateway: matches the path against the route table's templates as API Gateway
 * would, builds the REST proxy event and invokes the one handler of the route's group, as
 * deployed. Unmatched methods and paths go to the fallback group, like the `ANY` and `{proxy+}`
 * integrations in CDK.
 */
export async function startGateway(port: number, runtime: () => LocalRuntime): Promise<LocalGateway> {
  const realtime = createRealtimeServer((event) => runtime().get('realtime').invoke(event));

  const groupOf = new Map<string, string>();
  for (const group of routeTable())
    for (const route of group.routes) groupOf.set(`${route.method} ${route.path}`, group.name);
  const templates = compileTemplates(
    routeTable().flatMap((group) => group.routes.map((route) => route.path)),
  );

  let inFlight = 0;
  const server = createServer(async (request, response) => {
    if (realtime.handle(request, response)) return;
    inFlight++;
    try {
      const url = new URL(request.url ?? '/', 'http://localhost');
      const body = await readBody(request);
      if (body === 'too_large') {
        send(
          response,
          gatewayError(413, 'PAYLOAD_TOO_LARGE', 'The request is larger than API Gateway accepts (10 MB)'),
        );
        return;
      }
      const match = templates.match(
        url.pathname.length > 1 ? url.pathname.replace(/\/+$/, '') : url.pathname,
      );
      const resource = match?.template ?? '/{proxy+}';
      const group = groupOf.get(`${request.method} ${resource}`) ?? fallbackGroup;
      const event = toProxyEvent({
        request,
        url,
        body,
        resource,
        pathParameters: match ? match.params : { proxy: url.pathname.slice(1) },
      });
      // A streaming handler writes its prelude and bytes to the response as it goes (API Gateway with
      // response streaming); any other answers once, buffered.
      const result = await runtime().get(group).invoke(event, response);
      if (result !== undefined) send(response, result as APIGatewayProxyResult);
    } catch (error) {
      // A stream that failed after its first byte: the client sees the connection break.
      if (response.headersSent) {
        response.destroy();
        return;
      }
      // Only a gateway bug lands here; the functions answer every error themselves.
      console.error('local gateway error', error);
      send(response, gatewayError(502, 'INTERNAL_ERROR', 'An internal error occurred'));
    } finally {
      inFlight--;
    }
  });
  server.on('upgrade', (request, socket, head) => void realtime.upgrade(request, socket, head));
  await listen(server, port, '127.0.0.1');
  const address = server.address();
  const boundPort = typeof address === 'object' && address ? address.port : port;
  // `localhost` may resolve to ::1 first: answer there too, still on loopback only.
  const ipv6 = createServer((request, response) => server.emit('request', request, response));
  ipv6.on('upgrade', (request, socket, head) => void realtime.upgrade(request, socket, head));
  const ipv6Bound = await listen(ipv6, boundPort, '::1').then(
    () => true,
    () => false,
  );
  return {
    port: boundPort,
    inFlight: () => inFlight,
    close: async () => {
      realtime.close();
      const servers = ipv6Bound ? [server, ipv6] : [server];
      await Promise.all(
        servers.map(
          (each) =>
            new Promise<void>((resolve) => {
              each.closeAllConnections();
              each.close(() => resolve());
            }),
        ),
      );
    },
  };
}

export interface LocalGateway {
  port: number;
  /** API requests received and not yet answered. */
  inFlight(): number;
  close(): Promise<void>;
}

function listen(server: Server, port: number, host: string): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.removeListener('error', reject);
      resolve();
    });
  });
}

/** API Gateway's own answers (it never reaches a function), in the contract's envelope as CDK configures them. */
function gatewayError(statusCode: number, code: string, message: string): APIGatewayProxyResult {
  return {
    statusCode,
    headers: { 'Content-Type': 'application/json', 'X-Request-Id': randomUUID() },
    body: JSON.stringify({ error: { code, message } }),
  };
}
