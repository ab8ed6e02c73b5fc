import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, inject, it, vi } from 'vitest';
import type { InvocationReport } from '../../infra/local/runtime';
import type { LocalStack } from '../../infra/local/stack';
import type { Template } from '../../infra/local/template';

/**
 * The local runtime as AWS would run the functions: each in its own isolate whose environment is
 * its template's, whose AWS calls its role must grant. A stack of this file's own (its functions
 * only, the shared emulators), with one grant taken out of the synthesized template.
 */

const PROBE = fileURLToPath(new URL('../fixtures/env-probe.ts', import.meta.url));
const DYNAMODB_PROBE = fileURLToPath(new URL('../fixtures/dynamodb-probe.ts', import.meta.url));
const CRASH_PROBE = fileURLToPath(new URL('../fixtures/crash-probe.ts', import.meta.url));
let stack: LocalStack;

/** The identity group's role without its table statement: every credential lookup is refused. */
function withoutIdentityTableGrant(template: Template): Template {
  const copy = structuredClone(template);
  const fn = Object.values(copy.Resources).find(
    (resource) =>
      resource.Type === 'AWS::Lambda::Function' &&
      (resource.Properties?.Tags as { Key: string; Value: string }[] | undefined)?.some(
        (tag) => tag.Key === 'service:route-group' && tag.Value === 'identity',
      ),
  );
  const role = fn?.Properties?.Role as { 'Fn::GetAtt': [string] } | undefined;
  if (!role) throw new Error('no identity function in the template');
  const roleId = role['Fn::GetAtt'][0];
  for (const resource of Object.values(copy.Resources)) {
    const properties = resource.Properties ?? {};
    if (resource.Type !== 'AWS::IAM::Policy') continue;
    if (!(properties.Roles as { Ref: string }[]).some((role) => role.Ref === roleId)) continue;
    const document = properties.PolicyDocument as { Statement: { Action: string | string[] }[] };
    document.Statement = document.Statement.filter(
      (statement) => ![statement.Action].flat().some((action) => action.startsWith('dynamodb:')),
    );
  }
  return copy;
}

beforeAll(async () => {
  const endpoints = inject('endpoints');
  Object.assign(process.env, {
    AWS_ENDPOINT_URL_DYNAMODB: endpoints.dynamodb,
    AWS_ENDPOINT_URL_SQS: endpoints.sqs,
    AWS_ENDPOINT_URL_S3: endpoints.s3,
    AWS_ENDPOINT_URL_SESV2: endpoints.ses,
    POWERTOOLS_LOG_LEVEL: 'ERROR',
    // Set in this process, declared by no template: no function may see it.
    ISOLATION_CANARY: 'leaked',
  });
  const { startLocalStack } = await import('../../infra/local/stack');
  stack = await startLocalStack({
    port: 0,
    seedDemo: false,
    runWorkers: false,
    platformAdminToken: inject('platformAdminToken'),
    env: { CURSOR_SIGNING_KEY: inject('cursorSigningKey') },
    adjustTemplate: withoutIdentityTableGrant,
  });
});

afterAll(async () => {
  await stack?.stop();
});

