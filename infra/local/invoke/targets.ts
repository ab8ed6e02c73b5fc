import { existsSync, readdirSync } from 'node:fs';
import { basename, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { APIGatewayProxyEvent } from 'aws-lambda';
import {
  realtimeConnectionsEntry,
  type WorkerSource,
  workerDefinitions,
  workerEntry,
} from '../../../functions/workers';

/**
 * What `npm run invoke` can call (route groups, `realtime`, workers) and which of them an event file
 * is for. Read from the folders and the worker registry, not from the route table: a function reads
 * its environment once, at load, and nothing may load one before the session has set it.
 */

export const ROOT = fileURLToPath(new URL('../../../', import.meta.url));

/** API Gateway's integration timeout, which CDK gives the API and WebSocket functions too. */
const API_TIMEOUT_SECONDS = 29;

export type InvokeTarget =
  | { kind: 'api'; name: string; entry: string; timeoutSeconds: number }
  | { kind: 'websocket'; name: 'realtime'; entry: string; timeoutSeconds: number }
  | {
      kind: 'worker';
      name: string;
      entry: string;
      timeoutSeconds: number;
      source: WorkerSource;
      description: string;
    };

/**
 * The endpoint groups, from the folders that hold a group handler (`functions/<group>/handler.ts`)
 * rather than from the route table, which would load the functions' configuration too early.
 */
export function apiGroupNames(): string[] {
  return readdirSync(join(ROOT, 'functions'), { withFileTypes: true })
    .filter((entry) => entry.isDirectory() && existsSync(join(ROOT, 'functions', entry.name, 'handler.ts')))
    .map((entry) => entry.name)
    .filter((name) => `functions/${name}/handler.ts` !== realtimeConnectionsEntry)
    .sort();
}

export function invokeTargets(): InvokeTarget[] {
  return [
    ...apiGroupNames().map(
      (name): InvokeTarget => ({
        kind: 'api',
        name,
        entry: `functions/${name}/handler.ts`,
        timeoutSeconds: API_TIMEOUT_SECONDS,
      }),
    ),
    {
      kind: 'websocket',
      name: 'realtime',
      entry: realtimeConnectionsEntry,
      timeoutSeconds: API_TIMEOUT_SECONDS,
    },
    ...workerDefinitions.map(
      (worker): InvokeTarget => ({
        kind: 'worker',
        name: worker.name,
        entry: workerEntry(worker.name),
        timeoutSeconds: worker.timeoutSeconds,
        source: worker.source,
        description: worker.description,
      }),
    ),
  ];
}

export function findTarget(name: string): InvokeTarget | undefined {
  return invokeTargets().find((target) => target.name === name);
}

interface EventShape {
  httpMethod?: unknown;
  resource?: unknown;
  requestContext?: { routeKey?: unknown; connectionId?: unknown };
  Records?: { eventSource?: unknown; eventSourceARN?: unknown }[];
}

/**
 * The function an event file is meant for, when none is named: API Gateway events go to the group
 * that owns their route (`'api'`, settled once the route table may load), WebSocket events to the
 * realtime handler, queue and stream records to the worker the file is named after
 * (`events/sqs/conversation-purge-invalid.json` → conversation-purge), else to the worker of the
 * queue in `eventSourceARN`.
 */
export function inferTarget(file: string, event: unknown): InvokeTarget | 'api' | undefined {
  const shape = (event ?? {}) as EventShape;
  if (typeof shape.httpMethod === 'string' && typeof shape.resource === 'string') return 'api';
  if (typeof shape.requestContext?.routeKey === 'string') return findTarget('realtime');
  if (!Array.isArray(shape.Records)) return undefined;
  const name = basename(file, '.json');
  const byName = workerDefinitions
    .filter((worker) => name === worker.name || name.startsWith(`${worker.name}-`))
    .sort((a, b) => b.name.length - a.name.length)[0];
  if (byName) return findTarget(byName.name);
  const arn = shape.Records[0]?.eventSourceARN;
  if (shape.Records[0]?.eventSource === 'aws:sqs' && typeof arn === 'string') {
    const queue = workerDefinitions.find(
      (worker) => worker.source.kind === 'queue' && arn.endsWith(`-${worker.source.queue}`),
    );
    if (queue) return findTarget(queue.name);
  }
  return undefined;
}

/** The group API Gateway sends an event to: the owner of its method and resource, else the fallback. */
export async function apiGroupOf(
  event: Pick<APIGatewayProxyEvent, 'httpMethod' | 'resource'>,
): Promise<string> {
  const { routeTable, fallbackGroup } = await import('../../../functions/routes');
  return (
    routeTable().find((group) =>
      group.routes.some((route) => route.method === event.httpMethod && route.path === event.resource),
    )?.name ?? fallbackGroup
  );
}
