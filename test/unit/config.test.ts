import { afterEach, describe, expect, it, vi } from 'vitest';

/** In Lambda, configuration fails fast on what every function needs, and only on that. */
const lambdaEnv = {
  AWS_LAMBDA_FUNCTION_NAME: 'conversations',
  TABLE_NAME: 'table',
  CURSOR_SIGNING_KEY_SECRET_ARN: 'arn:aws:secretsmanager:eu-west-1:123456789012:secret:cursor',
  PLATFORM_ADMIN_TOKEN_SHA256: '0'.repeat(64),
};

afterEach(() => {
  vi.unstubAllEnvs();
  vi.resetModules();
});

describe('configuration in a deployed function', () => {
  it('loads in a function the stack gives no mail sender, and refuses to send without one', async () => {
    for (const [name, value] of Object.entries(lambdaEnv)) vi.stubEnv(name, value);
    vi.stubEnv('TRANSCRIPT_EMAIL_FROM', '');
    const { config } = await import('../../shared/config');
    expect(config.tableName).toBe('table');
    expect(() => config.transcriptEmailFrom).toThrow(/TRANSCRIPT_EMAIL_FROM/);
  });

  it('loads in a function the stack gives no cursor key, and refuses to sign cursors without one', async () => {
    for (const [name, value] of Object.entries(lambdaEnv)) vi.stubEnv(name, value);
    vi.stubEnv('CURSOR_SIGNING_KEY_SECRET_ARN', '');
    vi.stubEnv('CURSOR_SIGNING_KEY', '');
    const { config } = await import('../../shared/config');
    expect(config.cursorSigningKeySecretArn).toBeUndefined();
    expect(() => config.cursorSigningKey).toThrow(/CURSOR_SIGNING_KEY/);
  });

  it('refuses to load without the table name', async () => {
    for (const [name, value] of Object.entries(lambdaEnv)) vi.stubEnv(name, value);
    vi.stubEnv('TABLE_NAME', '');
    await expect(import('../../shared/config')).rejects.toThrow(/TABLE_NAME/);
  });
});
