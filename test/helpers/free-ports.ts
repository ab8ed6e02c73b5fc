import { createServer, type Server } from 'node:net';

/**
 * Ports free on 127.0.0.1 right now, distinct: the kernel picks them (port 0), so two suites on one
 * machine (a CI run beside a developer's run) never fight over a fixed number.
 */
export async function freePorts(count: number): Promise<number[]> {
  const servers: Server[] = [];
  try {
    for (let index = 0; index < count; index++) {
      const server = createServer();
      servers.push(server);
      await new Promise<void>((resolve, reject) => {
        server.once('error', reject);
        server.listen(0, '127.0.0.1', resolve);
      });
    }
    return servers.map((server) => {
      const address = server.address();
      if (address === null || typeof address === 'string') throw new Error('no TCP address');
      return address.port;
    });
  } finally {
    await Promise.all(servers.map((server) => new Promise<void>((resolve) => server.close(() => resolve()))));
  }
}
