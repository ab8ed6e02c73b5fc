import { type ChildProcess, fork } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { ReceiverReply, ReceiverRequest } from './protocol';

type Report = Extract<ReceiverReply, { type: 'report' }>;

export interface ReceiverHandle {
  port: number;
  pid: number | undefined;
  count(): Promise<number>;
  report(): Promise<Report>;
  reset(): Promise<void>;
  close(): Promise<void>;
}

const script = fileURLToPath(new URL('./webhook-receiver.ts', import.meta.url));

/** Starts webhook-receiver.ts in its own process on `port` (127.0.0.1) and talks to it over IPC. */
export async function startReceiver(port: number, timeoutMs = 15_000): Promise<ReceiverHandle> {
  const child: ChildProcess = fork(script, [], {
    execArgv: ['--no-warnings', '--import', 'tsx'],
    env: { ...process.env, BENCH_RECEIVER_PORT: String(port) },
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  // Should this process die without closing it, the receiver must not outlive it.
  const kill = () => child.kill('SIGKILL');
  process.once('exit', kill);
  const waiting: { type: ReceiverReply['type']; resolve: (reply: ReceiverReply) => void }[] = [];
  child.on('message', (reply: ReceiverReply) => {
    const index = waiting.findIndex((entry) => entry.type === reply.type);
    if (index >= 0) waiting.splice(index, 1)[0]?.resolve(reply);
  });
  const next = <T extends ReceiverReply['type']>(
    type: T,
    ms: number,
  ): Promise<Extract<ReceiverReply, { type: T }>> =>
    new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`the receiver sent no "${type}" within ${ms} ms`)), ms);
      const exited = () => reject(new Error(`the receiver exited (code ${child.exitCode})`));
      child.once('exit', exited);
      waiting.push({
        type,
        resolve: (reply) => {
          clearTimeout(timer);
          child.off('exit', exited);
          resolve(reply as Extract<ReceiverReply, { type: T }>);
        },
      });
    });
  const ask = <T extends ReceiverReply['type']>(request: ReceiverRequest, type: T) => {
    const reply = next(type, 10_000);
    child.send(request);
    return reply;
  };

  await next('listening', timeoutMs);
  return {
    port,
    pid: child.pid,
    count: async () => (await ask({ type: 'count' }, 'count')).count,
    report: () => ask({ type: 'report' }, 'report'),
    reset: async () => {
      await ask({ type: 'reset' }, 'count');
    },
    close: async () => {
      process.removeListener('exit', kill);
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
      if (child.connected) child.disconnect();
      const timer = setTimeout(() => child.kill('SIGKILL'), 3_000);
      await exited;
      clearTimeout(timer);
    },
  };
}
