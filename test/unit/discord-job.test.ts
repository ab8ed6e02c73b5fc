import fc from 'fast-check';
import { describe, expect, expectTypeOf, it } from 'vitest';
import { regexes } from 'zod/v4/core';
import { type DiscordJob, parseDiscordJob } from '../../shared/discord/delivery-job';
import { nonceOf, notificationMessage } from '../../shared/discord/message';
import { discordEventTypes } from '../../shared/schemas/discord-events';
import { UUID_PATTERN } from '../../shared/schemas/hand-checks';
import * as z from '../../shared/schemas/zod';
import { notifiedConversation } from './helpers/discord-fixtures';
import { keysOf, MAX, NIL, uuidOf, uuidVariantsTaken, ZOD_UUID_VARIANTS } from './helpers/job-check-cases';

/**
 * The hand-written check of Discord notification jobs (shared/discord/delivery-job.ts) against the
 * zod schema the Discord delivery worker used before it dropped zod for its cold start: both take
 * and refuse the same jobs, and give back the same value: a copy, declared fields first in the
 * schema's order, then the keys it does not declare (kept by `z.looseObject`), at both levels.
 */
const reference = z.looseObject({
  orgId: z.uuid(),
  configId: z.uuid(),
  channelId: z.string().check(z.regex(/^\d{17,20}$/)),
  eventId: z.uuid(),
  event: z.enum(discordEventTypes),
  message: z.looseObject({ embeds: z.array(z.unknown()) }),
  rateLimited: z.optional(z.int().check(z.minimum(0))),
});

const ORG = '0190a3c4-7e51-7000-8000-0000000000aa';
const CONFIG = '0190a3c4-7e51-7abc-9000-0000000000bb';
const EVENT = '0190a3c4-7e51-7123-b000-0000000000dd';
const CHANNEL = '123456789012345678';
/** What the fan-out queues (shared/discord/fanout.ts), message included. */
const message = notificationMessage('new_conversation', notifiedConversation, {
  nonce: nonceOf(EVENT, CHANNEL),
  timestamp: '2026-11-21T10:00:00.000Z',
});
const job = {
  orgId: ORG,
  configId: CONFIG,
  channelId: CHANNEL,
  eventId: EVENT,
  event: 'new_conversation',
  message,
};
/** The job without one field. */
const without = (key: keyof typeof job): Record<string, unknown> => {
  const rest: Record<string, unknown> = { ...job };
  delete rest[key];
  return rest;
};
/** Holes read as undefined: zod's copy is dense. */
const sparse: unknown[] = [];
sparse[2] = 'third';

/** Both checks on one input: the same verdict, the same value. Returns the verdict. */
function bothAgree(input: unknown): boolean {
  const expected = reference.safeParse(input);
  if (!expected.success) {
    expect(() => parseDiscordJob(input)).toThrow(/^Invalid Discord job: /);
    return false;
  }
  const actual = parseDiscordJob(input);
  expect(actual).toStrictEqual(expected.data);
  expect(keysOf(actual)).toEqual(keysOf(expected.data));
  expect(JSON.stringify(actual)).toBe(JSON.stringify(expected.data));
  expect(actual).not.toBe(input);
  const { message } = input as { message: { embeds: unknown } };
  expect(actual.message).not.toBe(message);
  expect(actual.message.embeds).not.toBe(message.embeds);
  return true;
}

const accepted: [string, unknown][] = [
  ['a job as the fan-out queues it', job],
  ['a job rate-limited before', { ...job, rateLimited: 3 }],
  ['rateLimited 0', { ...job, rateLimited: 0 }],
  ['rateLimited -0', { ...job, rateLimited: -0 }],
  ['rateLimited, the largest safe integer', { ...job, rateLimited: Number.MAX_SAFE_INTEGER }],
  ['rateLimited present as undefined (not from JSON)', { ...job, rateLimited: undefined }],
  [
    'fields in another order',
    {
      rateLimited: 1,
      message,
      event: 'conversation_closed',
      eventId: EVENT,
      channelId: CHANNEL,
      configId: CONFIG,
      orgId: ORG,
    },
  ],
  ['extra keys, kept after the declared ones', { extra: 1, ...job, rateLimited: 2, later: { a: [1] } }],
  ['an extra key set to undefined or null', { ...job, gone: undefined, none: null }],
  ['extra keys in the message', { ...job, message: { nonce: 'n', embeds: [], flags: 4, content: '' } }],
  ['no embeds in a message of one key', { ...job, message: { embeds: [] } }],
  ['embeds of anything', { ...job, message: { embeds: [1, 'two', null, [3], { four: 4 }] } }],
  ['a sparse embeds array (not from JSON)', { ...job, message: { embeds: sparse } }],
  [
    'an own __proto__ key, dropped (at both levels)',
    JSON.parse(
      JSON.stringify({ ...job, message: { embeds: [], x: 1 }, y: 2 })
        .replace('"x":1', '"__proto__":{"x":1},"x":1')
        .replace('"y":2', '"__proto__":{"y":2},"y":2'),
    ),
  ],
  [
    'inherited keys, read and copied (not from JSON)',
    Object.assign(Object.create({ inherited: 1, orgId: ORG, rateLimited: 2 }), without('orgId'), {
      extra: 2,
    }),
  ],
  ['every event type', { ...job, event: 'conversation_assigned' }],
  ['a 17-digit channel id', { ...job, channelId: '12345678901234567' }],
  ['a 20-digit channel id', { ...job, channelId: '12345678901234567890' }],
  ['a channel id of zeros', { ...job, channelId: '00000000000000000' }],
  ['upper-case UUIDs', { ...job, orgId: ORG.toUpperCase(), eventId: EVENT.toUpperCase() }],
  ['the nil UUID', { ...job, configId: NIL }],
  ['the max UUID', { ...job, eventId: MAX }],
  [
    'versions 1 and 8, variants 8, 9, b and B',
    { ...job, orgId: uuidOf('1', '8'), configId: uuidOf('8', '9'), eventId: uuidOf('4', 'B') },
  ],
];

