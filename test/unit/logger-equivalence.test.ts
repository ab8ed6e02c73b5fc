import { Logger } from '@aws-lambda-powertools/logger';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';

/**
 * shared/logger.ts writes the lines Powertools Logger 2.35 printed: for the same calls, the same
 * bytes on the same streams in the same order (the clock is frozen, so the timestamps match too),
 * the same level and sampling rules, the same failures at load. The reference below is the module
 * as it was on Powertools, its access line included (`infoWith` was Powertools' `info` with the
 * members merged in).
 */

type Log = typeof import('../../shared/logger')['log'];
type Env = Readonly<Record<string, string | undefined>>;
/** A sequence of calls; `note` records what is not a line (the enabled flags) in the output. */
type Script = (log: Log, note: (text: string) => void) => void;

const ON_LAMBDA: Env = {
  POWERTOOLS_LOG_LEVEL: 'DEBUG',
  LOG_LEVEL: undefined,
  AWS_LAMBDA_LOG_LEVEL: undefined,
  AWS_LAMBDA_MAX_CONCURRENCY: undefined,
  POWERTOOLS_LOGGER_SAMPLE_RATE: undefined,
  POWERTOOLS_LOGGER_LOG_EVENT: undefined,
  POWERTOOLS_SERVICE_NAME: undefined,
  POWERTOOLS_DEV: undefined,
  TZ: ':UTC',
  _X_AMZN_TRACE_ID: undefined,
};

/** The old module: Powertools Logger behind the same wrapper, built as the module was at load. */
function powertools(): Log {
  const logger = new Logger({ serviceName: 'conversation-service' });
  const sampling = Number(process.env.POWERTOOLS_LOGGER_SAMPLE_RATE ?? 0) > 0;
  const current: { requestId?: string; orgId?: string } = {};
  let infoEnabled = logger.level <= 12;
  let debugEnabled = logger.level <= 8;
  return {
    beginRequest(requestId) {
      current.requestId = requestId;
      current.orgId = undefined;
      if (sampling) {
        logger.refreshSampleRateCalculation();
        infoEnabled = logger.level <= 12;
        debugEnabled = logger.level <= 8;
      }
    },
    setOrganization(orgId) {
      current.orgId = orgId;
    },
    get infoEnabled() {
      return infoEnabled;
    },
    get debugEnabled() {
      return debugEnabled;
    },
    debug(message, attributes) {
      if (debugEnabled) logger.debug(message, { ...current, ...attributes() });
    },
    info(message, attributes) {
      if (infoEnabled) logger.info(message, { ...current, ...attributes() });
    },
    infoWith(message, own, more) {
      if (!infoEnabled) return;
      const fields = { ...current, ...own };
      logger.info(message, more ? { ...fields, ...JSON.parse(`{${more}}`) } : fields);
    },
    warn(message, attributes = {}) {
      logger.warn(message, { ...current, ...attributes });
    },
    error(message, attributes = {}) {
      logger.error(message, { ...current, ...attributes });
    },
  };
}

async function ours(): Promise<Log> {
  vi.resetModules();
  return (await import('../../shared/logger')).log;
}

interface Printed {
  /** Every write, in order, as `<stream or console method> <text>`. */
  output: string[];
  error?: string;
}

/** What a logger prints (and throws) for `script`, under `env` from before its load. */
async function printed(load: () => Log | Promise<Log>, env: Env, script: Script): Promise<Printed> {
  for (const [name, value] of Object.entries({ ...ON_LAMBDA, ...env })) vi.stubEnv(name, value);
  const result: Printed = { output: [] };
  const spies = [
    ...(['stdout', 'stderr'] as const).map((stream) =>
      vi.spyOn(process[stream], 'write').mockImplementation((chunk: string | Uint8Array) => {
        result.output.push(`${stream} ${String(chunk)}`);
        return true;
      }),
    ),
    ...(['log', 'debug', 'info', 'warn', 'error'] as const).map((method) =>
      vi.spyOn(console, method).mockImplementation((...args: unknown[]) => {
        result.output.push(`console.${method} ${args.join(' ')}`);
      }),
    ),
  ];
  try {
    script(await load(), (text) => result.output.push(`note ${text}`));
  } catch (error) {
    result.error = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
  } finally {
    for (const spy of spies) spy.mockRestore();
    vi.unstubAllEnvs();
  }
  return result;
}

