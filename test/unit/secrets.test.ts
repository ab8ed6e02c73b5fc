import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import type { Statement } from '../../infra/iam/policy';
import { type KeyService, startKeyService } from '../../infra/local/key-service';
import { getSecretString } from '../../shared/secrets';

/**
 * Reading a secret through the Parameters and Secrets extension's HTTP API, against the local
 * stack's stand-in of it (the one every local function reaches): the caller is known by its session
 * token, and held to its role's policy as in AWS.
 */

const region = 'eu-west-1';
const account = '123456789012';
const cursorArn = `arn:aws:secretsmanager:${region}:${account}:secret:cursor-AbCdEf`;
const discordArn = `arn:aws:secretsmanager:${region}:${account}:secret:discord-AbCdEf`;

const allow = (resources: string[]): Statement => ({
  effect: 'Allow',
  actions: ['secretsmanager:GetSecretValue', 'secretsmanager:DescribeSecret'],
  resources,
  unsupported: false,
  policy: 'FunctionRoleDefaultPolicy',
});

let service: KeyService;

beforeAll(async () => {
  service = await startKeyService({
    region,
    account,
    keys: {},
    secrets: { [cursorArn]: '{"current":"k"}', [discordArn]: 'bot-token' },
    callers: new Map([
      [
        'session-events',
        { functionName: 'events', roleName: 'EventsRole', statements: [allow([cursorArn])] },
      ],
      ['session-platform', { functionName: 'platform', roleName: 'PlatformRole', statements: [] }],
    ]),
  });
  vi.stubEnv('PARAMETERS_SECRETS_EXTENSION_HTTP_PORT', new URL(service.endpoint).port);
});
afterEach(() => {
  vi.unstubAllEnvs();
  vi.stubEnv('PARAMETERS_SECRETS_EXTENSION_HTTP_PORT', new URL(service.endpoint).port);
});
afterAll(async () => {
  vi.unstubAllEnvs();
  await service.close();
});

describe('getSecretString', () => {
  it('reads the secret string the function is allowed to read', async () => {
    vi.stubEnv('AWS_SESSION_TOKEN', 'session-events');
    expect(await getSecretString(cursorArn)).toBe('{"current":"k"}');
  });

  it("is refused a secret its role's policy does not allow, with AWS's sentence", async () => {
    vi.stubEnv('AWS_SESSION_TOKEN', 'session-events');
    await expect(getSecretString(discordArn)).rejects.toThrow(
      /HTTP 400.*is not authorized to perform: secretsmanager:GetSecretValue on resource: .*discord/,
    );
    vi.stubEnv('AWS_SESSION_TOKEN', 'session-platform');
    await expect(getSecretString(cursorArn)).rejects.toThrow(/not authorized/);
  });

  it('is refused without a session token the extension knows', async () => {
    vi.stubEnv('AWS_SESSION_TOKEN', 'someone-else');
    await expect(getSecretString(cursorArn)).rejects.toThrow(/HTTP 401/);
    vi.stubEnv('AWS_SESSION_TOKEN', '');
    await expect(getSecretString(cursorArn)).rejects.toThrow(/AWS_SESSION_TOKEN/);
  });

  it('fails clearly when no extension listens', async () => {
    vi.stubEnv('AWS_SESSION_TOKEN', 'session-events');
    vi.stubEnv('PARAMETERS_SECRETS_EXTENSION_HTTP_PORT', '1');
    await expect(getSecretString(cursorArn)).rejects.toThrow(/extension unreachable/);
  });
});