describe('a function in its isolate', () => {
  it('reads only the variables its template declares, Lambda sets, and the local endpoints', async () => {
    const { FunctionIsolate } = await import('../../infra/local/runtime');
    const spec = stack.isolateSpecs.find((each) => each.fn.name === 'identity');
    if (!spec) throw new Error('no identity function');
    const probe = new FunctionIsolate({ ...spec, entry: PROBE });
    const seen = (await probe.invoke({})) as Record<string, string>;
    await probe.close();

    // The template's variables, with their local values…
    const declared = stack.functions.identity?.environment ?? {};
    for (const [name, value] of Object.entries(declared)) expect(seen[name], name).toBe(value);
    expect(seen.TABLE_NAME).toBe(stack.tableName);
    // … the runtime's own, the SDK's endpoints and signing keys, tracing off, and nothing else (but the user-agent
    // suffix Powertools adds at import, as in Lambda: the isolate loads the DynamoDB meter, whose
    // logger is Powertools', before the handler).
    const additions = Object.keys(seen).filter((name) => !(name in declared));
    for (const name of additions)
      expect(name).toMatch(
        /^(AWS_(REGION|DEFAULT_REGION|EXECUTION_ENV|LAMBDA_\w+|ACCESS_KEY_ID|SECRET_ACCESS_KEY|SESSION_TOKEN|ENDPOINT_URL_\w+|SDK_UA_APP_ID)|LAMBDA_TASK_ROOT|LANG|TZ|PATH|NODE_PATH|RATE_LIMIT_PER_MINUTE|AUTH_CACHE_TTL_MS|WEBHOOK_\w+|DISCORD_API_BASE_URL|DISCORD_RETRY_SCHEDULE|AI_PROVIDER_\w+|POWERTOOLS_METRICS_DISABLED|POWERTOOLS_TRACE_ENABLED)$/,
      );
    expect(seen.ISOLATION_CANARY).toBeUndefined();
    // Another function's variable (the cursor key ring is the conversations group's) is not here.
    expect(stack.functions.conversations?.environment.CURSOR_SIGNING_KEY_SECRET_ARN).toBeDefined();
    expect(seen.CURSOR_SIGNING_KEY_SECRET_ARN).toBeUndefined();
    expect(seen.CURSOR_SIGNING_KEY).toBeUndefined();
  });

  it('is refused, as AWS refuses it, a call its role lost the grant for', async () => {
    const response = await fetch(`${stack.baseUrl}/api/me`, {
      headers: { Authorization: `Bearer ${inject('platformAdminToken')}` },
    });
    // Through the intact template (the shared stack) the same request reaches the handler's own
    // answer (the platform token has no organization: 403); without the grant it cannot get there.
    const intact = await fetch(`${inject('baseUrl')}/api/me`, {
      headers: { Authorization: `Bearer ${inject('platformAdminToken')}` },
    });
    expect(intact.status).toBe(403);
    expect(response.status).toBe(500);

    // What the function's SDK client gets: AWS's exception, status and sentence.
    const { FunctionIsolate } = await import('../../infra/local/runtime');
    const spec = stack.isolateSpecs.find((each) => each.fn.name === 'identity');
    if (!spec) throw new Error('no identity function');
    const probe = new FunctionIsolate({ ...spec, entry: DYNAMODB_PROBE });
    const denied = (await probe.invoke({})) as { name: string; message: string; status: number };
    await probe.close();
    expect(denied).toMatchObject({ name: 'AccessDeniedException', status: 400 });
    expect(denied.message).toBe(
      `User: arn:aws:sts::000000000000:assumed-role/${spec.fn.roleName}/identity is not authorized to perform: dynamodb:GetItem on resource: arn:aws:dynamodb:us-east-1:000000000000:table/${stack.tableName} because no identity-based policy allows the dynamodb:GetItem action`,
    );
    // The same probe as the conversations function (its grant intact) reads the table.
    const granted = stack.isolateSpecs.find((each) => each.fn.name === 'conversations');
    if (!granted) throw new Error('no conversations function');
    const allowed = new FunctionIsolate({ ...granted, entry: DYNAMODB_PROBE });
    expect(await allowed.invoke({})).toEqual({ ok: true });
    await allowed.close();
  });
});

describe('an isolate that dies', () => {
  /** The runtime's line about a dead isolate (the gateway logs each failed request besides). */
  const runtimeLines = (logged: { mock: { calls: unknown[][] } }) =>
    logged.mock.calls.map((args) => String(args[0])).filter((line) => line.startsWith('[function '));
  const isolateOf = (answer: unknown) =>
    (JSON.parse((answer as { body: string }).body) as { isolate: string }).isolate;

  it.each(['exit', 'throw'])(
    'fails what it had in flight, and one new isolate serves the next invocations (crash: %s)',
    async (crash) => {
      const { FunctionIsolate } = await import('../../infra/local/runtime');
      const spec = stack.isolateSpecs.find((each) => each.fn.name === 'identity');
      if (!spec) throw new Error('no identity function');
      const probe = new FunctionIsolate({ ...spec, entry: CRASH_PROBE });
      const logged = vi.spyOn(console, 'error').mockImplementation(() => undefined);
      try {
        const before = isolateOf(await probe.invoke({}));
        const waiting = probe.invoke({ crash: 'wait' });
        await expect(probe.invoke({ crash })).rejects.toThrow(/^the isolate exited/);
        await expect(waiting).rejects.toThrow(/^the isolate exited/);
        // At once, then again: a new isolate, kept (the old one's last words do not retire it).
        const after = isolateOf(await probe.invoke({}));
        expect(after).not.toBe(before);
        await sleep(100);
        expect(isolateOf(await probe.invoke({}))).toBe(after);
        expect(runtimeLines(logged)).toEqual([
          expect.stringMatching(
            /^\[function identity\] the isolate exited.*; 2 invocation\(s\) in flight failed, the next invocation starts a new isolate$/,
          ),
        ]);
      } finally {
        logged.mockRestore();
        await probe.close();
      }
    },
  );

  it('through the gateway: 502 for the requests it had, then answers from a new isolate', async () => {
    const { FunctionIsolate } = await import('../../infra/local/runtime');
    const platform = stack.runtime.get('platform');
    const probe = new FunctionIsolate({ ...platform.spec, entry: CRASH_PROBE });
    stack.runtime.isolates.set('platform', probe);
    const logged = vi.spyOn(console, 'error').mockImplementation(() => undefined);
    const health = (query = '') => fetch(`${stack.baseUrl}/api/health${query}`);
    try {
      const before = (await (await health()).json()) as { isolate: string };
      const waiting = health('?crash=wait');
      // Long enough for the request to reach the (warm) isolate.
      await sleep(300);
      const crashed = await health('?crash=exit');
      expect(crashed.status).toBe(502);
      expect((await waiting).status).toBe(502);
      const after = await health();
      expect(after.status).toBe(200);
      expect(((await after.json()) as { isolate: string }).isolate).not.toBe(before.isolate);
      expect(runtimeLines(logged)).toHaveLength(1);
    } finally {
      logged.mockRestore();
      stack.runtime.isolates.set('platform', platform);
      await probe.close();
    }
  });
});