/** Ours and Powertools' output for the same script under the same environment. */
async function both(script: Script, env: Env = {}) {
  return { ours: await printed(ours, env, script), powertools: await printed(powertools, env, script) };
}

const flags = (log: Log, note: (text: string) => void) =>
  note(`info=${log.infoEnabled} debug=${log.debugEnabled}`);

/** One call of every kind, flags noted before and after each request begins. */
const everyCall: Script = (log, note) => {
  flags(log, note);
  log.debug('before any request', () => ({ a: 1 }));
  log.beginRequest('req-1');
  flags(log, note);
  log.debug('dynamodb', () => ({ command: 'GetItem', readCapacityUnits: 0.5 }));
  log.info('purge step', () => ({ conversationId: 'c-1', changed: 3, done: false }));
  log.infoWith('request', { method: 'GET', status: 200 }, '"Latency":3');
  log.warn('metrics not published', { error: 'socket closed' });
  log.error('request failed', { route: 'getConversation' });
  log.beginRequest('req-2');
  flags(log, note);
  log.debug('dynamodb', () => ({ command: 'Query' }));
  log.info('purge step', () => ({ done: true }));
  log.warn('again');
  log.error('again');
};

beforeEach(() => {
  vi.useFakeTimers({ toFake: ['Date'] });
  vi.setSystemTime(1_800_000_000_123);
});
afterEach(() => {
  vi.useRealTimers();
  vi.restoreAllMocks();
});

