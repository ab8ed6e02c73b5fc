import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { captureStdout } from './helpers/stdout-capture';

/**
 * `log.infoWith`, the access line's writer: the very document Powertools Logger prints for the same
 * message and attributes (same keys, same order, same values), with extra members at its root,
 * built without the general path's per-line cost. Each case loads the logger afresh, since it reads
 * its configuration (level, sample rate, time zone) once, at import. (logger-equivalence.test.ts
 * compares every path byte for byte, the clock frozen.)
 */

type Logger = typeof import('../../shared/logger')['log'];

async function loadLogger(env: Record<string, string> = {}): Promise<Logger> {
  vi.resetModules();
  vi.stubEnv('POWERTOOLS_LOG_LEVEL', 'INFO');
  vi.stubEnv('POWERTOOLS_DEV', '');
  vi.stubEnv('POWERTOOLS_LOGGER_SAMPLE_RATE', '');
  vi.stubEnv('TZ', '');
  vi.stubEnv('_X_AMZN_TRACE_ID', '');
  for (const [name, value] of Object.entries(env)) vi.stubEnv(name, value);
  return (await import('../../shared/logger')).log;
}

/** What Powertools itself prints for `info(message, attributes)`, configured as the service's is. */
async function powertoolsLine(message: string, attributes: Record<string, unknown>) {
  const { Logger } = await import('@aws-lambda-powertools/logger');
  const stdout = captureStdout();
  new Logger({ serviceName: 'conversation-service' }).info(message, attributes);
  // With debug sampling Powertools may first announce that it drew DEBUG: not the line compared.
  const line = stdout.jsonLines().find((printed) => printed.message === message);
  vi.restoreAllMocks();
  return line as Record<string, unknown>;
}

const REQUEST_ID = 'c6af9ac6-7b61-11e6-9a41-93e8deadbeef';

/** The request lines `infoWith` prints for `attributes` (plus MEMBERS), in a request begun here. */
function oursFor(log: Logger, attributes: Record<string, unknown>, orgId?: string) {
  log.beginRequest(REQUEST_ID);
  if (orgId) log.setOrganization(orgId);
  const stdout = captureStdout();
  log.infoWith('request', attributes, MEMBERS);
  const lines = stdout.jsonLines().filter((printed) => printed.message === 'request');
  vi.restoreAllMocks();
  return lines;
}

/** What Powertools prints for the same line: the request's keys, the attributes, the members. */
const referenceFor = (attributes: Record<string, unknown>, orgId?: string) =>
  powertoolsLine('request', {
    requestId: REQUEST_ID,
    ...(orgId ? { orgId } : {}),
    ...attributes,
    ...(JSON.parse(`{${MEMBERS}}`) as Record<string, unknown>),
  });

/** Key order matters (it is what a reader scans); the timestamps of two writes may differ by a ms. */
function comparable(line: Record<string, unknown> | undefined) {
  return { keys: Object.keys(line ?? {}), values: { ...line, timestamp: typeof line?.timestamp } };
}

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
const MEMBERS = '"_aws":{"Timestamp":1795549712900,"CloudWatchMetrics":[]},"Latency":3,"Requests":1';

beforeEach(() => {
  vi.restoreAllMocks();
});

afterEach(() => {
  vi.restoreAllMocks();
  vi.unstubAllEnvs();
});

describe('log.infoWith', () => {
  it.each([
    [
      'a request of an organization, traced by X-Ray, with debug sampling',
      true,
      {
        _X_AMZN_TRACE_ID: 'Root=1-5759e988-bd862e3fe1be46a994272793;Parent=557abcec3ee5a047;Sampled=1',
        POWERTOOLS_LOGGER_SAMPLE_RATE: '0.25',
      },
    ],
    ['a request refused before any organization is known', false, {}],
    ['a Lambda time zone (:UTC)', true, { TZ: ':UTC' }],
  ])('prints what Powertools prints, plus the members: %s', async (_case, withOrg, env) => {
    const log = await loadLogger(env);
    const orgId = withOrg ? '019a7c1f-0a11-7b22-9c33-0d44e55f6601' : undefined;
    const ours = oursFor(log, ACCESS, orgId);
    const reference = await referenceFor(ACCESS, orgId);
    expect(ours).toHaveLength(1);
    expect(comparable(ours[0])).toEqual(comparable(reference));
    expect(ours[0]?.timestamp).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
  });

  it('writes the line through the general path when the template would not hold: a repeated base key, a local time zone', async () => {
    for (const [env, attributes] of [
      [{}, { ...ACCESS, requestId: 'given by the caller' }],
      [{ TZ: 'Europe/Paris' }, ACCESS],
    ] as const) {
      const log = await loadLogger(env);
      const ours = oursFor(log, attributes);
      const reference = await referenceFor(attributes);
      expect(comparable(ours[0])).toEqual(comparable(reference));
      expect(String(ours[0]?.timestamp).endsWith('Z')).toBe(!('TZ' in env));
    }
  });

  it('writes nothing when INFO is off, and says so beforehand', async () => {
    const log = await loadLogger({ POWERTOOLS_LOG_LEVEL: 'WARN' });
    const stdout = captureStdout();
    expect(log.infoEnabled).toBe(false);
    log.infoWith('request', ACCESS, MEMBERS);
    expect(stdout.jsonLines()).toEqual([]);
  });
});
