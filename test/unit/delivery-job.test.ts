import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import * as z from '../../shared/schemas/zod';
import { parseDeliveryJob } from '../../shared/webhooks/delivery-job';
import { keysOf, MAX, NIL, uuidOf, uuidVariantsTaken, ZOD_UUID_VARIANTS } from './helpers/job-check-cases';

/**
 * The hand-written check of delivery queue messages (shared/webhooks/delivery-job.ts) against the
 * zod schema the webhook delivery worker used before it dropped zod for its cold start: both take
 * and refuse the same jobs, and give back the same value, fields in the same order.
 */
const reference = z.strictObject({
  orgId: z.uuid(),
  webhookId: z.uuid(),
  deliveryId: z.uuid(),
  notBefore: z.optional(z.string()),
  manual: z.optional(z.boolean()),
  first: z.optional(
    z.strictObject({ eventId: z.uuid(), event: z.string(), createdAt: z.string(), payload: z.string() }),
  ),
});

const ORG = '0190a3c4-7e51-7000-8000-0000000000aa';
const WEBHOOK = '0190a3c4-7e51-7abc-9000-0000000000bb';
const DELIVERY = '0190a3c4-7e51-7def-a000-0000000000cc';
const EVENT = '0190a3c4-7e51-7123-b000-0000000000dd';
const job = { orgId: ORG, webhookId: WEBHOOK, deliveryId: DELIVERY };
const first = {
  eventId: EVENT,
  event: 'conversation.created',
  createdAt: '2026-11-21T10:00:00.000Z',
  payload: '{"id":"e"}',
};

/** Both checks on one input: the same verdict, the same value. Returns the verdict. */
function bothAgree(input: unknown): boolean {
  const expected = reference.safeParse(input);
  if (!expected.success) {
    expect(() => parseDeliveryJob(input)).toThrow(/^Invalid delivery job: /);
    return false;
  }
  const actual = parseDeliveryJob(input);
  expect(actual).toStrictEqual(expected.data);
  expect(keysOf(actual)).toEqual(keysOf(expected.data));
  expect(actual).not.toBe(input);
  return true;
}

const accepted: [string, unknown][] = [
  ['a reference to a stored delivery', job],
  ['every field', { ...job, notBefore: '2026-11-21T10:15:00.000Z', manual: true, first }],
  [
    'fields in another order',
    { first, manual: false, notBefore: 'x', deliveryId: DELIVERY, webhookId: WEBHOOK, orgId: ORG },
  ],
  ['a manual retry', { ...job, manual: false }],
  ['a first attempt', { ...job, first }],
  ['empty strings where any string goes', { ...job, notBefore: '', first: { ...first, payload: '' } }],
  [
    'upper-case UUIDs',
    { ...job, orgId: ORG.toUpperCase(), first: { ...first, eventId: EVENT.toUpperCase() } },
  ],
  ['the nil UUID', { ...job, webhookId: NIL }],
  ['the max UUID', { ...job, deliveryId: MAX }],
  [
    'versions 1 and 8, variants 8, 9, b and B',
    {
      orgId: uuidOf('1', '8'),
      webhookId: uuidOf('8', '9'),
      deliveryId: uuidOf('4', 'b'),
      first: { ...first, eventId: uuidOf('7', 'B') },
    },
  ],
  [
    'optional fields present as undefined (not from JSON)',
    { ...job, notBefore: undefined, manual: undefined, first: undefined },
  ],
];

