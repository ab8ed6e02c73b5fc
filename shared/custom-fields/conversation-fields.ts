import { TtlCache } from '../auth/ttl-cache';
import { clock } from '../clock';
import { customFields } from '../db/custom-fields';
import { ValidationError } from '../errors';
import { type FieldRules, valueProblems } from './values';

/**
 * How long a warm instance trusts the definitions it read, like the authentication cache: a
 * conversation write with custom fields then costs no extra round trip. Only acceptance trusts the
 * cache: a value it would refuse is checked again against a fresh, strongly consistent read first,
 * so a field or option created a moment ago (by another function) is usable at once. What the
 * cache can delay, by this long at most, is the other direction: values of a field just deleted or
 * deactivated, or of an option just removed, may still be accepted by an instance that read the
 * definitions before.
 */
export const FIELD_RULES_TTL_MS = 5_000;

const cache = new TtlCache<{ orgId: string; rules: FieldRules }>(FIELD_RULES_TTL_MS, 1_000, clock.nowMs);

export interface LoadedRules {
  rules: FieldRules;
  /** Read just now, strongly consistent: a refusal needs no second look. */
  fresh: boolean;
}

/** The organization's active conversation fields, from one strongly consistent Query. */
async function readRules(orgId: string): Promise<FieldRules> {
  const definitions = await customFields.all(orgId, { consistent: true });
  const rules: FieldRules = new Map(
    definitions
      .filter((definition) => definition.active && definition.target === 'conversation')
      .map((definition) => [
        definition.name,
        { type: definition.type, options: new Set(definition.options.map((option) => option.value)) },
      ]),
  );
  cache.set(orgId, { orgId, rules });
  return rules;
}

export const conversationFieldRules = {
  /**
   * What checking needs, from the instance cache when it holds the organization, else one Query.
   * Callers start it beside their own first read (the conversation's GetItem), so it costs no
   * round trip of its own.
   */
  load(orgId: string): Promise<LoadedRules> {
    const cached = cache.get(orgId);
    if (cached) return Promise.resolve({ rules: cached.rules, fresh: false });
    return readRules(orgId).then((rules) => ({ rules, fresh: true }));
  },

  /**
   * 422 naming `customFields.<name>` (and every other offending name in `fields`) unless every
   * value of `values` fits an active conversation field. At most one Query per request: none when
   * a warm cache accepts, one when the cache was cold or would refuse.
   */
  async check(
    orgId: string,
    values: Readonly<Record<string, unknown>>,
    loaded?: Promise<LoadedRules>,
  ): Promise<void> {
    if (Object.keys(values).length === 0) return;
    const { rules, fresh } = await (loaded ?? conversationFieldRules.load(orgId));
    let problems = valueProblems(rules, values);
    if (Object.keys(problems).length > 0 && !fresh) problems = valueProblems(await readRules(orgId), values);
    const first = Object.values(problems)[0];
    if (first !== undefined) throw new ValidationError(first, problems);
  },

  /** A definition of the organization changed in this instance: read them again next time. */
  forget(orgId: string): void {
    cache.deleteWhere((entry) => entry.orgId === orgId);
  },

  clear(): void {
    cache.clear();
  },
};
