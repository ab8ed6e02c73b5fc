import { type DiscordEventType, discordEventTypes } from '../schemas/discord-events';
import { isRecord, isUuid } from '../schemas/hand-checks';

/** The Discord message a job posts: its embeds, and whatever else the fan-out put in it (kept). */
export interface DiscordJobMessage {
  embeds: unknown[];
  [key: string]: unknown;
}

/**
 * One notification for one channel on the `discord-notifications` queue: what the fan-out writes
 * (./fanout.ts, with its own message type) and the worker reads.
 */
export interface DiscordJobFields<Message> {
  orgId: string;
  /** The channel configuration's id: a job for a channel removed and added again is dropped. */
  configId: string;
  /** Discord's id of the channel (a snowflake). */
  channelId: string;
  eventId: string;
  event: DiscordEventType;
  message: Message;
  /** How often Discord answered 429 to this job so far (absent at first). */
  rateLimited?: number | undefined;
}

/**
 * A job as the worker reads it: what the check below proves of a queued one, and the type zod
 * inferred for it; keys not listed are kept as they came.
 */
export interface DiscordJob extends DiscordJobFields<DiscordJobMessage> {
  [key: string]: unknown;
}

const SNOWFLAKE = /^\d{17,20}$/;
const EVENTS: ReadonlySet<unknown> = new Set(discordEventTypes);
const JOB_KEYS: ReadonlySet<string> = new Set([
  'orgId',
  'configId',
  'channelId',
  'eventId',
  'event',
  'message',
  'rateLimited',
]);
const MESSAGE_KEYS: ReadonlySet<string> = new Set(['embeds']);

type Fields = Record<string, unknown>;

const invalid = (path: string, expected: string): Error =>
  new Error(`Invalid Discord job: ${path} must be ${expected}`);

/** An object, as zod takes one: not null, not an array. */
function object(value: unknown, path: string): Fields {
  if (!isRecord(value)) throw invalid(path, 'an object');
  return value;
}

/**
 * The keys a `z.looseObject` keeps beyond its shape, copied after the declared ones as zod does:
 * every enumerable key (`for…in`, inherited ones too) but the declared and `__proto__` (which, set
 * on the copy, would replace its prototype).
 */
function copyUndeclared(from: Fields, to: Fields, declared: ReadonlySet<string>): void {
  for (const key in from) {
    if (!declared.has(key) && key !== '__proto__') to[key] = from[key];
  }
}

function uuid(fields: Fields, key: string): string {
  const value = fields[key];
  if (!isUuid(value)) throw invalid(`job.${key}`, 'a UUID');
  return value;
}

const isEvent = (value: unknown): value is DiscordEventType => EVENTS.has(value);

function message(value: unknown): DiscordJobMessage {
  const fields = object(value, 'job.message');
  const { embeds } = fields;
  if (!Array.isArray(embeds)) throw invalid('job.message.embeds', 'an array');
  // A new array of every index, as zod builds it (a hole reads as undefined).
  const copy: unknown[] = [];
  for (let i = 0; i < embeds.length; i++) copy.push(embeds[i]);
  const result: DiscordJobMessage = { embeds: copy };
  copyUndeclared(fields, result, MESSAGE_KEYS);
  return result;
}

/**
 * The job a `discord-notifications` message carries (its body, parsed as JSON); throws an Error
 * saying what is wrong. Checked by hand, not with zod, for the worker's cold start: zod, loaded for
 * this check and for the channel's event types and field names (now ../schemas/discord-events.ts and projections.ts),
 * was 31 KB of the worker's 82 KB minified bundle (51 KB without), and 5–17 ms of its import (median
 * of paired fresh processes, six series on a busy 2-core machine). It accepts and rejects exactly what the worker's `z.looseObject` did
 * (test/unit/discord-job.test.ts keeps that schema as the reference): the ids as `z.uuid()` takes
 * them, the channel id 17 to 20 digits, a known event, a message object with an `embeds` array,
 * `rateLimited` absent, undefined or a safe integer ≥ 0. Like zod, it returns a copy listing the
 * declared fields in the schema's order and then every other key as it came, in the message too: a
 * job re-queued after a 429 reads the same.
 */
export function parseDiscordJob(value: unknown): DiscordJob {
  const fields = object(value, 'job');
  const channelId = fields.channelId;
  if (typeof channelId !== 'string' || !SNOWFLAKE.test(channelId)) {
    throw invalid('job.channelId', 'a Discord channel id (17 to 20 digits)');
  }
  const event = fields.event;
  if (!isEvent(event)) throw invalid('job.event', `one of ${discordEventTypes.join(', ')}`);
  const job: DiscordJob = {
    orgId: uuid(fields, 'orgId'),
    configId: uuid(fields, 'configId'),
    channelId,
    eventId: uuid(fields, 'eventId'),
    event,
    message: message(fields.message),
  };
  if ('rateLimited' in fields) {
    const { rateLimited } = fields;
    if (
      rateLimited !== undefined &&
      (typeof rateLimited !== 'number' || !Number.isSafeInteger(rateLimited) || rateLimited < 0)
    ) {
      throw invalid('job.rateLimited', 'an integer of at least 0');
    }
    job.rateLimited = rateLimited;
  }
  copyUndeclared(fields, job, JOB_KEYS);
  return job;
}
