import { randomUUID } from 'node:crypto';
import { EventEmitter } from 'node:events';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { basename, dirname, join, relative } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type { APIGatewayProxyEvent, APIGatewayProxyResult } from 'aws-lambda';
import {
  realtimeConnectionsEntry,
  type WorkerSource,
  workerDefinitions,
  workerEntry,
} from '../../functions/workers';
import { collectStreamed, isStreamingHandler, type ResponseSink } from '../../shared/http/streaming';
import type { Progress } from './emulators';
import { lambdaContext, proxyEvent } from './lambda-event';
import { LocalRuntime } from './runtime';
import type { DemoCredentials } from './seed';
import { DEFAULT_STATE_FILE, isAlive, readStackState, type StackState } from './stack-state';

/**
 * `npm run invoke`: one handler, one event, against the local emulators — what `sam local invoke`
 * does, without Docker. The CLI (`invoke-cli.ts`) and the tests share everything here. Nothing in
 * this module loads a function before the environment is set: functions read it once, at load.
 */

export const ROOT = fileURLToPath(new URL('../../', import.meta.url));
export const EVENTS_DIR = join(ROOT, 'events');

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

/** Every sample event under `events/`, as paths relative to the repository. */
export function sampleEvents(): string[] {
  const found: string[] = [];
  const walk = (dir: string) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) walk(path);
      else if (entry.name.endsWith('.json')) found.push(relative(ROOT, path));
    }
  };
  if (existsSync(EVENTS_DIR)) walk(EVENTS_DIR);
  return found.sort();
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
  const { routeTable, fallbackGroup } = await import('../../functions/routes');
  return (
    routeTable().find((group) =>
      group.routes.some((route) => route.method === event.httpMethod && route.path === event.resource),
    )?.name ?? fallbackGroup
  );
}

// ---------------------------------------------------------------------------------------------
// Placeholders

/** `{{NAME}}` anywhere in an event file (inside JSON strings, the body string included). */
const PLACEHOLDER = /\{\{\s*([A-Z][A-Z0-9_]*)\s*\}\}/g;

export const PLACEHOLDERS: Readonly<Record<string, string>> = {
  PLATFORM_ADMIN_TOKEN: 'the platform admin token',
  DEMO_ORG_ID: 'the demo organization',
  DEMO_API_KEY: 'its unrestricted API key (svc_sk_…)',
  DEMO_ADMIN_SESSION: 'an admin operator session (svc_os_…)',
  DEMO_ADMIN_OPERATOR_ID: 'that admin operator',
  DEMO_VISITOR_TOKEN: 'a visitor token (svc_vt_…)',
  DEMO_VISITOR_ID: 'that visitor',
  DEMO_WIDGET_KEY: 'the widget key (svc_wpk_…)',
  DEMO_CONVERSATION_ID:
    "the demo organization's newest conversation (one is started for the demo visitor when it has none)",
  DEMO_EVENT_ID: "the demo organization's newest domain event",
  DEMO_EVENT_PK: 'the partition key of that event (events are spread over shard partitions by id)',
  UUID: 'a fresh random UUID, the same everywhere in one event',
  NOW: 'the current time (ISO 8601)',
  NOW_MS: 'the current time (epoch milliseconds)',
};

export function placeholdersIn(text: string): string[] {
  return [...new Set([...text.matchAll(PLACEHOLDER)].map((match) => match[1] ?? ''))];
}

/** Substitutes `{{NAME}}` with `values[NAME]`, escaped for a JSON string; unknown names are an error. */
export function fillPlaceholders(text: string, values: Readonly<Record<string, string>>): string {
  const missing = placeholdersIn(text).filter((name) => values[name] === undefined);
  if (missing.length > 0) {
    throw new Error(`no value for ${missing.map((name) => `{{${name}}}`).join(', ')}`);
  }
  return text.replace(PLACEHOLDER, (_, name: string) => JSON.stringify(values[name]).slice(1, -1));
}