describe('the DynamoDB usage an isolate reports with each invocation', () => {
  const headers = () => ({
    Authorization: `Bearer ${inject('platformAdminToken')}`,
    'Content-Type': 'application/json',
  });
  let orgId: string;
  let reports: InvocationReport[];
  let unsubscribe: () => void;

  beforeAll(async () => {
    const created = await fetch(`${stack.baseUrl}/api/admin/organizations`, {
      method: 'POST',
      headers: headers(),
      body: JSON.stringify({ name: 'Metered organization', modules: ['automation_api'] }),
    });
    expect(created.status).toBe(201);
    orgId = ((await created.json()) as { id: string }).id;
  });
  beforeEach(() => {
    reports = [];
    unsubscribe = stack.runtime.onInvocation((report) => reports.push(report));
  });
  afterEach(() => {
    unsubscribe();
    stack.runtime.setDynamoTrace(false);
  });

  const readOrganization = async () => {
    const response = await fetch(`${stack.baseUrl}/api/admin/organizations/${orgId}`, { headers: headers() });
    expect(response.status).toBe(200);
    const requestId = response.headers.get('x-request-id');
    const report = reports.find((each) => each.requestId === requestId);
    if (!report) throw new Error(`no report for request ${requestId}`);
    return report;
  };

  it("is the request's own, in by the time its answer is: commands, attempts, round trips, read units", async () => {
    const report = await readOrganization();
    expect(report).toMatchObject({ function: 'admin', kind: 'api', outcome: 'answered' });
    // The organization's GetItem (and, in a fresh rate-limit window, the lease's UpdateItem).
    expect(report.usage.commands).toBeGreaterThanOrEqual(1);
    expect(report.usage.attempts).toBe(report.usage.commands);
    expect(report.usage.trips).toBeGreaterThanOrEqual(1);
    expect(report.usage.readUnits).toBeGreaterThan(0);
    expect(report.usage.throttles).toBe(0);
    // Untraced unless asked: no stack capture per command on the plain path.
    expect(report.usage.trace).toBeUndefined();
  });

  it('traced, lists each command with its units by table and the code that sent it', async () => {
    stack.runtime.setDynamoTrace(true);
    const report = await readOrganization();
    const trace = report.usage.trace ?? [];
    expect(trace).toHaveLength(report.usage.commands);
    const read = trace.find((command) => command.origin.some((file) => file.startsWith('functions/admin/')));
    expect(read).toMatchObject({ operation: 'GetItem', newTrip: true });
    expect(read?.readUnits).toBeGreaterThan(0);
    expect(read?.unitsBy.table).toBe(read?.readUnits);
    expect(read?.pk).toContain(orgId);
    expect(trace.reduce((sum, command) => sum + command.readUnits, 0)).toBe(report.usage.readUnits);
  });

  it('keeps concurrent invocations of one isolate apart', async () => {
    stack.runtime.setDynamoTrace(true);
    const concurrent = await Promise.all(Array.from({ length: 4 }, () => readOrganization()));
    for (const report of concurrent) {
      const routeReads = (report.usage.trace ?? []).filter((command) =>
        command.origin.some((file) => file.startsWith('functions/admin/')),
      );
      expect(routeReads.map((command) => command.operation)).toEqual(['GetItem']);
    }
  });
});
