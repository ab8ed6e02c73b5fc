import { Metrics, MetricUnit } from '@aws-lambda-powertools/metrics';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { MetricEntry, MetricUnit as UnitName } from '../../shared/metrics';

/**
 * shared/metrics.ts writes the EMF lines Powertools Metrics 2.35 printed: for the same calls, the
 * same bytes (the clock is frozen, so the timestamps match too), the same disabled rule, the same
 * errors and warnings. The reference below is the module as it was on Powertools.
 */

type Writer = Pick<
  typeof import('../../shared/metrics'),
  'publishMetrics' | 'publishFunctionMetrics' | 'captureColdStart'
>;
type Env = Readonly<Record<string, string | undefined>>;

const ON_LAMBDA: Env = {
  POWERTOOLS_METRICS_DISABLED: 'false',
  POWERTOOLS_DEV: 'false',
  SERVICE_FUNCTION: 'webhook-delivery',
  AWS_LAMBDA_INITIALIZATION_TYPE: 'on-demand',
  POWERTOOLS_SERVICE_NAME: undefined,
  POWERTOOLS_METRICS_NAMESPACE: undefined,
  POWERTOOLS_METRICS_FUNCTION_NAME: undefined,
};

/** The old module's subclass: `isDisabled()` is protected. */
class ServiceMetrics extends Metrics {
  get off(): boolean {
    return this.isDisabled();
  }
}

/** What shared/metrics.ts did through Powertools Metrics, built as the module was at load. */
function powertools(): Writer {
  const metrics = new ServiceMetrics({
    namespace: 'ConversationService',
    serviceName: 'conversation-service',
  });
  const functionName = process.env.SERVICE_FUNCTION || 'local';
  const publishMetrics: Writer['publishMetrics'] = (dimensions, entries) => {
    if (entries.length === 0 || metrics.off) return;
    for (const name in dimensions) metrics.addDimension(name, dimensions[name] as string);
    for (const [name, unit, value] of entries) metrics.addMetric(name, unit, value);
    metrics.publishStoredMetrics();
  };
  return {
    publishMetrics,
    publishFunctionMetrics: (entries) => publishMetrics({ function: functionName }, entries),
    captureColdStart: () => {
      if (!metrics.off) metrics.captureColdStartMetric(functionName);
    },
  };
}

async function ours() {
  vi.resetModules();
  return import('../../shared/metrics');
}

interface Printed {
  stdout: string;
  stderr: string;
  error?: string;
}

/**
 * What a writer prints (and throws) for `calls`, under `env` from before its load. Powertools in
 * dev mode prints through `console.log`, which is stdout here too.
 */
async function printed(load: () => Writer | Promise<Writer>, env: Env, calls: (writer: Writer) => void) {
  for (const [name, value] of Object.entries({ ...ON_LAMBDA, ...env })) vi.stubEnv(name, value);
  const result: Printed = { stdout: '', stderr: '' };
  const out = vi.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => {
    result.stdout += String(chunk);
    return true;
  });
  const err = vi.spyOn(process.stderr, 'write').mockImplementation((chunk: string | Uint8Array) => {
    result.stderr += String(chunk);
    return true;
  });
  const log = vi.spyOn(console, 'log').mockImplementation((line: string) => {
    result.stdout += `${line}\n`;
  });
  try {
    calls(await load());
  } catch (error) {
    result.error = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
  } finally {
    out.mockRestore();
    err.mockRestore();
    log.mockRestore();
    vi.unstubAllEnvs();
  }
  return result;
}

/** Ours and Powertools' output for the same calls under the same environment. */
async function both(calls: (writer: Writer) => void, env: Env = {}) {
  return { ours: await printed(ours, env, calls), powertools: await printed(powertools, env, calls) };
}

const lines = (output: Printed) => output.stdout.split('\n').filter((line) => line !== '');

beforeEach(() => {
  vi.useFakeTimers({ toFake: ['Date'] });
  vi.setSystemTime(1_800_000_000_123);
});
afterEach(() => {
  vi.useRealTimers();
});