/** The placeholder values a demo organization and platform token give. */
export function credentialValues(
  platformAdminToken: string | undefined,
  demo: DemoCredentials | undefined,
): Record<string, string> {
  const values: Record<string, string> = {};
  if (platformAdminToken) values.PLATFORM_ADMIN_TOKEN = platformAdminToken;
  if (demo) {
    Object.assign(values, {
      DEMO_ORG_ID: demo.organizationId,
      DEMO_API_KEY: demo.apiKey,
      DEMO_ADMIN_SESSION: demo.adminSession,
      DEMO_ADMIN_OPERATOR_ID: demo.adminOperatorId,
      DEMO_VISITOR_TOKEN: demo.visitorToken,
      DEMO_VISITOR_ID: demo.visitorId,
      DEMO_WIDGET_KEY: demo.widgetKey,
    });
  }
  return values;
}

// ---------------------------------------------------------------------------------------------
// The stack an invocation runs against

export interface InvokeSession {
  /** `attached`: a running `npm start` (or the tests' stack); `started`: emulators this session started. */
  mode: 'attached' | 'started';
  baseUrl: string;
  /** Placeholder values known so far; computed ones (DEMO_CONVERSATION_ID…) are added when first used. */
  values: Record<string, string>;
  progress: Progress;
  /**
   * The functions' isolates (runtime.ts): each function with its template environment and role, as
   * `npm start` runs them. Without it (unit tests that mock the SDK in-process) handlers run here.
   */
  runtime?: LocalRuntime;
  /** Stops what the session started (DynamoDB Local's JVM included); nothing when attached. */
  close(): Promise<void>;
}

export interface SessionOptions {
  progress?: Progress;
  /** Values for placeholders given by the user (`--set NAME=value`); they win over the stack's. */
  values?: Record<string, string>;
}

function defaultEnvironment(): void {
  // Fake credentials, as the local stack uses: the SDK signs requests, the emulators do not check them.
  process.env.AWS_REGION ??= 'us-east-1';
  process.env.AWS_ACCESS_KEY_ID ??= 'local';
  process.env.AWS_SECRET_ACCESS_KEY ??= 'local';
  process.env.POWERTOOLS_LOG_LEVEL ??= 'WARN';
  process.env.POWERTOOLS_METRICS_DISABLED ??= 'true';
}

/**
 * Runs functions in this process against a stack that is already up: its environment (endpoints,
 * table, queue URLs, keys) becomes this process's before any function loads. `seedDemo` writes a
 * demo organization into it when the stack has none (the tests' stack).
 */
export async function attachSession(
  state: Pick<StackState, 'baseUrl' | 'env' | 'platformAdminToken' | 'demo' | 'isolateSpecs'>,
  options: SessionOptions & { seedDemo?: boolean } = {},
): Promise<InvokeSession> {
  const progress = options.progress ?? (() => undefined);
  if (!state.isolateSpecs) throw new Error('the local stack state names no functions: restart npm start');
  Object.assign(process.env, state.env);
  defaultEnvironment();
  const runtime = new LocalRuntime(state.isolateSpecs);
  let demo = state.demo;
  if (!demo && options.seedDemo) {
    const { seedDemo } = await import('./seed');
    demo = await seedDemo();
    progress('demo organization seeded');
  }
  return {
    mode: 'attached',
    baseUrl: state.baseUrl,
    values: { ...credentialValues(state.platformAdminToken, demo), ...options.values },
    progress,
    runtime,
    close: () => runtime.close(),
  };
}

/**
 * The emulators, table, queues, buckets and demo organization of `npm start`, started for this
 * session alone (in memory; an `AWS_ENDPOINT_URL_*` you set is used instead of its emulator). No
 * workers run: the invoked function is the only code that handles anything.
 */
export async function startSession(options: SessionOptions = {}): Promise<InvokeSession> {
  const progress = options.progress ?? (() => undefined);
  defaultEnvironment();
  const { startLocalStack } = await import('./stack');
  const stack = await startLocalStack({
    port: 0,
    seedDemo: true,
    runWorkers: false,
    platformAdminToken: process.env.PLATFORM_ADMIN_TOKEN,
    progress,
  });
  return {
    mode: 'started',
    baseUrl: stack.baseUrl,
    values: { ...credentialValues(stack.platformAdminToken, stack.demo), ...options.values },
    progress,
    runtime: stack.runtime,
    close: () => stack.stop(),
  };
}

/** Whether a state file describes a stack that answers now. */
async function answering(state: StackState): Promise<boolean> {
  if (!isAlive(state.pid)) return false;
  try {
    const response = await fetch(`${state.baseUrl}/api/health`, { signal: AbortSignal.timeout(2_000) });
    return response.ok;
  } catch {
    return false;
  }
}

