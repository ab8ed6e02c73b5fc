import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createBuckets, createQueues } from '../../infra/local/bootstrap';
import { invokeFile } from '../../infra/local/invoke/invocation';
import { presentResult } from '../../infra/local/invoke/presentation';
import { sampleEvents } from '../../infra/local/invoke/sample-events';
import { type InvokeSession, openSession } from '../../infra/local/invoke/session';
import { ROOT } from '../../infra/local/invoke/targets';
import { writeStackState } from '../../infra/local/stack-state';

/**
 * Every sample event in events/, run the way `npm run invoke` runs it (the state file of a running
 * stack, placeholders filled from its demo organization, the handler called in this process)
 * against the tests' shared stack, gets the answer a developer should see.
 */
type Expected = { status: number } | { failures: number };

const expected: Record<string, Expected> = {
  'events/apigw/admin-create-organization.json': { status: 201 },
  'events/apigw/analytics-csat.json': { status: 200 },
  'events/apigw/audit-list.json': { status: 200 },
  'events/apigw/visitors-list.json': { status: 200 },
  'events/apigw/conversations-create.json': { status: 201 },
  'events/apigw/uploads-create.json': { status: 201 },
  'events/apigw/search-conversations.json': { status: 200 },
  'events/apigw/conversations-get.json': { status: 200 },
  'events/apigw/conversations-list.json': { status: 200 },
  'events/apigw/custom-fields-list.json': { status: 200 },
  'events/apigw/events-list.json': { status: 200 },
  'events/apigw/exports-conversations.json': { status: 200 },
  'events/apigw/identity-me.json': { status: 200 },
  'events/apigw/kb-articles-search.json': { status: 200 },
  'events/apigw/kb-collections-list.json': { status: 200 },
  'events/apigw/platform-health.json': { status: 200 },
  'events/apigw/platform-unknown-route.json': { status: 404 },
  'events/apigw/webhooks-list.json': { status: 200 },
  'events/apigw/widget-create-visitor.json': { status: 201 },
  'events/apigw/operator-teams-list.json': { status: 200 },
  'events/apigw/operator-teams-operators.json': { status: 200 },
  'events/apigw/chatbot-get-config.json': { status: 200 },
  'events/apigw/chatbot-simulate.json': { status: 200 },
  'events/apigw/discord-list-channels.json': { status: 200 },
  'events/apigw/usage-get.json': { status: 200 },
  'events/websocket/realtime-connect.json': { status: 200 },
  'events/websocket/realtime-connect-without-token.json': { status: 401 },
  'events/sqs/webhook-delivery.json': { failures: 0 },
  'events/sqs/conversation-purge.json': { failures: 0 },
  // A visitor no one merged (its id is fresh): nothing to move.
  'events/sqs/visitor-jobs.json': { failures: 0 },
  'events/sqs/malware-scan-result.json': { failures: 0 },
  'events/dynamodb/search-index.json': { failures: 0 },
  // A job no one queued (its id is fresh): the worker leaves it be, as it does a finished one.
  'events/sqs/pdf-transcript.json': { failures: 0 },
  // No such channel in the demo organization: the notification is dropped, not retried.
  'events/sqs/discord-delivery.json': { failures: 0 },
  // Deliberately invalid: its one message is reported back, for SQS to retry and dead-letter.
  'events/sqs/conversation-purge-invalid.json': { failures: 1 },
  // The stream router's parts, each given its own records.
  'events/dynamodb/stream-router-webhook-fanout.json': { failures: 0 },
  'events/dynamodb/stream-router-realtime-push.json': { failures: 0 },
  'events/dynamodb/stream-router-conversation-changes.json': { failures: 0 },
  'events/dynamodb/stream-router-counters.json': { failures: 0 },
};

/** The resource names of the local stack (`infra/local/stack.ts`). */
const RESOURCE_PREFIX = 'conversation-service-local';

let session: InvokeSession;
let stateDir: string;
let stateFile: string;