const rejected: [string, unknown][] = [
  ['an unknown key', { ...job, retry: 1 }],
  ['an unknown key set to undefined', { ...job, extra: undefined }],
  [
    'an own __proto__ key',
    JSON.parse(`{"orgId":"${ORG}","webhookId":"${WEBHOOK}","deliveryId":"${DELIVERY}","__proto__":{}}`),
  ],
  ['an unknown key in first', { ...job, first: { ...first, attempts: 0 } }],
  ['no orgId', { webhookId: WEBHOOK, deliveryId: DELIVERY }],
  ['no deliveryId', { orgId: ORG, webhookId: WEBHOOK }],
  ['an empty object', {}],
  ['first without payload', { ...job, first: { eventId: EVENT, event: 'e', createdAt: 'c' } }],
  ['first without eventId', { ...job, first: { event: 'e', createdAt: 'c', payload: 'p' } }],
  ['a numeric id', { ...job, orgId: 42 }],
  ['a null id', { ...job, webhookId: null }],
  ['notBefore as a number', { ...job, notBefore: 1_763_719_200_000 }],
  ['notBefore null', { ...job, notBefore: null }],
  ['manual as a string', { ...job, manual: 'true' }],
  ['manual as a number', { ...job, manual: 1 }],
  ['manual null', { ...job, manual: null }],
  ['first null', { ...job, first: null }],
  ['first an array', { ...job, first: [first] }],
  ['first a string', { ...job, first: JSON.stringify(first) }],
  ['a numeric payload in first', { ...job, first: { ...first, payload: 1 } }],
  ['a bad eventId in first', { ...job, first: { ...first, eventId: 'evt_1' } }],
  ['UUID version 0', { ...job, orgId: uuidOf('0', '8') }],
  ['UUID version 9', { ...job, orgId: uuidOf('9', '8') }],
  ['UUID version f', { ...job, orgId: uuidOf('f', '8') }],
  ['UUID variant 0 (NCS)', { ...job, orgId: uuidOf('7', '0') }],
  ['UUID variant 7', { ...job, orgId: uuidOf('7', '7') }],
  ['UUID variant c (Microsoft)', { ...job, orgId: uuidOf('7', 'c') }],
  ['UUID variant F', { ...job, orgId: uuidOf('7', 'F') }],
  ['the max UUID in upper case', { ...job, orgId: MAX.toUpperCase() }],
  ['a UUID without hyphens', { ...job, orgId: ORG.replaceAll('-', '') }],
  ['a UUID in braces', { ...job, orgId: `{${ORG}}` }],
  ['a UUID with a trailing line feed', { ...job, orgId: `${ORG}\n` }],
  ['a UUID with a leading space', { ...job, orgId: ` ${ORG}` }],
  ['a UUID one digit too long', { ...job, orgId: `${ORG}0` }],
  ['a UUID with a non-hex digit', { ...job, orgId: ORG.replace('a', 'g') }],
  ['a prefixed id', { ...job, orgId: `org_${ORG}` }],
  ['null', null],
  ['a number', 42],
  ['a string', JSON.stringify(job)],
  ['true', true],
  ['an array', []],
  ['an array holding a job', [job]],
  ['an array carrying the fields of a job (not from JSON)', Object.assign([], job)],
];

describe('delivery job check', () => {
  it.each(accepted)('takes %s, as zod does', (_label, input) => {
    expect(bothAgree(input)).toBe(true);
  });

  it.each(rejected)('refuses %s, as zod does', (_label, input) => {
    expect(bothAgree(input)).toBe(false);
  });

  it('reads every message body as zod did (JSON, as the queue delivers it)', () => {
    for (const [, input] of [...accepted, ...rejected]) {
      if (input !== undefined) bothAgree(JSON.parse(JSON.stringify(input)));
    }
  });

  it('takes the same UUID versions and variants, in either case', () => {
    expect(uuidVariantsTaken((id) => bothAgree({ ...job, deliveryId: id }))).toBe(ZOD_UUID_VARIANTS);
  });

  it('agrees on arbitrary near-jobs', () => {
    const id = fc.oneof(
      fc.uuid(),
      fc.uuid().map((value) => value.toUpperCase()),
      fc.constantFrom(ORG, NIL, MAX, MAX.toUpperCase()),
      fc.string(),
    );
    const value = fc.oneof(
      id,
      fc.string(),
      fc.boolean(),
      fc.integer(),
      fc.constant(null),
      fc.constant(undefined),
    );
    const firstAttempt = fc.oneof(
      {
        weight: 4,
        arbitrary: fc.record({
          eventId: id,
          event: fc.string(),
          createdAt: fc.string(),
          payload: fc.string(),
        }),
      },
      fc.record(
        { eventId: id, event: value, createdAt: value, payload: value, extra: value },
        { requiredKeys: [] },
      ),
      value,
      fc.array(value),
    );
    const nearJob = fc.oneof(
      {
        weight: 4,
        arbitrary: fc.record(
          {
            orgId: id,
            webhookId: id,
            deliveryId: id,
            notBefore: fc.string(),
            manual: fc.boolean(),
            first: firstAttempt,
          },
          { requiredKeys: ['orgId', 'webhookId', 'deliveryId'] },
        ),
      },
      fc.record(
        {
          orgId: value,
          webhookId: value,
          deliveryId: value,
          notBefore: value,
          manual: value,
          first: firstAttempt,
          extra: value,
        },
        { requiredKeys: [] },
      ),
      fc.array(value),
      value,
    );
    fc.assert(
      fc.property(nearJob, (input) => {
        bothAgree(input);
      }),
      { numRuns: 2_000 },
    );
  });
});