/**
 * A running `npm start` if its state file says so and it answers, else a stack of its own.
 * `ownStack` skips the look-up.
 */
export async function openSession(
  options: SessionOptions & { stateFile?: string; ownStack?: boolean } = {},
): Promise<InvokeSession> {
  const progress = options.progress ?? (() => undefined);
  const file = options.stateFile ?? DEFAULT_STATE_FILE;
  if (!options.ownStack) {
    const state = readStackState(file);
    if (state && (await answering(state))) {
      progress(`using the running local stack at ${state.baseUrl} (${relative(process.cwd(), file)})`);
      return attachSession(state, options);
    }
    if (state)
      progress(`ignoring ${relative(process.cwd(), file)}: its stack (pid ${state.pid}) is not running`);
    else if (options.stateFile) throw new Error(`${options.stateFile} does not exist`);
  }
  progress(
    options.ownStack
      ? 'starting emulators for this invocation (--own-stack)'
      : 'no local stack running: starting the emulators for this invocation',
  );
  return startSession(options);
}

// ---------------------------------------------------------------------------------------------
// Computed placeholders: real ids of the demo organization, read or made through the handlers

type Handler = (event: unknown, context: ReturnType<typeof lambdaContext>) => Promise<unknown>;

/** Runs a function in its isolate; a streamed answer is collected, so it shows like any other. */
async function isolatedHandler(runtime: LocalRuntime, name: string): Promise<Handler> {
  const isolate = runtime.get(name);
  await isolate.start();
  return async (event) => {
    const chunks: Buffer[] = [];
    let statusCode = 200;
    let headers: Record<string, string | number> = {};
    let failure: Error | undefined;
    const sink: ResponseSink = Object.assign(new EventEmitter(), {
      writeHead: (status: number, head: Record<string, string | number>) => {
        statusCode = status;
        headers = head;
      },
      write: (chunk: Buffer) => chunks.push(chunk) > 0,
      end: (callback?: () => void) => callback?.(),
      destroy: (error?: Error) => {
        failure = error;
      },
    });
    const result = await isolate.invoke(event, sink);
    if (failure) throw failure;
    return result !== undefined
      ? result
      : { statusCode, headers, body: Buffer.concat(chunks).toString('utf8') };
  };
}

async function loadHandler(
  session: Pick<InvokeSession, 'runtime'>,
  target: { name: string; entry: string },
): Promise<Handler> {
  if (session.runtime) return isolatedHandler(session.runtime, target.name);
  const entry = target.entry;
  const module = (await import(pathToFileURL(join(ROOT, entry)).href)) as { handler: Handler };
  const { handler } = module;
  if (typeof handler !== 'function') throw new Error(`${entry} exports no handler`);
  // A streaming group (exports): its streamed answer is collected, so it shows like any other.
  if (isStreamingHandler(handler)) return (event, context) => collectStreamed(handler, event, context);
  return handler;
}

async function callApi(
  session: InvokeSession,
  method: string,
  resource: string,
  options: { token: string; query?: Record<string, string>; body?: unknown },
): Promise<{ status: number; body: Record<string, unknown> }> {
  const group = await apiGroupOf({ httpMethod: method, resource });
  const handler = await loadHandler(session, { name: group, entry: `functions/${group}/handler.ts` });
  const event = proxyEvent({
    method,
    resource,
    headers: {
      Authorization: `Bearer ${options.token}`,
      'User-Agent': 'npm-run-invoke',
      ...(options.body === undefined
        ? {}
        : { 'Content-Type': 'application/json', 'Idempotency-Key': randomUUID() }),
    },
    query: options.query ?? null,
    body: options.body === undefined ? null : JSON.stringify(options.body),
  });
  const result = (await handler(event, lambdaContext(`local-${group}`))) as APIGatewayProxyResult;
  return { status: result.statusCode, body: JSON.parse(result.body || '{}') as Record<string, unknown> };
}

function need(values: Record<string, string>, name: string): string {
  const value = values[name];
  if (!value) throw new Error(`{{${name}}} is unknown here: the stack has no demo organization`);
  return value;
}

