import { type GuardedRequest, type GuardedResponse, guardedRequest } from '../webhooks/client';
import { parseAllowedTargets, targetKey } from '../webhooks/targets';

/** What the probe asks: short, so any model answers quickly and cheaply. */
export const PROBE_PROMPT = 'Reply with the single word: pong';
const PROBE_MAX_TOKENS = 16;
export const REPLY_MAX_CHARS = 200;
const ERROR_MAX_CHARS = 200;
/** A chat completion of 16 tokens is small; anything far larger is not one. */
const MAX_RESPONSE_BYTES = 256 * 1024;

export interface ProbeTarget {
  baseUrl: string;
  model: string;
  apiKey: string | null;
}

export type ProbeOutcome =
  | { success: true; reply: string; latencyMs: number }
  | { success: false; error: string; latencyMs: number };

/**
 * The allow-list of AI_PROVIDER_ALLOWED_TARGETS: `host:port` entries as for webhooks, and bare hosts
 * (`localhost`, `127.0.0.1`) that admit every port of that host.
 */
export function providerAllowList(raw: string): { targets: Set<string>; hosts: Set<string> } {
  const targets = new Set<string>();
  const hosts = new Set<string>();
  for (const entry of parseAllowedTargets(raw)) {
    // `[::1]` is a bare IPv6 host; `[::1]:8080` and `host:8080` name a port.
    if (/^\[[^\]]+\]$/.test(entry) || !entry.includes(':')) hosts.add(entry);
    else targets.add(entry);
  }
  return { targets, hosts };
}

/** At most `max` characters, counted as people see them (never half a surrogate pair). */
export function truncateChars(text: string, max: number): string {
  const chars = Array.from(text);
  return chars.length <= max ? text : chars.slice(0, max).join('');
}

/** No part of the key in anything we return or log, whatever the provider echoes back. */
function redact(text: string, apiKey: string | null): string {
  if (!apiKey || apiKey.length < 4) return text;
  return text.split(apiKey).join('[redacted]');
}

function providerMessage(body: string): string | undefined {
  try {
    const parsed = JSON.parse(body) as { error?: { message?: unknown } | string; message?: unknown };
    const message =
      typeof parsed.error === 'string'
        ? parsed.error
        : typeof parsed.error?.message === 'string'
          ? parsed.error.message
          : typeof parsed.message === 'string'
            ? parsed.message
            : undefined;
    return message;
  } catch {
    return undefined;
  }
}

function replyOf(body: string): string | undefined {
  try {
    const parsed = JSON.parse(body) as { choices?: { message?: { content?: unknown }; text?: unknown }[] };
    const first = parsed.choices?.[0];
    const content = first?.message?.content ?? first?.text;
    return typeof content === 'string' ? content : undefined;
  } catch {
    return undefined;
  }
}

export type Send = (request: GuardedRequest) => Promise<GuardedResponse>;

/**
 * One OpenAI-compatible `POST {baseUrl}/chat/completions`, under the webhooks' target guard (https
 * and public addresses only, checked again at connect time; no redirects), unless the target is
 * allow-listed. The outcome is data: an upstream error or a timeout is `success: false`.
 * `latencyMs` is the whole exchange, connect to last byte.
 */
export async function probeProvider(
  target: ProbeTarget,
  options: { allowList: string; timeoutMs: number; send?: Send },
): Promise<ProbeOutcome> {
  const url = `${target.baseUrl.replace(/\/+$/, '')}/chat/completions`;
  const { targets, hosts } = providerAllowList(options.allowList);
  const allowed = new Set(targets);
  try {
    const parsed = new URL(url);
    if (hosts.has(parsed.hostname.toLowerCase())) allowed.add(targetKey(parsed));
  } catch {
    return { success: false, error: 'invalid_url', latencyMs: 0 };
  }
  const response = await (options.send ?? guardedRequest)({
    method: 'POST',
    url,
    headers: {
      'content-type': 'application/json',
      accept: 'application/json',
      'user-agent': 'conversation-service-ai-probe/1',
      ...(target.apiKey ? { authorization: `Bearer ${target.apiKey}` } : {}),
    },
    body: JSON.stringify({
      model: target.model,
      messages: [{ role: 'user', content: PROBE_PROMPT }],
      max_tokens: PROBE_MAX_TOKENS,
    }),
    timeoutMs: options.timeoutMs,
    allowed,
    maxResponseBytes: MAX_RESPONSE_BYTES,
  });
  const latencyMs = response.durationMs;
  const failed = (error: string): ProbeOutcome => ({
    success: false,
    error: truncateChars(redact(error, target.apiKey), ERROR_MAX_CHARS),
    latencyMs,
  });
  if (response.error !== null) return failed(response.error);
  const status = response.status ?? 0;
  if (status < 200 || status >= 300) {
    const message = providerMessage(response.body);
    return failed(message ? `http_${status}: ${message}` : `http_${status}`);
  }
  const reply = replyOf(response.body);
  if (reply === undefined) return failed('unexpected_response: no choices[0].message.content');
  return { success: true, reply: truncateChars(redact(reply, target.apiKey), REPLY_MAX_CHARS), latencyMs };
}