describe('the lines, byte for byte as Powertools Logger printed them', () => {
  it('every level: JSON on one line, DEBUG and INFO on stdout, WARN and ERROR on stderr', async () => {
    const { ours, powertools } = await both((log) => {
      log.beginRequest('req-1');
      log.setOrganization('org-1');
      log.debug('dynamodb', () => ({
        command: 'GetItem',
        nested: { deep: { list: [1, 'two', { three: 3 }] } },
      }));
      log.info('pdf transcript', () => ({ jobId: 'j-1', bytes: 1234, ms: 5 }));
      log.warn('upstream failed', { reason: 'timeout', details: { status: 504, retryAfter: undefined } });
      log.error('request failed', { route: 'getConversation', tags: ['a', null, 'b'] });
    });
    expect(ours.output).toEqual([
      'stdout {"level":"DEBUG","message":"dynamodb","timestamp":"2027-01-15T08:00:00.123Z","service":"conversation-service","sampling_rate":0,"requestId":"req-1","orgId":"org-1","command":"GetItem","nested":{"deep":{"list":[1,"two",{"three":3}]}}}\n',
      'stdout {"level":"INFO","message":"pdf transcript","timestamp":"2027-01-15T08:00:00.123Z","service":"conversation-service","sampling_rate":0,"requestId":"req-1","orgId":"org-1","jobId":"j-1","bytes":1234,"ms":5}\n',
      'stderr {"level":"WARN","message":"upstream failed","timestamp":"2027-01-15T08:00:00.123Z","service":"conversation-service","sampling_rate":0,"requestId":"req-1","orgId":"org-1","reason":"timeout","details":{"status":504}}\n',
      'stderr {"level":"ERROR","message":"request failed","timestamp":"2027-01-15T08:00:00.123Z","service":"conversation-service","sampling_rate":0,"requestId":"req-1","orgId":"org-1","route":"getConversation","tags":["a",null,"b"]}\n',
    ]);
    expect(ours).toEqual(powertools);
  });

  it('the request keys: none before the first request, the organization once known, forgotten per request', async () => {
    const { ours, powertools } = await both((log) => {
      log.warn('at load');
      log.beginRequest('req-1');
      log.warn('begun');
      log.setOrganization('org-1');
      log.warn('authenticated');
      log.error('export audit entry not written', { requestId: 'given by the caller' });
      log.warn('undefined by the caller', { requestId: undefined, orgId: undefined });
      log.beginRequest('req-2');
      log.error('next request');
      log.beginRequest('');
      log.error('an empty request id');
    });
    expect(ours.output).toHaveLength(7);
    expect(ours.output[0]).toContain('"sampling_rate":0}');
    expect(ours.output[3]).toContain('"requestId":"given by the caller","orgId":"org-1"}');
    expect(ours.output[4]).toContain('"sampling_rate":0}');
    expect(ours.output[5]).toContain('"requestId":"req-2"}');
    expect(ours.output[6]).toContain('"sampling_rate":0}');
    expect(ours).toEqual(powertools);
  });

  it('errors: name, location, message, stack, then cause (nested) and their own properties', async () => {
    class ProviderError extends Error {
      override name = 'ProviderError';
      status = 502;
      details = { provider: 'discord', retry: true, missing: undefined };
    }
    const root = new TypeError('socket hang up');
    const chain = new Error('upstream unavailable', { cause: new Error('fetch failed', { cause: root }) });
    const subclass = Object.assign(new ProviderError('Discord answered 502', { cause: 'rate limited' }), {
      inner: new RangeError('an error in a property'),
      amount: 10n,
    });
    const objectCause = new Error('object cause', { cause: { code: 'E1', error: new Error('inside') } });
    const noFrames = new Error('no frames');
    noFrames.stack = 'Error: no frames\n    at somewhere without a location';
    const noStack = new Error('no stack');
    delete noStack.stack;
    const aggregate = new AggregateError([root], 'all failed');
    const { ours, powertools } = await both((log) => {
      log.beginRequest('req-1');
      log.error('chain', { error: chain });
      log.error('subclass', { error: subclass, jobId: 'j-1' });
      log.warn('odd ones', { errors: [objectCause, noFrames, noStack, aggregate], nested: { error: root } });
    });
    const chained = JSON.parse(ours.output[0]?.slice('stderr '.length) ?? '').error;
    expect(Object.keys(chained)).toEqual(['name', 'location', 'message', 'stack', 'cause']);
    expect(chained.cause.cause).toMatchObject({ name: 'TypeError', message: 'socket hang up' });
    // The first frame of the form `(file:line:column)`: an anonymous function's frame has none.
    expect(chained.location).toMatch(/^file:.+:\d+$/);
    expect(JSON.parse(ours.output[1]?.slice('stderr '.length) ?? '').error).toMatchObject({
      name: 'ProviderError',
      cause: 'rate limited',
      status: 502,
      details: { provider: 'discord', retry: true },
      inner: { name: 'RangeError' },
      amount: '10',
    });
    expect(ours).toEqual(powertools);
  });

  it('values: BigInt, circular references, undefined, null and empty strings, arrays, odd keys', async () => {
    class Node {
      constructor(public name: string) {}
      self?: unknown;
      parent?: unknown;
    }
    const circular: Record<string, unknown> = { name: 'loop' };
    circular.self = circular;
    circular.list = [1, circular, 2];
    circular.trailing = [1, 2, circular];
    const instance = new Node('instance');
    instance.self = instance;
    const holder: Record<string, unknown> = { kind: 'holder' };
    const child = new Node('child');
    child.parent = holder;
    holder.child = child;
    const shared = { id: 1 };
    const sharedInstance = new Node('seen twice, not within itself');
    const nullPrototype = Object.assign(Object.create(null), { a: 1, constructor: 'dropped' });
    const { ours, powertools } = await both((log) => {
      log.beginRequest('req-1');
      log.warn('big', { big: 2n ** 70n, nested: { big: -5n, list: [1n] } });
      log.warn('circular', {
        circular,
        instance,
        holder,
        twice: [shared, shared, { again: shared }, sharedInstance, sharedInstance],
      });
      log.warn('empty', {
        undefinedValue: undefined,
        nullValue: null,
        emptyString: '',
        zero: 0,
        falseValue: false,
        nested: { undefinedValue: undefined, nullValue: null, emptyString: '', list: [undefined, null, ''] },
      });
      log.warn('arrays', {
        // biome-ignore lint/suspicious/noSparseArray: a hole, as a caller could pass one
        list: [1, [2, [3, [4]]], { a: [] }, , 5],
        objects: [{ a: 1 }, { b: { c: [{ d: 1 }] } }],
        empty: [],
      });
      log.warn('other objects', {
        date: new Date(0),
        map: new Map([[1, 2]]),
        set: new Set([1]),
        buffer: Buffer.from('hi'),
        fn: () => 1,
        symbol: Symbol('s'),
        nan: Number.NaN,
        infinite: Number.POSITIVE_INFINITY,
        negativeZero: -0,
        json: { toJSON: () => 'as JSON' },
        nullPrototype,
      });
      log.warn('odd keys', {
        constructor: 'dropped',
        nested: { constructor: 'dropped too', kept: 1 },
        ...JSON.parse('{"__proto__":{"polluted":true},"x":{"__proto__":1,"y":2}}'),
        '42': 'an index key',
        '': 'an empty key',
        'with "quotes"\n': 'escaped',
        function_name: 'takes the place of Powertools’ context key',
        cold_start: undefined,
        tenant_id: 't-1',
      });
    });
    expect(ours.output[0]).toContain('"big":"1180591620717411303424","nested":{"big":"-5","list":["1"]}');
    expect(ours.output[1]).toContain('"circular":{"name":"loop","list":[1,null,2],"trailing":[1,2]}');
    expect(ours.output[2]).toContain(
      '"zero":0,"falseValue":false,"nested":{"nullValue":null,"emptyString":""',
    );
    expect(ours.output[5]).toMatch(/^stderr \{"42":"an index key","level":"WARN"/);
    expect(ours).toEqual(powertools);
  });

  it('reserved keys are dropped, each with a warning line first', async () => {
    const { ours, powertools } = await both((log) => {
      log.beginRequest('req-1');
      log.warn('upstream failed', { reason: 'x', service: 'discord', status: 500 });
      log.error('all of them', { level: 1, message: 2, sampling_rate: 3, service: 4, timestamp: 5, kept: 6 });
      log.debug('in debug', () => ({ timestamp: 'now' }));
    });
    expect(ours.output[0]).toContain(
      '"message":"The key \\"service\\" is a reserved key and will be dropped."',
    );
    expect(ours.output).toHaveLength(10);
    expect(ours).toEqual(powertools);
  });

  it.each<[string, Env]>([
    ['no trace', {}],
    [
      'a full trace header',
      { _X_AMZN_TRACE_ID: 'Root=1-5759e988-bd862e3fe1be46a994272793;Parent=557abcec3ee5a047;Sampled=1' },
    ],
    ['a bare trace id', { _X_AMZN_TRACE_ID: ' 1-5759e988-bd862e3fe1be46a994272793 ' }],
    ['a header without Root', { _X_AMZN_TRACE_ID: 'Parent=557abcec3ee5a047;Sampled=0' }],
    ['an empty Root', { _X_AMZN_TRACE_ID: 'Root=;Sampled=0' }],
  ])('xray_trace_id: %s', async (_, env) => {
    const { ours, powertools } = await both((log) => {
      log.beginRequest('req-1');
      log.infoWith('request', { status: 200 }, '"Latency":3');
      log.warn('traced', { xray_trace_id: undefined });
      log.error('own trace key', { xray_trace_id: 'given' });
    }, env);
    expect(ours.output).toHaveLength(3);
    expect(ours).toEqual(powertools);
  });

  it('xray_trace_id from the invocation store when Lambda’s runtime provides one', async () => {
    const lambda = globalThis as { awslambda?: Record<string, unknown> };
    const saved = lambda.awslambda;
    lambda.awslambda = { InvokeStore: { getXRayTraceId: () => 'Root=1-from-the-store;Sampled=1' } };
    try {
      const { ours, powertools } = await both(
        (log) => {
          log.beginRequest('req-1');
          log.infoWith('request', { status: 200 }, undefined);
          log.warn('traced');
        },
        { _X_AMZN_TRACE_ID: 'Root=1-from-the-environment' },
      );
      expect(ours.output[0]).toContain('"xray_trace_id":"1-from-the-store"');
      expect(ours).toEqual(powertools);
    } finally {
      lambda.awslambda = saved;
    }
  });

  it.each<[string, Env]>([
    ['TZ unset', { TZ: undefined }],
    ['TZ=UTC', { TZ: 'UTC' }],
    ['TZ=Etc/UTC', { TZ: 'Etc/UTC' }],
    ['TZ=Europe/Paris', { TZ: 'Europe/Paris' }],
    ['TZ=America/St_Johns (a negative offset with minutes)', { TZ: 'America/St_Johns' }],
    ['TZ=Asia/Kolkata', { TZ: 'Asia/Kolkata' }],
    ['an unknown TZ (a warning on the console, then UTC)', { TZ: 'Mars/Olympus_Mons' }],
  ])('timestamps: %s', async (_, env) => {
    const { ours, powertools } = await both((log) => {
      log.beginRequest('req-1');
      log.infoWith('request', { status: 200 }, '"Latency":3');
      log.warn('a warning', { reason: 'x' });
      log.error('an error');
    }, env);
    expect(ours.output.length).toBeGreaterThanOrEqual(3);
    expect(ours).toEqual(powertools);
  });

  it.each<[string, Env]>([
    ['POWERTOOLS_DEV=true', { POWERTOOLS_DEV: 'true' }],
    ['POWERTOOLS_DEV=" On "', { POWERTOOLS_DEV: ' On ' }],
    ['POWERTOOLS_DEV=1, TZ=Europe/Paris', { POWERTOOLS_DEV: '1', TZ: 'Europe/Paris' }],
    ['POWERTOOLS_DEV=maybe (not dev)', { POWERTOOLS_DEV: 'maybe' }],
    ['POWERTOOLS_DEV=false', { POWERTOOLS_DEV: 'false' }],
  ])('dev mode, indented through the console: %s', async (_, env) => {
    const error = new Error('boom', { cause: new TypeError('root') });
    const { ours, powertools } = await both((log) => {
      everyCall(log, () => undefined);
      log.beginRequest('req-3');
      log.setOrganization('org-1');
      log.infoWith('request', { status: 200, nested: { a: [1] } }, '"Latency":3');
      log.error('with an error', { error, nested: { list: [1, { a: 2 }] } });
    }, env);
    expect(ours).toEqual(powertools);
  });
});

describe('the access line (infoWith)', () => {
  const ACCESS = {
    method: 'GET',
    path: '/api/conversations/42',
    route: 'getConversation',
    status: 200,
    durationMs: 3,
    callerKind: 'apiKey',
    credentialId: undefined,
    readCapacityUnits: 0.5,
  };
  const MEMBERS = '"_aws":{"Timestamp":1800000000123,"CloudWatchMetrics":[]},"Latency":3,"Requests":1';

  it.each<[string, Record<string, unknown>, string | undefined]>([
    ['the template', ACCESS, MEMBERS],
    ['no members', ACCESS, undefined],
    ['no attributes', {}, MEMBERS],
    ['a key of the request (the merge keeps its place)', { ...ACCESS, requestId: 'own' }, MEMBERS],
    ['a reserved key (dropped, with a warning)', { ...ACCESS, service: 'own' }, MEMBERS],
    ['a key of Powertools’ context', { ...ACCESS, function_name: 'own' }, MEMBERS],
    ['an empty string (dropped at the root)', { ...ACCESS, callerKind: '' }, MEMBERS],
    ['a null (dropped at the root)', { ...ACCESS, credentialId: null }, MEMBERS],
    ['a nested object and a BigInt', { ...ACCESS, nested: { a: [1, undefined] }, big: 1n }, MEMBERS],
    ['an index key', { ...ACCESS, 7: 'seven' }, MEMBERS],
  ])('prints what Powertools prints for info with the members merged: %s', async (_, own, more) => {
    for (const env of [{}, { _X_AMZN_TRACE_ID: 'Root=1-5759e988-bd862e3fe1be46a994272793;Sampled=1' }]) {
      const { ours, powertools } = await both((log) => {
        log.infoWith('request', own, more);
        log.beginRequest('req-1');
        log.infoWith('request', own, more);
        log.setOrganization('org-1');
        log.infoWith('request', own, more);
      }, env);
      expect(ours.output.filter((line) => line.includes('"message":"request"'))).toHaveLength(3);
      expect(ours).toEqual(powertools);
    }
  });

  it('an empty message: dropped from the line, as Powertools drops it', async () => {
    const { ours, powertools } = await both((log) => log.infoWith('', ACCESS, MEMBERS));
    expect(ours.output[0]).not.toContain('"message"');
    expect(ours).toEqual(powertools);
  });

  it('nothing when INFO is off, and says so beforehand', async () => {
    const { ours, powertools } = await both(
      (log, note) => {
        flags(log, note);
        log.infoWith('request', ACCESS, MEMBERS);
      },
      { POWERTOOLS_LOG_LEVEL: 'WARN' },
    );
    expect(ours.output).toEqual(['note info=false debug=false']);
    expect(ours).toEqual(powertools);
  });
});

describe('the level, chosen as Powertools chose it', () => {
  it.each<[string, Env]>([
    ...['TRACE', 'DEBUG', 'INFO', 'WARN', 'ERROR', 'CRITICAL', 'SILENT'].map((level): [string, Env] => [
      `POWERTOOLS_LOG_LEVEL=${level}`,
      { POWERTOOLS_LOG_LEVEL: level },
    ]),
    ['POWERTOOLS_LOG_LEVEL=" ERROR " (trimmed)', { POWERTOOLS_LOG_LEVEL: ' ERROR ' }],
    ['POWERTOOLS_LOG_LEVEL=debug (lowercase: unknown, INFO)', { POWERTOOLS_LOG_LEVEL: 'debug' }],
    ['POWERTOOLS_LOG_LEVEL=VERBOSE (unknown, INFO)', { POWERTOOLS_LOG_LEVEL: 'VERBOSE' }],
    ['unset (INFO)', { POWERTOOLS_LOG_LEVEL: undefined }],
    [
      'LOG_LEVEL=ERROR when POWERTOOLS_LOG_LEVEL is unset',
      { POWERTOOLS_LOG_LEVEL: undefined, LOG_LEVEL: 'ERROR' },
    ],
    ['LOG_LEVEL=DEBUG when POWERTOOLS_LOG_LEVEL is empty', { POWERTOOLS_LOG_LEVEL: ' ', LOG_LEVEL: 'DEBUG' }],
    [
      'POWERTOOLS_LOG_LEVEL=ERROR wins over LOG_LEVEL=DEBUG',
      { POWERTOOLS_LOG_LEVEL: 'ERROR', LOG_LEVEL: 'DEBUG' },
    ],
    [
      'an unknown POWERTOOLS_LOG_LEVEL hides LOG_LEVEL',
      { POWERTOOLS_LOG_LEVEL: 'verbose', LOG_LEVEL: 'ERROR' },
    ],
    ['ALC ERROR over POWERTOOLS_LOG_LEVEL=DEBUG', { AWS_LAMBDA_LOG_LEVEL: 'ERROR' }],
    ['ALC FATAL (CRITICAL)', { AWS_LAMBDA_LOG_LEVEL: 'FATAL' }],
    [
      'ALC DEBUG over POWERTOOLS_LOG_LEVEL=ERROR',
      { AWS_LAMBDA_LOG_LEVEL: 'DEBUG', POWERTOOLS_LOG_LEVEL: 'ERROR' },
    ],
    ['ALC TRACE', { AWS_LAMBDA_LOG_LEVEL: 'TRACE', POWERTOOLS_LOG_LEVEL: 'WARN' }],
    ['ALC warn (lowercase: ignored)', { AWS_LAMBDA_LOG_LEVEL: 'warn', POWERTOOLS_LOG_LEVEL: 'ERROR' }],
    ['ALC INFO, sampled (the warning)', { AWS_LAMBDA_LOG_LEVEL: 'INFO', POWERTOOLS_LOGGER_SAMPLE_RATE: '1' }],
    ['ALC WARN, sampled', { AWS_LAMBDA_LOG_LEVEL: 'WARN', POWERTOOLS_LOGGER_SAMPLE_RATE: '1' }],
    [
      'ALC ERROR, sampled (warning below the level)',
      { AWS_LAMBDA_LOG_LEVEL: 'ERROR', POWERTOOLS_LOGGER_SAMPLE_RATE: '1' },
    ],
    ['ALC DEBUG, sampled', { AWS_LAMBDA_LOG_LEVEL: 'DEBUG', POWERTOOLS_LOGGER_SAMPLE_RATE: '1' }],
  ])('%s', async (_, env) => {
    const { ours, powertools } = await both(everyCall, env);
    expect(ours.error).toBeUndefined();
    expect(ours).toEqual(powertools);
  });
});

describe('debug sampling, drawn at load and again for every request after the first', () => {
  it.each<[string, Env]>([
    [
      'rate 1 at WARN: every request at DEBUG, announced',
      { POWERTOOLS_LOG_LEVEL: 'WARN', POWERTOOLS_LOGGER_SAMPLE_RATE: '1' },
    ],
    ['rate 1 at INFO', { POWERTOOLS_LOG_LEVEL: 'INFO', POWERTOOLS_LOGGER_SAMPLE_RATE: ' 1 ' }],
    [
      'rate 1 at TRACE (nothing to raise)',
      { POWERTOOLS_LOG_LEVEL: 'TRACE', POWERTOOLS_LOGGER_SAMPLE_RATE: '1' },
    ],
    ['rate 0', { POWERTOOLS_LOG_LEVEL: 'WARN', POWERTOOLS_LOGGER_SAMPLE_RATE: '0' }],
    ['rate empty', { POWERTOOLS_LOG_LEVEL: 'WARN', POWERTOOLS_LOGGER_SAMPLE_RATE: '' }],
    ['rate 2 (out of range: 0)', { POWERTOOLS_LOG_LEVEL: 'WARN', POWERTOOLS_LOGGER_SAMPLE_RATE: '2' }],
    ['rate -1 (out of range: 0)', { POWERTOOLS_LOG_LEVEL: 'WARN', POWERTOOLS_LOGGER_SAMPLE_RATE: '-1' }],
  ])('%s', async (_, env) => {
    const { ours, powertools } = await both(everyCall, env);
    expect(ours).toEqual(powertools);
  });

  it('rate 1: the DEBUG lines, the announcement at load and from the second request on', async () => {
    const { ours } = await both(everyCall, {
      POWERTOOLS_LOG_LEVEL: 'WARN',
      POWERTOOLS_LOGGER_SAMPLE_RATE: '1',
    });
    const messages = ours.output.map((line) => /"message":"([^"]*)"/.exec(line)?.[1] ?? line);
    expect(messages.slice(0, 4)).toEqual([
      'Setting log level to DEBUG due to sampling rate',
      'note info=true debug=true',
      'before any request',
      'note info=true debug=true',
    ]);
    expect(messages).toContain('dynamodb');
    expect(messages.filter((message) => message.startsWith('Setting'))).toHaveLength(2);
  });

  it('the draw: randomInt(0, 100) / 100 ≤ the rate, once at load and once per later request', async () => {
    const draws = [50, 51, 0, 99];
    const randomInt = vi.fn(() => draws.shift() ?? 99);
    vi.doMock('node:crypto', async (original) => ({ ...(await original<object>()), randomInt }));
    try {
      const { ours } = await both(
        (log, note) => {
          flags(log, note);
          for (const id of ['r1', 'r2', 'r3', 'r4']) {
            log.beginRequest(id);
            flags(log, note);
          }
        },
        { POWERTOOLS_LOG_LEVEL: 'WARN', POWERTOOLS_LOGGER_SAMPLE_RATE: '0.5' },
      );
      expect(randomInt.mock.calls).toEqual([
        [0, 100],
        [0, 100],
        [0, 100],
        [0, 100],
      ]);
      expect(ours.output.filter((line) => line.startsWith('note'))).toEqual([
        'note info=true debug=true', // 0.50 ≤ 0.5, at load
        'note info=true debug=true', // the first request keeps it
        'note info=false debug=false', // 0.51
        'note info=true debug=true', // 0
        'note info=false debug=false', // 0.99
      ]);
    } finally {
      vi.doUnmock('node:crypto');
    }
  });
});

describe('the same failures at load', () => {
  it.each<[string, Env]>([
    ['a sample rate that is no number', { POWERTOOLS_LOGGER_SAMPLE_RATE: 'often' }],
    ['POWERTOOLS_LOGGER_LOG_EVENT that is no boolean', { POWERTOOLS_LOGGER_LOG_EVENT: 'yes' }],
    ['POWERTOOLS_LOGGER_LOG_EVENT empty', { POWERTOOLS_LOGGER_LOG_EVENT: '' }],
    ['POWERTOOLS_LOGGER_LOG_EVENT=" TRUE " (accepted)', { POWERTOOLS_LOGGER_LOG_EVENT: ' TRUE ' }],
  ])('%s', async (_, env) => {
    const { ours, powertools } = await both(everyCall, env);
    expect(ours).toEqual(powertools);
  });
});