async function demoConversation(session: InvokeSession): Promise<string> {
  const token = need(session.values, 'DEMO_API_KEY');
  const listed = await callApi(session, 'GET', '/api/conversations', { token, query: { limit: '1' } });
  const first = (listed.body.data as { id: string }[] | undefined)?.[0]?.id;
  if (listed.status === 200 && first) return first;
  if (listed.status !== 200) session.progress(`listing the demo conversations answered ${listed.status}`);
  const created = await callApi(session, 'POST', '/api/conversations', {
    token,
    body: { visitorId: need(session.values, 'DEMO_VISITOR_ID'), message: 'Hello from npm run invoke' },
  });
  if (created.status !== 201 || typeof created.body.id !== 'string') {
    throw new Error(`starting a demo conversation failed: ${created.status} ${JSON.stringify(created.body)}`);
  }
  session.progress(`started demo conversation ${created.body.id} for {{DEMO_CONVERSATION_ID}}`);
  return created.body.id;
}

async function newestEvent(orgId: string): Promise<string | undefined> {
  const { QueryCommand } = await import('@aws-sdk/lib-dynamodb');
  const { db, tableName } = await import('../../shared/db/client');
  const { keys } = await import('../../shared/db/keys');
  // The events lie in several shard partitions: the newest of their newest is the organization's.
  const newest = await Promise.all(
    keys.eventsPartitions(orgId).map(async (pk) => {
      const { Items } = await db.send(
        new QueryCommand({
          TableName: tableName,
          KeyConditionExpression: 'pk = :pk AND begins_with(sk, :prefix)',
          ExpressionAttributeValues: { ':pk': pk, ':prefix': keys.eventPrefix },
          ScanIndexForward: false,
          ConsistentRead: true,
          Limit: 1,
        }),
      );
      return Items?.[0];
    }),
  );
  const id = newest
    .filter((item) => item !== undefined)
    .sort((a, b) => (String(a.sk) < String(b.sk) ? 1 : -1))[0]?.id;
  return typeof id === 'string' ? id : undefined;
}

async function demoEvent(session: InvokeSession): Promise<string> {
  const orgId = need(session.values, 'DEMO_ORG_ID');
  let id = await newestEvent(orgId);
  if (!id) {
    // A new conversation writes its conversation.created event in the same transaction.
    session.values.DEMO_CONVERSATION_ID ??= await demoConversation(session);
    id = await newestEvent(orgId);
  }
  if (!id) throw new Error('the demo organization has no domain event');
  return id;
}

/** Values for every placeholder the text uses, computing the ones that need the stack. */
export async function placeholderValues(
  session: InvokeSession,
  text: string,
): Promise<Record<string, string>> {
  const wanted = placeholdersIn(text);
  const values: Record<string, string> = {
    UUID: randomUUID(),
    NOW: new Date().toISOString(),
    NOW_MS: String(Date.now()),
    ...session.values,
  };
  if (wanted.includes('DEMO_CONVERSATION_ID') && !values.DEMO_CONVERSATION_ID) {
    values.DEMO_CONVERSATION_ID = session.values.DEMO_CONVERSATION_ID = await demoConversation(session);
  }
  if ((wanted.includes('DEMO_EVENT_ID') || wanted.includes('DEMO_EVENT_PK')) && !values.DEMO_EVENT_ID) {
    values.DEMO_EVENT_ID = await demoEvent(session);
  }
  if (wanted.includes('DEMO_EVENT_PK') && values.DEMO_EVENT_ID && !values.DEMO_EVENT_PK) {
    const { keys } = await import('../../shared/db/keys');
    values.DEMO_EVENT_PK = keys.event(need(session.values, 'DEMO_ORG_ID'), values.DEMO_EVENT_ID).pk;
  }
  return values;
}

// ---------------------------------------------------------------------------------------------
// One invocation

export interface Invocation {
  target: InvokeTarget;
  event: unknown;
  result: unknown;
  /** Loading the function module (Lambda's "Init Duration"; 0 when already loaded). */
  initMs: number;
  durationMs: number;
}