describe('the EMF lines, byte for byte as Powertools Metrics printed them', () => {
  it('one dimension, one metric', async () => {
    const { ours, powertools } = await both((writer) =>
      writer.publishMetrics({ outcome: 'succeeded' }, [['WebhookDeliveries', MetricUnit.Count, 2]]),
    );
    expect(lines(ours)).toEqual([
      '{"_aws":{"Timestamp":1800000000123,"CloudWatchMetrics":[{"Namespace":"ConversationService","Dimensions":[["service","outcome"]],"Metrics":[{"Name":"WebhookDeliveries","Unit":"Count"}]}]},"service":"conversation-service","outcome":"succeeded","WebhookDeliveries":2}',
    ]);
    expect(ours).toEqual(powertools);
  });

  it('several dimensions and metrics in Milliseconds, Count and Bytes; a name given twice is one metric with an array', async () => {
    const entries: MetricEntry[] = [
      ['QueueJobAge', MetricUnit.Milliseconds, 1_500],
      ['Attempts', MetricUnit.Count, 3],
      ['PayloadBytes', MetricUnit.Bytes, 48_000],
      ['QueueJobAge', MetricUnit.Milliseconds, 20.5],
      ['QueueJobAge', MetricUnit.Milliseconds, 0],
    ];
    const { ours, powertools } = await both((writer) => {
      writer.publishMetrics({ outcome: 'failed', attempt: '3', queue: 'webhook-deliveries' }, entries);
      writer.publishMetrics({ outcome: 'succeeded' }, [['WebhookDeliveries', MetricUnit.Count, 1]]);
    });
    expect(lines(ours)).toHaveLength(2);
    expect(JSON.parse(lines(ours)[0] ?? '')).toMatchObject({ QueueJobAge: [1_500, 20.5, 0] });
    expect(ours).toEqual(powertools);
  });

  it('the per-function figures, under service + function', async () => {
    const { ours, powertools } = await both((writer) => {
      writer.publishFunctionMetrics([
        ['ExportBytes', MetricUnit.Bytes, 9_000],
        ['ExportRows', MetricUnit.Count, 120],
      ]);
      writer.publishFunctionMetrics([]);
    });
    expect(lines(ours)).toHaveLength(1);
    expect(ours).toEqual(powertools);
  });

  it('ColdStart under service + function_name, on the first call only', async () => {
    const { ours, powertools } = await both((writer) => {
      writer.captureColdStart();
      writer.publishFunctionMetrics([['EmailsSent', MetricUnit.Count, 1]]);
      writer.captureColdStart();
    });
    expect(lines(ours)[0]).toBe(
      '{"_aws":{"Timestamp":1800000000123,"CloudWatchMetrics":[{"Namespace":"ConversationService","Dimensions":[["service","function_name"]],"Metrics":[{"Name":"ColdStart","Unit":"Count"}]}]},"service":"conversation-service","function_name":"webhook-delivery","ColdStart":1}',
    );
    expect(lines(ours)).toHaveLength(2);
    expect(ours).toEqual(powertools);
  });

  it.each([
    ['provisioned concurrency', { AWS_LAMBDA_INITIALIZATION_TYPE: 'provisioned-concurrency' }],
    ['outside Lambda', { AWS_LAMBDA_INITIALIZATION_TYPE: undefined }],
  ])('no ColdStart with %s', async (_, env) => {
    const { ours, powertools } = await both((writer) => writer.captureColdStart(), env);
    expect(ours).toEqual({ stdout: '', stderr: '' });
    expect(ours).toEqual(powertools);
  });

  it('ColdStart under `local` when SERVICE_FUNCTION is unset', async () => {
    const { ours, powertools } = await both((writer) => writer.captureColdStart(), {
      SERVICE_FUNCTION: undefined,
    });
    expect(JSON.parse(ours.stdout)).toMatchObject({ function_name: 'local' });
    expect(ours).toEqual(powertools);
  });
});

