import { existsSync } from 'node:fs';
import { relative, resolve } from 'node:path';
import { invokeTarget, prepareEvent } from './invoke/invocation';
import { PLACEHOLDERS } from './invoke/placeholders';
import { presentResult, summarize } from './invoke/presentation';
import { sampleEvents, sampleKind } from './invoke/sample-events';
import { type InvokeSession, openSession } from './invoke/session';
import { findTarget, invokeTargets } from './invoke/targets';

/**
 * `npm run invoke`: one handler, one event, against the local emulators — what `sam local invoke`
 * does, without Docker. Only the command line is here (arguments, help, stdout and exit code); the
 * sessions, targets, placeholders and presentation are in `invoke/`, which the tests share.
 */

const USAGE = `npm run invoke -- <function or worker> <event file> [options]
npm run invoke -- <event file> [options]          (the function is inferred from the event)`;

async function help(): Promise<string> {
  // Only here: the route table loads every function's module (and configuration).
  const { routeTable } = await import('../../functions/routes');
  const groups = new Map(routeTable().map((group) => [group.name, group.description]));
  const targets = invokeTargets();
  const width = Math.max(...targets.map((target) => target.name.length)) + 2;
  const line = (name: string, text: string) => `  ${name.padEnd(width)}${text}`;
  const samples = new Map<string, string[]>();
  for (const path of sampleEvents()) {
    const kind = sampleKind(path);
    samples.set(kind, [...(samples.get(kind) ?? []), path]);
  }
  return [
    'npm run invoke — run one Lambda handler with one event against the local emulators',
    '(what `sam local invoke` does, without Docker)',
    '',
    USAGE,
    '',
    'The stack: if `npm start` is running (it writes .local-data/local-stack.json), the handler runs',
    'against it: its DynamoDB Local, queues and buckets, its configuration and its demo organization,',
    'and its workers take whatever the handler queues or writes. Otherwise this command starts its own',
    '(DynamoDB Local, fauxqs, the SES emulator, the table, queues and buckets, a demo organization;',
    'in memory, no workers), invokes, and stops it all again. AWS_ENDPOINT_URL_DYNAMODB, _SQS, _S3 and',
    '_SESV2 point it at endpoints you run instead, as for `npm start`.',
    '',
    "The result goes to stdout as JSON (an API answer with its body parsed; a worker's",
    '{ batchItemFailures }); progress, function logs and a summary line go to stderr. Exit code 1 when',
    'the handler throws or the command fails, 0 otherwise (whatever the status code).',
    '',
    'Functions (API Gateway proxy events; the function that owns the route when omitted):',
    ...targets
      .filter((target) => target.kind === 'api')
      .map((target) => line(target.name, groups.get(target.name) ?? '')),
    line('realtime', 'WebSocket connections ($connect, $disconnect, $default)'),
    '',
    'Workers (functions/workers.ts):',
    ...targets.flatMap((target) =>
      target.kind === 'worker'
        ? [
            line(
              target.name,
              `${target.source.kind === 'queue' ? `SQS ${target.source.queue}` : 'DynamoDB stream'}: ${
                target.description
              }`,
            ),
          ]
        : [],
    ),
    '',
    'Sample events:',
    ...[...samples].flatMap(([kind, paths]) => [`  ${kind}/`, ...paths.map((path) => `    ${path}`)]),
    '',
    'Placeholders in event files ({{NAME}}), filled before the call:',
    ...Object.entries(PLACEHOLDERS).map(([name, text]) => line(name, text)),
    '',
    'Options:',
    '  --own-stack           start the emulators even when `npm start` is running',
    '  --stack-file <path>   the state file of a running stack [.local-data/local-stack.json]',
    "  --set NAME=value      a placeholder value of your own (repeatable); wins over the stack's",
    '  --resolve             print the event with its placeholders filled, and do not invoke',
    '  --compact             one-line JSON',
    '  -h, --help            this text',
    '',
    'Environment: POWERTOOLS_LOG_LEVEL [WARN] (INFO shows the access log lines on stderr),',
    'POWERTOOLS_METRICS_DISABLED [true] (false prints the EMF metric lines CloudWatch would get),',
    'and PLATFORM_ADMIN_TOKEN for a stack of its own.',
    '',
    'Examples:',
    '  npm run invoke -- conversations events/apigw/conversations-get.json',
    '  npm run invoke -- events/apigw/platform-health.json',
    '  npm run invoke -- conversation-purge events/sqs/conversation-purge.json',
    '  npm run invoke -- stream-router events/dynamodb/stream-router-webhook-fanout.json',
  ].join('\n');
}