/** The event of a file with its placeholders filled, and the function it is for. */
export async function prepareEvent(
  session: InvokeSession,
  file: string,
  targetName?: string,
): Promise<{ target: InvokeTarget; event: unknown }> {
  const text = readFileSync(file, 'utf8');
  let shape: unknown;
  try {
    // Placeholders sit inside strings, so the file parses as it is.
    shape = JSON.parse(text);
  } catch (error) {
    throw new Error(`${file} is not JSON: ${(error as Error).message}`);
  }
  let target: InvokeTarget | 'api' | undefined = targetName
    ? findTarget(targetName)
    : inferTarget(file, shape);
  if (!target) {
    throw new Error(
      targetName
        ? `unknown function or worker "${targetName}" (see --help)`
        : `cannot tell which function ${file} is for: name it first (see --help)`,
    );
  }
  const event = JSON.parse(fillPlaceholders(text, await placeholderValues(session, text)));
  const proxy = event as Partial<APIGatewayProxyEvent>;
  if (typeof proxy.httpMethod === 'string' && typeof proxy.resource === 'string') {
    const owner = await apiGroupOf({ httpMethod: proxy.httpMethod, resource: proxy.resource });
    if (target === 'api') target = findTarget(owner);
    else if (target.kind === 'api' && target.name !== owner) {
      session.progress(
        `note: API Gateway sends ${proxy.httpMethod} ${proxy.resource} to the ${owner} function, not ${target.name}`,
      );
    }
  }
  if (!target || target === 'api') throw new Error(`no function for ${file}`);
  return { target, event };
}

/** Calls the target's handler with the event and a Lambda-like context (the function's own timeout). */
export async function invokeTarget(
  session: Pick<InvokeSession, 'runtime'>,
  target: InvokeTarget,
  event: unknown,
): Promise<Invocation> {
  const loadStart = performance.now();
  const handler = await loadHandler(session, target);
  const initMs = performance.now() - loadStart;
  const start = performance.now();
  const result = await handler(event, lambdaContext(`local-${target.name}`, target.timeoutSeconds * 1000));
  return { target, event, result, initMs, durationMs: performance.now() - start };
}

export async function invokeFile(
  session: InvokeSession,
  file: string,
  targetName?: string,
): Promise<Invocation> {
  const { target, event } = await prepareEvent(session, file, targetName);
  session.progress(`invoking ${target.name} (${target.entry}) with ${relative(process.cwd(), file)}`);
  return invokeTarget(session, target, event);
}

// ---------------------------------------------------------------------------------------------
// Showing the result

function parsedBody(result: APIGatewayProxyResult): unknown {
  if (result.isBase64Encoded) return result.body;
  const type = Object.entries(result.headers ?? {}).find(
    ([name]) => name.toLowerCase() === 'content-type',
  )?.[1];
  if (typeof result.body === 'string' && (/json/i.test(String(type ?? '')) || /^[[{]/.test(result.body))) {
    try {
      return JSON.parse(result.body);
    } catch {
      // Not JSON after all: shown as text.
    }
  }
  return result.body;
}

/** What stdout shows: an API answer with its body parsed, a worker's batch response as it is. */
export function presentResult(invocation: Invocation): unknown {
  const { target, result } = invocation;
  if (
    target.kind === 'worker' ||
    result === null ||
    typeof result !== 'object' ||
    !('statusCode' in result)
  ) {
    return result ?? null;
  }
  const answer = result as APIGatewayProxyResult;
  return { ...answer, body: parsedBody(answer) };
}

/** One line for stderr: the status, or the batch item failures. */
export function summarize(invocation: Invocation): string {
  const timing = `${invocation.durationMs.toFixed(1)} ms${
    invocation.initMs >= 1 ? `, init ${invocation.initMs.toFixed(0)} ms` : ''
  }`;
  const result = invocation.result as Partial<APIGatewayProxyResult> & {
    batchItemFailures?: { itemIdentifier: string }[];
  };
  if (invocation.target.kind === 'worker') {
    const failures = result?.batchItemFailures ?? [];
    return failures.length === 0
      ? `${invocation.target.name}: no batch item failures (${timing})`
      : `${invocation.target.name}: ${failures.length} batch item failure(s): ${failures
          .map((failure) => failure.itemIdentifier)
          .join(', ')} (${timing})`;
  }
  return `${invocation.target.name}: ${result?.statusCode ?? '?'} (${timing})`;
}

/** The folder an event file sits in, for the help text. */
export function sampleKind(path: string): string {
  return basename(dirname(path));
}