const rejected: [string, unknown][] = [
  ...(['orgId', 'configId', 'channelId', 'eventId', 'event', 'message'] as const).flatMap(
    (key): [string, unknown][] => [
      [`no ${key}`, without(key)],
      [`${key} present as undefined`, { ...job, [key]: undefined }],
    ],
  ),
  ['an empty object', {}],
  ['a 16-digit channel id', { ...job, channelId: '1234567890123456' }],
  ['a 21-digit channel id', { ...job, channelId: '123456789012345678901' }],
  ['a channel id with a letter', { ...job, channelId: '12345678901234567a' }],
  ['a channel id with a trailing line feed', { ...job, channelId: `${CHANNEL}\n` }],
  ['a channel id with a sign', { ...job, channelId: `-${CHANNEL}` }],
  ['a channel id in Arabic-Indic digits', { ...job, channelId: '١٢٣٤٥٦٧٨٩٠١٢٣٤٥٦٧٨' }],
  ['a numeric channel id', { ...job, channelId: 123456789012345680 }],
  ['an unknown event type', { ...job, event: 'conversation_reopened' }],
  ['a domain event type', { ...job, event: 'conversation.created' }],
  ['an event type in upper case', { ...job, event: 'NEW_CONVERSATION' }],
  ['an event type null', { ...job, event: null }],
  ['a message null', { ...job, message: null }],
  ['a message string', { ...job, message: JSON.stringify(message) }],
  ['a message array', { ...job, message: [message] }],
  ['a message without embeds', { ...job, message: { content: 'hello' } }],
  ['embeds an object', { ...job, message: { embeds: { 0: {} } } }],
  ['embeds null', { ...job, message: { embeds: null } }],
  ['embeds a string', { ...job, message: { embeds: '[]' } }],
  ['embeds undefined (not from JSON)', { ...job, message: { embeds: undefined } }],
  ['rateLimited -1', { ...job, rateLimited: -1 }],
  ['rateLimited 1.5', { ...job, rateLimited: 1.5 }],
  ['rateLimited NaN', { ...job, rateLimited: Number.NaN }],
  ['rateLimited Infinity', { ...job, rateLimited: Number.POSITIVE_INFINITY }],
  ['rateLimited past the safe integers', { ...job, rateLimited: 2 ** 53 }],
  ['rateLimited 1e300', { ...job, rateLimited: 1e300 }],
  ['rateLimited "3"', { ...job, rateLimited: '3' }],
  ['rateLimited null', { ...job, rateLimited: null }],
  ['rateLimited true', { ...job, rateLimited: true }],
  ['rateLimited a bigint (not from JSON)', { ...job, rateLimited: 3n }],
  ['a numeric id', { ...job, orgId: 42 }],
  ['a null id', { ...job, configId: null }],
  ['UUID version 0', { ...job, orgId: uuidOf('0', '8') }],
  ['UUID version 9', { ...job, orgId: uuidOf('9', '8') }],
  ['UUID variant 7', { ...job, eventId: uuidOf('7', '7') }],
  ['UUID variant c (Microsoft)', { ...job, eventId: uuidOf('7', 'c') }],
  ['the max UUID in upper case', { ...job, configId: MAX.toUpperCase() }],
  ['a UUID without hyphens', { ...job, orgId: ORG.replaceAll('-', '') }],
  ['a UUID with a trailing line feed', { ...job, orgId: `${ORG}\n` }],
  ['a UUID with a non-hex digit', { ...job, orgId: ORG.replace('a', 'g') }],
  ['an inherited rateLimited -1 (not from JSON)', Object.assign(Object.create({ rateLimited: -1 }), job)],
  ['null', null],
  ['undefined', undefined],
  ['a number', 42],
  ['a string', JSON.stringify(job)],
  ['true', true],
  ['an array', []],
  ['an array holding a job', [job]],
  ['an array carrying the fields of a job (not from JSON)', Object.assign([], job)],
];