beforeAll(async () => {
  const endpoints = inject('endpoints');
  const env: Record<string, string> = {
    AWS_ENDPOINT_URL_DYNAMODB: endpoints.dynamodb ?? '',
    AWS_ENDPOINT_URL_SQS: endpoints.sqs ?? '',
    AWS_ENDPOINT_URL_S3: endpoints.s3 ?? '',
    AWS_ENDPOINT_URL_SESV2: endpoints.ses ?? '',
    TABLE_NAME: inject('tableName'),
    CURSOR_SIGNING_KEY: inject('cursorSigningKey'),
    PLATFORM_ADMIN_TOKEN: inject('platformAdminToken'),
    REALTIME_ENDPOINT: inject('baseUrl'),
    RATE_LIMIT_PER_MINUTE: String(inject('rateLimitPerMinute')),
    // Already there: these only read back their URLs and names.
    ...(await createQueues(endpoints.sqs ?? '', RESOURCE_PREFIX)).env,
    ...(await createBuckets(endpoints.s3 ?? '', RESOURCE_PREFIX)),
  };
  // The invalid sample's error line is expected; keep the test output clean.
  process.env.POWERTOOLS_LOG_LEVEL = 'SILENT';
  Object.assign(process.env, env);
  // The shared stack runs without the demo organization: seed one, as `npm start` does.
  const { seedDemo } = await import('../../infra/local/seed');
  const demo = await seedDemo();
  stateDir = mkdtempSync(join(tmpdir(), 'invoke-test-'));
  stateFile = join(stateDir, 'local-stack.json');
  writeStackState(
    {
      version: 1,
      pid: process.pid,
      startedAt: new Date().toISOString(),
      baseUrl: inject('baseUrl'),
      endpoints,
      tableName: inject('tableName'),
      platformAdminToken: inject('platformAdminToken'),
      demo,
      env,
      isolateSpecs: inject('isolateSpecs'),
    },
    stateFile,
  );
  session = await openSession({ stateFile });
});

afterAll(async () => {
  await session?.close();
  if (stateDir) rmSync(stateDir, { recursive: true, force: true });
});

describe('npm run invoke', () => {
  it('has an expected outcome for every sample event, and a sample for every function and worker', async () => {
    expect(Object.keys(expected).sort()).toEqual(sampleEvents());
    expect(session.mode).toBe('attached');
  });

  it.each(Object.entries(expected))('%s', async (file, outcome) => {
    const invocation = await invokeFile(session, join(ROOT, file));
    const shown = presentResult(invocation) as {
      statusCode?: number;
      body?: unknown;
      batchItemFailures?: { itemIdentifier: string }[];
    };
    if ('status' in outcome) {
      expect(shown.statusCode, JSON.stringify(shown.body)).toBe(outcome.status);
    } else {
      expect(invocation.target.kind).toBe('worker');
      expect(shown.batchItemFailures).toHaveLength(outcome.failures);
    }
  });

  it('fills placeholders with real ids: the sample conversation is the demo organization’s', async () => {
    const invocation = await invokeFile(session, join(ROOT, 'events/apigw/conversations-get.json'));
    const { statusCode, body } = presentResult(invocation) as { statusCode: number; body: { id: string } };
    expect(statusCode).toBe(200);
    expect(body.id).toBe(session.values.DEMO_CONVERSATION_ID);
    expect(body).toMatchObject({ organizationId: session.values.DEMO_ORG_ID });
  });

  it('the CLI prints the answer alone on stdout and its progress on stderr', async () => {
    const run = await new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
      const child = spawn(
        process.execPath,
        [
          '--import',
          'tsx',
          'infra/local/invoke-cli.ts',
          'events/apigw/identity-me.json',
          '--stack-file',
          stateFile,
        ],
        { cwd: ROOT, env: { ...process.env, POWERTOOLS_LOG_LEVEL: 'INFO' } },
      );
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (chunk: Buffer) => {
        stdout += chunk.toString();
      });
      child.stderr.on('data', (chunk: Buffer) => {
        stderr += chunk.toString();
      });
      child.on('close', (code) => resolve({ code, stdout, stderr }));
    });
    expect(run.code, run.stderr).toBe(0);
    const answer = JSON.parse(run.stdout) as { statusCode: number; body: { organization?: { id: string } } };
    expect(answer.statusCode).toBe(200);
    expect(JSON.stringify(answer.body)).toContain(session.values.DEMO_ORG_ID);
    expect(run.stderr).toContain('using the running local stack');
    expect(run.stderr).toContain('identity: 200');
  });
});
