import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';

/** The Discord bot token in AWS: one Secrets Manager read per five minutes, shared by concurrent callers. */

const reads = vi.hoisted(() => ({ count: 0, next: [] as (string | Error)[] }));
vi.mock('../../shared/secrets', () => ({
  getSecretString: async (secretId: string) => {
    reads.count += 1;
    expect(secretId).toBe('arn:aws:secretsmanager:eu-west-1:123456789012:secret:discord-AbCdEf');
    const next = reads.next.shift() ?? ' token-A \n';
    if (next instanceof Error) throw next;
    return next;
  },
}));

async function loadToken() {
  vi.resetModules();
  vi.stubEnv(
    'DISCORD_BOT_TOKEN_SECRET_ARN',
    'arn:aws:secretsmanager:eu-west-1:123456789012:secret:discord-AbCdEf',
  );
  return (await import('../../shared/discord/token')).discordBotToken;
}

describe('discordBotToken', () => {
  beforeEach(() => {
    reads.count = 0;
    reads.next = [];
    vi.useFakeTimers({ toFake: ['Date'] });
  });
  afterEach(() => {
    vi.useRealTimers();
    vi.unstubAllEnvs();
  });

  it('reads the secret once for concurrent callers and keeps it five minutes, trimmed', async () => {
    const token = await loadToken();
    expect(await Promise.all([token(), token(), token()])).toEqual(['token-A', 'token-A', 'token-A']);
    vi.setSystemTime(Date.now() + 299_000);
    await token();
    expect(reads.count).toBe(1);
    reads.next = ['token-B'];
    vi.setSystemTime(Date.now() + 2_000);
    expect(await token()).toBe('token-B');
    expect(reads.count).toBe(2);
  });

  it('does not keep a failed read: the next caller reads again', async () => {
    const token = await loadToken();
    reads.next = [new Error('Secrets Manager ThrottlingException')];
    await expect(token()).rejects.toThrow(/Throttling/);
    expect(await token()).toBe('token-A');
    expect(reads.count).toBe(2);
  });
});