describe('Discord job check', () => {
  it('uses zod’s UUID pattern and infers zod’s type', () => {
    expect(UUID_PATTERN.source).toBe(regexes.uuid().source);
    expect(UUID_PATTERN.flags).toBe(regexes.uuid().flags);
    expectTypeOf<DiscordJob>().toEqualTypeOf<z.infer<typeof reference>>();
  });

  it.each(accepted)('takes %s, as zod does', (_label, input) => {
    expect(bothAgree(input)).toBe(true);
  });

  it.each(rejected)('refuses %s, as zod does', (_label, input) => {
    expect(bothAgree(input)).toBe(false);
  });

  it('reads every message body as zod did (JSON, as the queue delivers it)', () => {
    for (const [, input] of [...accepted, ...rejected]) {
      if (input !== undefined && typeof input !== 'bigint') {
        const text = JSON.stringify(input, (_key, value: unknown) =>
          typeof value === 'bigint' ? Number(value) : value,
        );
        bothAgree(JSON.parse(text));
      }
    }
  });

  it('takes the same UUID versions and variants, in either case', () => {
    expect(uuidVariantsTaken((id) => bothAgree({ ...job, configId: id }))).toBe(ZOD_UUID_VARIANTS);
  });

  it('takes channel ids of 17 to 20 digits only', () => {
    const taken = Array.from({ length: 25 }, (_, i) => i).filter((length) =>
      bothAgree({ ...job, channelId: '9'.repeat(length) }),
    );
    expect(taken).toEqual([17, 18, 19, 20]);
  });

  it('agrees on arbitrary near-jobs', () => {
    // Weighted towards valid fields, so that a fair share of whole jobs is valid too.
    const id = fc.oneof(
      { weight: 8, arbitrary: fc.uuid() },
      fc.uuid().map((value) => value.toUpperCase()),
      fc.constantFrom(ORG, NIL, MAX, MAX.toUpperCase()),
      fc.string(),
    );
    const channelId = fc.oneof(
      { weight: 8, arbitrary: fc.stringMatching(/^\d{17,20}$/) },
      fc.stringMatching(/^\d{15,22}$/),
      fc.bigInt({ min: 0n, max: 10n ** 21n }).map(String),
      fc.string(),
    );
    const event = fc.oneof(
      { weight: 6, arbitrary: fc.constantFrom(...discordEventTypes) },
      fc.constantFrom('conversation.created', 'NEW_CONVERSATION', ''),
      fc.string(),
    );
    const count = fc.oneof(
      { weight: 8, arbitrary: fc.nat() },
      fc.integer(),
      fc.double(),
      fc.constantFrom(-0, 2 ** 53 - 1, 2 ** 53, Number.NaN, Number.POSITIVE_INFINITY, -1),
    );
    const value = fc.oneof(
      id,
      fc.string(),
      fc.boolean(),
      count,
      fc.constant(null),
      fc.constant(undefined),
      fc.array(fc.jsonValue(), { maxLength: 3 }),
      fc.dictionary(fc.string(), fc.jsonValue(), { maxKeys: 3 }),
    );
    const extras = fc.dictionary(
      fc.oneof(fc.string(), fc.constantFrom('embeds', 'rateLimited', 'orgId', 'message', '__proto__')),
      value,
      { maxKeys: 3 },
    );
    const nearMessage = fc.oneof(
      {
        weight: 8,
        arbitrary: fc
          .tuple(fc.array(fc.jsonValue(), { maxLength: 3 }), extras)
          .map(([embeds, more]) => ({ ...more, embeds })),
      },
      fc.record({ embeds: value, content: value }, { requiredKeys: [] }),
      value,
    );
    const nearJob = fc.oneof(
      {
        weight: 8,
        arbitrary: fc
          .tuple(
            fc.record(
              {
                orgId: id,
                configId: id,
                channelId,
                eventId: id,
                event,
                message: nearMessage,
                rateLimited: count,
              },
              { requiredKeys: ['orgId', 'configId', 'channelId', 'eventId', 'event', 'message'] },
            ),
            extras,
            fc.boolean(),
          )
          .map(([fields, more, extrasFirst]) =>
            extrasFirst ? { ...more, ...fields } : { ...fields, ...more },
          ),
      },
      fc.record(
        {
          orgId: value,
          configId: value,
          channelId: value,
          eventId: value,
          event: value,
          message: nearMessage,
          rateLimited: value,
          extra: value,
        },
        { requiredKeys: [] },
      ),
      fc.array(value),
      value,
    );
    let taken = 0;
    fc.assert(
      fc.property(nearJob, (input) => {
        if (bothAgree(input)) taken += 1;
        // As the queue delivers it, too.
        if (input !== undefined) bothAgree(JSON.parse(JSON.stringify(input)));
      }),
      { numRuns: 3_000 },
    );
    // Near-jobs, not noise: about a sixth are valid (~500 of 3,000), so both verdicts are compared.
    expect(taken).toBeGreaterThan(300);
  });
});
