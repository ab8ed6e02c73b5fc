import { createHash } from 'node:crypto';

/**
 * Environment, read once at cold start. A deployed function fails fast when a required variable is
 * missing; the local stack and unit tests get development defaults instead.
 */
const env = process.env;
const inLambda = Boolean(env.AWS_LAMBDA_FUNCTION_NAME);

function required(name: string, localDefault: string): string {
  const value = env[name];
  if (value) return value;
  if (inLambda) throw new Error(`Missing required environment variable ${name}`);
  return localDefault;
}

function integer(name: string, fallback: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value <= 0)
    throw new Error(`${name} must be a positive integer, got "${raw}"`);
  return value;
}

/** Like `integer`, and 0 is allowed (a cache that keeps nothing). */
function nonNegativeInteger(name: string, fallback: number): number {
  return env[name] === '0' ? 0 : integer(name, fallback);
}

function platformAdminTokenHash(): string | undefined {
  if (env.PLATFORM_ADMIN_TOKEN_SHA256) return env.PLATFORM_ADMIN_TOKEN_SHA256.toLowerCase();
  if (env.PLATFORM_ADMIN_TOKEN) return createHash('sha256').update(env.PLATFORM_ADMIN_TOKEN).digest('hex');
  return undefined;
}

/** Seconds between attempts; n delays mean n + 1 attempts. */
function retrySchedule(
  raw: string | undefined,
  name = 'WEBHOOK_RETRY_SCHEDULE',
  fallback: readonly number[] = [30, 120, 600, 3600, 21600, 86400],
): readonly number[] {
  if (raw === undefined || raw.trim() === '') return fallback;
  const delays = raw.split(',').map((part) => Number(part.trim()));
  if (delays.some((delay) => !Number.isInteger(delay) || delay < 0)) {
    throw new Error(`${name} must be comma-separated whole seconds, got "${raw}"`);
  }
  return delays;
}

/**
 * Defaults of the tunable limits. The API description quotes these (with the variable's name), not
 * the values of one deployment, so the document is the same file wherever it is served.
 */
export const configDefaults = {
  operatorSessionTtlHours: 12,
  visitorTokenTtlHours: 24 * 30,
  exportRowLimit: 100_000,
  transcriptEmailsPerHour: 30,
  impersonationTtlMinutes: 60,
  aiProviderProbeTimeoutMs: 10_000,
} as const;

export const config = {
  serviceVersion: env.SERVICE_VERSION ?? '0.1.0',
  tableName: required('TABLE_NAME', 'conversation-service'),
  /**
   * Pagination cursors' HMAC keys (shared/cursor-keys.ts). In AWS the ARN of the secret holding
   * the key ring, read at cold start and rotated; locally (and under SAM) the key itself, used
   * when no ARN is set. Read when first needed, at the cold start of the functions that sign
   * cursors: the stack gives the ARN (and read access) to those alone.
   */
  get cursorSigningKeySecretArn(): string | undefined {
    return env.CURSOR_SIGNING_KEY_SECRET_ARN || undefined;
  },
  get cursorSigningKey(): string | undefined {
    return env.CURSOR_SIGNING_KEY_SECRET_ARN
      ? undefined
      : required('CURSOR_SIGNING_KEY', 'local-development-cursor-key');
  },
  /** SHA-256 (hex) of the platform admin token; the token itself never sits in a deployed function. */
  platformAdminTokenSha256: platformAdminTokenHash(),
  rateLimitPerMinute: integer('RATE_LIMIT_PER_MINUTE', 1200),
  /**
   * How often a function instance writes the usage it metered (requests, capacity units, searches):
   * at most one write per interval, and what it counted shows in usage within the interval.
   */
  usageFlushMs: integer('USAGE_FLUSH_MS', 10_000),
  /** How long a warm instance trusts a credential or organization it has already read. */
  authCacheTtlMs: nonNegativeInteger('AUTH_CACHE_TTL_MS', 10_000),
  operatorSessionTtlHours: integer('OPERATOR_SESSION_TTL_HOURS', configDefaults.operatorSessionTtlHours),
  visitorTokenTtlHours: integer('VISITOR_TOKEN_TTL_HOURS', configDefaults.visitorTokenTtlHours),
  maxBodyBytes: 256 * 1024,
  /** `host:port` pairs webhooks may target over plain HTTP and without the public-address check. */
  webhookAllowedTargets: env.WEBHOOK_ALLOWED_TARGETS ?? '',
  webhookRetrySchedule: retrySchedule(env.WEBHOOK_RETRY_SCHEDULE),
  /** Conversations one export may match; more is 422 `row_limit_exceeded` before any byte. */
  exportRowLimit: integer('EXPORT_ROW_LIMIT', configDefaults.exportRowLimit),
  /** Transcript e-mails an organization may send per hour (an open relay would be a spam cannon). */
  transcriptEmailsPerHour: integer('TRANSCRIPT_EMAILS_PER_HOUR', configDefaults.transcriptEmailsPerHour),
  /**
   * The sender of transcript e-mails: an address of an identity verified in SES. Read when first
   * needed: the stack sets it on the one function that sends mail, and every other function loads
   * this module too.
   */
  get transcriptEmailFrom(): string {
    return required('TRANSCRIPT_EMAIL_FROM', 'transcripts@conversation-service.local');
  },
  /** Impersonation sessions (platform admin acting as an operator) last at most this long. */
  /** The largest attachment an upload may declare (bytes); 25 MiB by default. */
  uploadMaxBytes: integer('UPLOAD_MAX_BYTES', 26_214_400),
  impersonationTtlMinutes: Math.min(
    60,
    integer('IMPERSONATION_TTL_MINUTES', configDefaults.impersonationTtlMinutes),
  ),
  /** Where chat-channel (Discord) calls go: configuration, so its own host is admitted (see shared/discord). */
  discordApiBaseUrl: (env.DISCORD_API_BASE_URL || 'https://discord.com/api/v10').replace(/\/+$/, ''),
  /** In AWS the secret holding the bot token (read at run time, cached); locally the token itself. */
  discordBotTokenSecretArn: env.DISCORD_BOT_TOKEN_SECRET_ARN || undefined,
  discordBotToken: env.DISCORD_BOT_TOKEN ?? '',
  /** Seconds before each retry of a Discord notification that failed (5xx, network); then the DLQ. */
  discordRetrySchedule: retrySchedule(
    env.DISCORD_RETRY_SCHEDULE,
    'DISCORD_RETRY_SCHEDULE',
    [10, 60, 300, 900, 3600],
  ),
  /**
   * AI provider probes: `host:port` (or a bare host: any port) admitted over plain HTTP and without
   * the public-address check. Empty in AWS; the local stack admits loopback by default.
   */
  aiProviderAllowedTargets: env.AI_PROVIDER_ALLOWED_TARGETS ?? '',
  aiProviderProbeTimeoutMs: integer('AI_PROVIDER_PROBE_TIMEOUT_MS', configDefaults.aiProviderProbeTimeoutMs),
} as const;

export type Config = typeof config;
