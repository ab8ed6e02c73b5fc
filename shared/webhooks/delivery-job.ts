import { isRecord, isUuid } from '../schemas/hand-checks';
import type { DeliveryJob, FirstAttempt } from './dispatch';

const JOB_KEYS: ReadonlySet<string> = new Set([
  'orgId',
  'webhookId',
  'deliveryId',
  'notBefore',
  'manual',
  'first',
]);
const FIRST_KEYS: ReadonlySet<string> = new Set(['eventId', 'event', 'createdAt', 'payload']);

type Fields = Record<string, unknown>;

const invalid = (path: string, expected: string): Error =>
  new Error(`Invalid delivery job: ${path} must be ${expected}`);

/** An object of `allowed` keys only (zod: not null, not an array; every enumerable key declared). */
function strictObject(value: unknown, path: string, allowed: ReadonlySet<string>): Fields {
  if (!isRecord(value)) throw invalid(path, 'an object');
  for (const key in value) {
    if (!allowed.has(key)) throw invalid(`${path}.${key}`, 'absent (unknown key)');
  }
  return value;
}

function uuid(fields: Fields, key: string, path: string): string {
  const value = fields[key];
  if (!isUuid(value)) throw invalid(`${path}.${key}`, 'a UUID');
  return value;
}

function string(fields: Fields, key: string, path: string): string {
  const value = fields[key];
  if (typeof value !== 'string') throw invalid(`${path}.${key}`, 'a string');
  return value;
}

function firstAttempt(value: unknown): FirstAttempt {
  const fields = strictObject(value, 'job.first', FIRST_KEYS);
  return {
    eventId: uuid(fields, 'eventId', 'job.first'),
    event: string(fields, 'event', 'job.first'),
    createdAt: string(fields, 'createdAt', 'job.first'),
    payload: string(fields, 'payload', 'job.first'),
  };
}

/**
 * The job a delivery queue message carries (its body, parsed as JSON); throws an Error saying what
 * is wrong. Checked by hand, not with zod, for the worker's cold start: zod, loaded for this check
 * and for the field names of two schemas (now projected without zod: ../schemas/projections.ts), was 31 KB of the
 * worker's 113 KB minified bundle and most of what its import took beyond a bare DocumentClient
 * bundle's (median of fresh processes: ×1.07–1.20 that baseline with zod, ×1.02–1.07 without, on a
 * busy 2-core machine). It accepts and rejects exactly what the worker's `z.strictObject` did
 * (test/unit/delivery-job.test.ts keeps that schema as the reference): no key but these, the ids as
 * `z.uuid()` takes them, an optional field absent or of its type (present as undefined too, copied
 * as such, as zod does; JSON never has it). The result lists the fields in the schema's order, as
 * zod's did: a job re-queued for the rest of its delay reads the same.
 */
export function parseDeliveryJob(value: unknown): DeliveryJob {
  const fields = strictObject(value, 'job', JOB_KEYS);
  const job: DeliveryJob = {
    orgId: uuid(fields, 'orgId', 'job'),
    webhookId: uuid(fields, 'webhookId', 'job'),
    deliveryId: uuid(fields, 'deliveryId', 'job'),
  };
  if ('notBefore' in fields) {
    const { notBefore } = fields;
    if (notBefore !== undefined && typeof notBefore !== 'string') throw invalid('job.notBefore', 'a string');
    job.notBefore = notBefore;
  }
  if ('manual' in fields) {
    const { manual } = fields;
    if (manual !== undefined && typeof manual !== 'boolean') throw invalid('job.manual', 'a boolean');
    job.manual = manual;
  }
  if ('first' in fields) {
    job.first = fields.first === undefined ? undefined : firstAttempt(fields.first);
  }
  return job;
}
