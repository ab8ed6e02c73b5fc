import { config } from '../config';
import { UpstreamError, ValidationError } from '../errors';
import { type GuardedRequest, type GuardedResponse, guardedRequest } from '../webhooks/client';
import { targetKey } from '../webhooks/targets';
import { discordBotToken } from './token';

const LOOKUP_TIMEOUT_MS = 5_000;
const POST_TIMEOUT_MS = 10_000;
/** Discord asks bots to name themselves this way. */
const USER_AGENT = `DiscordBot (https://github.com/conversation-service, ${config.serviceVersion})`;

/**
 * Discord's API is configuration (DISCORD_API_BASE_URL), not input: an `http` base (a development
 * fake) is admitted as is; an `https` base goes through the webhooks' guard like any target (public
 * addresses only, checked at connect time, no redirects).
 */
const allowed: ReadonlySet<string> = (() => {
  const base = new URL(config.discordApiBaseUrl);
  return new Set(base.protocol === 'http:' ? [targetKey(base)] : []);
})();

export type Send = (request: GuardedRequest) => Promise<GuardedResponse>;

async function call(
  method: 'GET' | 'POST',
  path: string,
  options: { body?: unknown; timeoutMs: number; send?: Send | undefined },
): Promise<GuardedResponse> {
  const token = await discordBotToken();
  return (options.send ?? guardedRequest)({
    method,
    url: `${config.discordApiBaseUrl}${path}`,
    headers: {
      authorization: `Bot ${token}`,
      'user-agent': USER_AGENT,
      accept: 'application/json',
      ...(options.body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    ...(options.body === undefined ? {} : { body: JSON.stringify(options.body) }),
    timeoutMs: options.timeoutMs,
    allowed,
  });
}

function json(body: string): Record<string, unknown> | undefined {
  try {
    const parsed: unknown = JSON.parse(body);
    return typeof parsed === 'object' && parsed !== null ? (parsed as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The channel as Discord knows it (`GET /channels/{id}` with the bot token): its name and type.
 * Discord's 403 (the bot may not see it) and 404 (no such channel) are the caller's input → 422 on
 * `channelId`; Discord unreachable, timing out, failing (5xx), refusing our token or rate-limiting
 * us is 502.
 */
export async function lookupChannel(channelId: string, send?: Send): Promise<{ name: string; type: number }> {
  const response = await call('GET', `/channels/${channelId}`, { timeoutMs: LOOKUP_TIMEOUT_MS, send });
  const status = response.status;
  if (response.error !== null || status === null) {
    throw new UpstreamError('Discord could not be reached', {
      service: 'discord',
      ...(response.error ? { reason: response.error } : {}),
    });
  }
  if (status === 403 || status === 404) {
    throw ValidationError.field(
      'channelId',
      status === 404
        ? 'Discord has no such channel'
        : 'The bot may not see this channel: invite it to the server and give it access',
      { reason: status === 404 ? 'channel_not_found' : 'channel_not_accessible' },
    );
  }
  if (status < 200 || status >= 300) {
    throw new UpstreamError(`Discord answered ${status}`, { service: 'discord', status });
  }
  const channel = json(response.body);
  if (!channel || typeof channel.type !== 'number' || !Number.isInteger(channel.type)) {
    throw new UpstreamError('Discord answered with something that is not a channel', { service: 'discord' });
  }
  return { name: typeof channel.name === 'string' ? channel.name : channelId, type: channel.type };
}

export type PostOutcome =
  | { kind: 'delivered' }
  /** 429: wait this long before the next attempt (Discord's `retry_after`). */
  | { kind: 'rate_limited'; retryAfterMs: number; global: boolean }
  /** Worth trying again later: unreachable, timeout, 5xx, our token refused (401). */
  | { kind: 'retry'; reason: string }
  /** Discord will never accept this one (400, 403 the bot lost access, 404 the channel is gone). */
  | { kind: 'rejected'; reason: string };

/** Seconds Discord asks us to wait: the body's `retry_after` (fractional), else `Retry-After`. */
function retryAfterMs(response: GuardedResponse): number {
  const fromBody = json(response.body)?.retry_after;
  if (typeof fromBody === 'number' && Number.isFinite(fromBody) && fromBody >= 0)
    return Math.ceil(fromBody * 1000);
  const header = response.headers['retry-after'];
  const seconds = Number(Array.isArray(header) ? header[0] : header);
  return Number.isFinite(seconds) && seconds >= 0 ? Math.ceil(seconds * 1000) : 1_000;
}

/** One `POST /channels/{id}/messages`, classified for the delivery worker. */
export async function postMessage(channelId: string, message: object, send?: Send): Promise<PostOutcome> {
  const response = await call('POST', `/channels/${channelId}/messages`, {
    body: message,
    timeoutMs: POST_TIMEOUT_MS,
    send,
  });
  const status = response.status;
  if (response.error !== null || status === null)
    return { kind: 'retry', reason: response.error ?? 'no_response' };
  if (status >= 200 && status < 300) return { kind: 'delivered' };
  if (status === 429) {
    return {
      kind: 'rate_limited',
      retryAfterMs: retryAfterMs(response),
      global: json(response.body)?.global === true,
    };
  }
  if (status >= 500 || status === 401 || status === 408) return { kind: 'retry', reason: `http_${status}` };
  return { kind: 'rejected', reason: `http_${status}` };
}