describe('disabled as Powertools decided it', () => {
  const everything = (writer: Writer) => {
    writer.captureColdStart();
    writer.publishMetrics({ outcome: 'failed' }, [['WebhookDeliveries', MetricUnit.Count, 1]]);
    writer.publishFunctionMetrics([['EmailsSent', MetricUnit.Count, 1]]);
  };

  it.each<[string, Env, 'prints' | 'silent' | 'throws']>([
    ['POWERTOOLS_METRICS_DISABLED=true', { POWERTOOLS_METRICS_DISABLED: 'true' }, 'silent'],
    ['POWERTOOLS_METRICS_DISABLED=" YES "', { POWERTOOLS_METRICS_DISABLED: ' YES ' }, 'silent'],
    ['POWERTOOLS_METRICS_DISABLED=1', { POWERTOOLS_METRICS_DISABLED: '1' }, 'silent'],
    ['POWERTOOLS_METRICS_DISABLED=off', { POWERTOOLS_METRICS_DISABLED: 'off' }, 'prints'],
    [
      'POWERTOOLS_DEV=true, POWERTOOLS_METRICS_DISABLED unset',
      { POWERTOOLS_DEV: 'true', POWERTOOLS_METRICS_DISABLED: undefined },
      'silent',
    ],
    [
      'POWERTOOLS_DEV=on, POWERTOOLS_METRICS_DISABLED unset',
      { POWERTOOLS_DEV: 'on', POWERTOOLS_METRICS_DISABLED: undefined },
      'silent',
    ],
    [
      'POWERTOOLS_DEV=maybe (no boolean: not dev)',
      { POWERTOOLS_DEV: 'maybe', POWERTOOLS_METRICS_DISABLED: undefined },
      'prints',
    ],
    ['both unset', { POWERTOOLS_DEV: undefined, POWERTOOLS_METRICS_DISABLED: undefined }, 'prints'],
    [
      'POWERTOOLS_DEV=true, POWERTOOLS_METRICS_DISABLED=false (the latter wins)',
      { POWERTOOLS_DEV: 'true', POWERTOOLS_METRICS_DISABLED: 'false' },
      'prints',
    ],
    [
      'POWERTOOLS_METRICS_DISABLED=maybe (fails the load)',
      { POWERTOOLS_METRICS_DISABLED: 'maybe' },
      'throws',
    ],
  ])('%s', async (_, env, expected) => {
    const { ours, powertools } = await both(everything, env);
    const seen = ours.error !== undefined ? 'throws' : ours.stdout === '' ? 'silent' : 'prints';
    expect(seen).toBe(expected);
    if (expected === 'prints') expect(lines(ours)).toHaveLength(3);
    expect(ours).toEqual(powertools);
  });
});