interface Arguments {
  positional: string[];
  ownStack: boolean;
  stateFile?: string;
  values: Record<string, string>;
  resolveOnly: boolean;
  compact: boolean;
  help: boolean;
}

function parseArguments(argv: readonly string[]): Arguments {
  const parsed: Arguments = {
    positional: [],
    ownStack: false,
    values: {},
    resolveOnly: false,
    compact: false,
    help: false,
  };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] ?? '';
    const value = () => {
      const next = argv[++i];
      if (next === undefined) throw new Error(`${arg} needs a value`);
      return next;
    };
    if (arg === '-h' || arg === '--help') parsed.help = true;
    else if (arg === '--own-stack') parsed.ownStack = true;
    else if (arg === '--stack-file') parsed.stateFile = resolve(value());
    else if (arg === '--resolve') parsed.resolveOnly = true;
    else if (arg === '--compact') parsed.compact = true;
    else if (arg === '--set') {
      const pair = value();
      const at = pair.indexOf('=');
      if (at <= 0) throw new Error(`--set wants NAME=value, got "${pair}"`);
      parsed.values[pair.slice(0, at)] = pair.slice(at + 1);
    } else if (arg.startsWith('-')) throw new Error(`unknown option ${arg}`);
    else parsed.positional.push(arg);
  }
  return parsed;
}

async function main(): Promise<number> {
  const args = parseArguments(process.argv.slice(2));
  if (args.help || args.positional.length === 0) {
    console.log(
      args.help
        ? await help()
        : `${USAGE}\n\nnpm run invoke -- --help lists functions, workers and sample events.`,
    );
    return args.help ? 0 : 2;
  }
  if (args.positional.length > 2) throw new Error(`too many arguments\n${USAGE}`);
  const [first = '', second] = args.positional;
  const [targetName, file] = second === undefined ? [undefined, first] : [first, second];
  if (targetName && !findTarget(targetName))
    throw new Error(`unknown function or worker "${targetName}" (see --help)`);
  if (!existsSync(file)) throw new Error(`no event file ${file}`);

  // stdout carries the result alone: whatever the functions print goes to stderr.
  const stdout = process.stdout.write.bind(process.stdout);
  process.stdout.write = process.stderr.write.bind(process.stderr) as typeof process.stdout.write;
  const t0 = Date.now();
  const progress = (text: string) => console.error(`[${((Date.now() - t0) / 1000).toFixed(1)}s] ${text}`);

  let session: InvokeSession | undefined;
  let closing = false;
  const close = async () => {
    if (closing) return;
    closing = true;
    if (session?.mode === 'started') progress('stopping the emulators');
    await session?.close();
  };
  const interrupted = (signal: string) => {
    progress(`${signal}: stopping`);
    void close().finally(() => process.exit(130));
  };
  process.once('SIGINT', () => interrupted('SIGINT'));
  process.once('SIGTERM', () => interrupted('SIGTERM'));

  try {
    session = await openSession({
      progress,
      ownStack: args.ownStack,
      ...(args.stateFile ? { stateFile: args.stateFile } : {}),
      values: args.values,
    });
    const { target, event } = await prepareEvent(session, file, targetName);
    const json = (value: unknown) => `${JSON.stringify(value, null, args.compact ? undefined : 2)}\n`;
    if (args.resolveOnly) {
      stdout(json(event));
      return 0;
    }
    progress(`invoking ${target.name} (${target.entry}) with ${relative(process.cwd(), resolve(file))}`);
    let invocation: Awaited<ReturnType<typeof invokeTarget>>;
    try {
      invocation = await invokeTarget(session, target, event);
    } catch (error) {
      // As Lambda reports a function error.
      const failure = error instanceof Error ? error : new Error(String(error));
      stdout(
        json({
          errorType: failure.name,
          errorMessage: failure.message,
          trace: failure.stack?.split('\n') ?? [],
        }),
      );
      progress(`${target.name}: the handler threw ${failure.name}: ${failure.message}`);
      return 1;
    }
    stdout(json(presentResult(invocation)));
    progress(summarize(invocation));
    return 0;
  } finally {
    await close();
  }
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    const message = error instanceof Error ? error.message : String(error);
    console.error(`invoke: ${message}`);
    if (/no value for \{\{DEMO_|no demo organization/.test(message)) {
      console.error(
        '  The running stack has no demo organization (SEED_DEMO=false?): pass --own-stack, or --set the values.',
      );
    }
    if (error instanceof Error && error.stack && process.env.DEBUG) console.error(error.stack);
    process.exit(1);
  },
);
