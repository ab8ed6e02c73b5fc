import { describe, expect, it } from 'vitest';
import { fillPlaceholders, placeholdersIn } from '../../infra/local/invoke/placeholders';
import { findTarget, inferTarget } from '../../infra/local/invoke/targets';
import { samEnvironment, samTemplate } from '../../infra/local/sam-local';
import type { StackState } from '../../infra/local/stack-state';

describe('npm run invoke: placeholders', () => {
  it('fills every {{NAME}} and escapes values for the JSON string they sit in', () => {
    const text = '{"a":"Bearer {{KEY}}","b":"{\\"id\\":\\"{{ ID }}\\"}"}';
    expect(placeholdersIn(text)).toEqual(['KEY', 'ID']);
    const filled = JSON.parse(fillPlaceholders(text, { KEY: 'svc_sk_x"y', ID: 'i' }));
    expect(filled).toEqual({ a: 'Bearer svc_sk_x"y', b: '{"id":"i"}' });
  });

  it('names the placeholders it has no value for', () => {
    expect(() => fillPlaceholders('"{{DEMO_API_KEY}} {{OTHER}}"', { OTHER: '1' })).toThrow(
      'no value for {{DEMO_API_KEY}}',
    );
  });
});

describe('npm run invoke: which function an event is for', () => {
  const sqs = (arn: string) => ({ Records: [{ eventSource: 'aws:sqs', eventSourceARN: arn, body: '{}' }] });

  it('reads the worker from the file name, longest name first', () => {
    expect(inferTarget('x/conversation-purge-invalid.json', sqs('arn:q'))).toMatchObject({
      name: 'conversation-purge',
    });
    expect(inferTarget('x/webhook-delivery.json', sqs('arn:q'))).toMatchObject({ name: 'webhook-delivery' });
  });

  it('else from the queue an SQS event comes from; API and WebSocket events by their shape', () => {
    expect(inferTarget('mine.json', sqs('arn:aws:sqs:eu-west-1:1:prod-webhook-deliveries'))).toMatchObject({
      name: 'webhook-delivery',
    });
    expect(inferTarget('mine.json', { Records: [{ eventSource: 'aws:dynamodb' }] })).toBeUndefined();
    expect(inferTarget('mine.json', { httpMethod: 'GET', resource: '/api/me' })).toBe('api');
    expect(inferTarget('mine.json', { requestContext: { routeKey: '$connect' } })).toMatchObject({
      kind: 'websocket',
    });
  });

  it('knows every group, the realtime handler and the workers by name', () => {
    for (const name of ['platform', 'conversations', 'webhooks', 'realtime', 'stream-router'])
      expect(findTarget(name)?.name).toBe(name);
    expect(findTarget('routes')).toBeUndefined();
  });
});

describe('npm run sam:prepare', () => {
  const template = {
    Resources: {
      ConversationsFunction4EC0CD65: {
        Type: 'AWS::Lambda::Function',
        Metadata: { 'aws:cdk:path': 'ConversationService/ConversationsFunction/Resource' },
        Properties: { Environment: { Variables: { TABLE_NAME: { Ref: 'TableCD117FA1' } } } },
      },
      Table: { Type: 'AWS::DynamoDB::Table' },
    },
  };

  it('declares the local-only variables on every function, so --env-vars can set them', () => {
    const { template: sam, functions } = samTemplate(template);
    const variables = sam.Resources.ConversationsFunction4EC0CD65?.Properties?.Environment?.Variables;
    expect(variables).toMatchObject({ TABLE_NAME: { Ref: 'TableCD117FA1' }, AWS_ENDPOINT_URL_DYNAMODB: '' });
    expect(functions).toEqual([['ConversationsFunction4EC0CD65', 'ConversationsFunction']]);
    // The synthesized template itself is left as it was.
    expect(
      template.Resources.ConversationsFunction4EC0CD65.Properties.Environment.Variables,
    ).not.toHaveProperty('AWS_ENDPOINT_URL_DYNAMODB');
  });

  it('gives the running stack’s values, endpoints as the container reaches them, no platform token', () => {
    const state: StackState = {
      version: 1,
      pid: 1,
      startedAt: '',
      baseUrl: 'http://localhost:3000',
      endpoints: {},
      tableName: 'conversation-service-local',
      platformAdminToken: 'svc_pa_secret',
      demo: undefined,
      env: {
        AWS_ENDPOINT_URL_DYNAMODB: 'http://127.0.0.1:8000',
        CURSOR_SIGNING_KEY: 'k',
        REALTIME_ENDPOINT: 'http://127.0.0.1:3000',
      },
    };
    const env = samEnvironment(state, 'host.docker.internal');
    expect(env).toMatchObject({
      TABLE_NAME: 'conversation-service-local',
      AWS_ENDPOINT_URL_DYNAMODB: 'http://host.docker.internal:8000',
      REALTIME_ENDPOINT: 'http://host.docker.internal:3000',
      CURSOR_SIGNING_KEY: 'k',
      CURSOR_SIGNING_KEY_SECRET_ARN: '',
      WEBHOOK_SECRETS_KMS_KEY_ID: '',
    });
    expect(env.PLATFORM_ADMIN_TOKEN_SHA256).toMatch(/^[0-9a-f]{64}$/);
    expect(JSON.stringify(env)).not.toContain('svc_pa_secret');
  });
});