describe('the same guards', () => {
  const refused: [string, (writer: Writer) => void][] = [
    [
      'a unit CloudWatch does not know',
      (writer) => writer.publishMetrics({ outcome: 'failed' }, [['Odd', 'Furlongs' as UnitName, 1]]),
    ],
    [
      'a value that is no number',
      (writer) =>
        writer.publishMetrics({ outcome: 'failed' }, [['Odd', MetricUnit.Count, '3' as unknown as number]]),
    ],
    ['an empty metric name', (writer) => writer.publishMetrics({}, [['', MetricUnit.Count, 1]])],
    [
      'a name given twice with two units',
      (writer) =>
        writer.publishMetrics({}, [
          ['Size', MetricUnit.Bytes, 1],
          ['Size', MetricUnit.Kilobytes, 1],
        ]),
    ],
    [
      'a metric named as a dimension',
      (writer) => writer.publishMetrics({ outcome: 'failed' }, [['outcome', MetricUnit.Count, 1]]),
    ],
    [
      'a metric named `service`',
      (writer) => writer.publishMetrics({ outcome: 'failed' }, [['service', MetricUnit.Count, 1]]),
    ],
    [
      '29 dimensions besides service (one too many)',
      (writer) => writer.publishMetrics(dimensions(29), [['A', MetricUnit.Count, 1]]),
    ],
  ];
  const accepted: [string, (writer: Writer) => void][] = [
    [
      'an empty dimension value (dropped, with a warning)',
      (writer) =>
        writer.publishMetrics({ outcome: ' ', attempt: '2' }, [['WebhookDeliveries', MetricUnit.Count, 1]]),
    ],
    [
      'NaN and Infinity (printed as null)',
      (writer) =>
        writer.publishMetrics({}, [
          ['A', MetricUnit.Count, Number.NaN],
          ['B', MetricUnit.Percent, Number.POSITIVE_INFINITY],
        ]),
    ],
    [
      '28 dimensions besides service (the most)',
      (writer) => writer.publishMetrics(dimensions(28), [['A', MetricUnit.Count, 1]]),
    ],
    [
      '100 metrics (EMF’s limit: one line)',
      (writer) => writer.publishMetrics({ outcome: 'failed' }, metrics(100)),
    ],
    [
      '99 metrics, one of them with 99 values (one line)',
      (writer) =>
        writer.publishMetrics({ outcome: 'failed' }, [
          ...metrics(98),
          ...Array.from({ length: 99 }, (_, i): MetricEntry => ['Many', MetricUnit.Count, i]),
        ]),
    ],
  ];

  it.each(refused)('refuses %s: throws the same error, prints nothing', async (_, calls) => {
    const { ours, powertools } = await both(calls);
    expect(ours.error).toEqual(expect.any(String));
    expect(ours.stdout).toBe('');
    expect(ours).toEqual(powertools);
  });

  it.each(accepted)('accepts %s', async (_, calls) => {
    const { ours, powertools } = await both(calls);
    expect(ours.error).toBeUndefined();
    expect(lines(ours)).toHaveLength(1);
    expect(ours).toEqual(powertools);
  });

  it('has Powertools’ units, same keys, same order', async () => {
    const { Unit } = await ours();
    expect(Object.entries(Unit)).toEqual(Object.entries(MetricUnit));
  });
});

describe('beyond EMF’s limits', () => {
  it('100 values of one metric: one line, as Powertools printed it', async () => {
    const values = Array.from(
      { length: 100 },
      (_, i): MetricEntry => ['QueueJobAge', MetricUnit.Milliseconds, i],
    );
    const { ours, powertools } = await both((writer) => writer.publishFunctionMetrics(values));
    expect(lines(ours)).toHaveLength(1);
    // Powertools flushed on the 100th value, then warned that it had nothing left to publish.
    expect(ours.stdout).toBe(powertools.stdout);
  });

  it('more than 100 metrics: cut where Powertools cut, and every line keeps the dimensions', async () => {
    const { ours, powertools } = await both((writer) =>
      writer.publishMetrics({ outcome: 'failed' }, metrics(130)),
    );
    expect(lines(ours)).toHaveLength(2);
    expect(lines(ours)[0]).toBe(lines(powertools)[0]);
    // Powertools' flush cleared the dimensions: its second line went under `service` alone.
    const second = JSON.parse(lines(ours)[1] ?? '');
    expect(second._aws.CloudWatchMetrics[0].Dimensions).toEqual([['service', 'outcome']]);
    expect(second._aws.CloudWatchMetrics[0].Metrics).toHaveLength(30);
    expect(second).toMatchObject({ outcome: 'failed', M100: 100, M129: 129 });
  });

  it('more than 100 values of one metric: the same', async () => {
    const values = Array.from(
      { length: 150 },
      (_, i): MetricEntry => ['QueueJobAge', MetricUnit.Milliseconds, i],
    );
    const { ours, powertools } = await both((writer) => writer.publishFunctionMetrics(values));
    expect(lines(ours)).toHaveLength(2);
    expect(lines(ours)[0]).toBe(lines(powertools)[0]);
    expect(JSON.parse(lines(ours)[1] ?? '')).toMatchObject({
      function: 'webhook-delivery',
      QueueJobAge: Array.from({ length: 50 }, (_, i) => 100 + i),
    });
  });
});

function dimensions(count: number): Record<string, string> {
  return Object.fromEntries(Array.from({ length: count }, (_, i) => [`d${i}`, `v${i}`]));
}

function metrics(count: number): MetricEntry[] {
  return Array.from({ length: count }, (_, i): MetricEntry => [`M${i}`, MetricUnit.Count, i]);
}
