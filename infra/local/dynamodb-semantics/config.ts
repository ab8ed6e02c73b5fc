/**
 * What the DynamoDB semantics layer does, from the environment of `npm start` (and of the tests):
 * each part can be turned off on its own, `DYNAMODB_AWS_SEMANTICS=off` turns off the whole layer
 * (the stack then talks to DynamoDB Local directly). docs/local.md, "DynamoDB as AWS runs it".
 */
export interface SemanticsConfig {
  /** `DYNAMODB_CONFLICTS`: transactions hold their items while in flight (TransactionConflict). */
  conflicts: boolean;
  /** `DYNAMODB_CONFLICT_HOLD_MS`: a TransactWriteItems stays in flight (and its answer waits) this much longer. */
  conflictHoldMs: number;
  /**
   * `DYNAMODB_TRANSACTION_MS`: how long AWS holds the items of a write it is running, at most. DynamoDB
   * Local runs every request of the machine one after another, so its time in flight includes waiting
   * behind all of them, which AWS's lock does not: a write holds its items while in flight, at most
   * this long after it arrived (0: the whole time in flight).
   */
  transactionMs: number;
  /** `DYNAMODB_INDEX_LAG_MS`: an index Query/Scan does not see an item written less than this ago (0: off). */
  indexLagMs: number;
  /** `DYNAMODB_PARTITION_LIMITS`: per partition 1,000 WCU/s and 3,000 RCU/s, table and each index. */
  partitionLimits: boolean;
  /** `DYNAMODB_PARTITION_DIVISOR`: both limits divided by this (local load runs). */
  partitionDivisor: number;
  /** `DYNAMODB_STALE_READS_MS`: an eventually consistent read does not see an item written less than this ago (0: off). */
  staleReadsMs: number;
  /** `DYNAMODB_LEDGER`: what was charged to each partition, for load runs (ledger.ts; off by default). */
  ledger: LedgerMode;
}

/**
 * `full`: the units charged, and index entries billed as AWS bills them (each written item read
 * before and after); `charges`: the units charged only (no extra reads, for load runs).
 */
export type LedgerMode = 'off' | 'full' | 'charges';

export const DEFAULT_SEMANTICS: Readonly<SemanticsConfig> = {
  conflicts: true,
  conflictHoldMs: 0,
  transactionMs: 25,
  indexLagMs: 300,
  partitionLimits: true,
  partitionDivisor: 1,
  staleReadsMs: 0,
  ledger: 'off',
};

/** AWS's per-partition limits (Developer Guide, "Best practices for designing and using partition keys"). */
export const PARTITION_WRITE_UNITS_PER_SECOND = 1_000;
export const PARTITION_READ_UNITS_PER_SECOND = 3_000;

type Env = Record<string, string | undefined>;

function flag(env: Env, name: string, fallback: boolean): boolean {
  const raw = env[name]?.trim().toLowerCase();
  if (raw === undefined || raw === '') return fallback;
  if (['on', 'true', '1', 'yes'].includes(raw)) return true;
  if (['off', 'false', '0', 'no'].includes(raw)) return false;
  throw new Error(`${name}=${env[name]}: expected on or off`);
}

function number(env: Env, name: string, fallback: number, minimum: number): number {
  const raw = env[name]?.trim();
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isFinite(value) || value < minimum)
    throw new Error(`${name}=${raw}: expected a number of at least ${minimum}`);
  return value;
}

function ledgerMode(env: Env): LedgerMode {
  const raw = env.DYNAMODB_LEDGER?.trim().toLowerCase();
  if (raw === undefined || raw === '' || ['off', 'false', '0', 'no'].includes(raw)) return 'off';
  if (['on', 'true', '1', 'yes', 'full'].includes(raw)) return 'full';
  if (raw === 'charges') return 'charges';
  throw new Error(`DYNAMODB_LEDGER=${env.DYNAMODB_LEDGER}: expected on (full), charges or off`);
}

/** Whether the layer runs at all (`DYNAMODB_AWS_SEMANTICS`, default on). */
export function semanticsEnabled(env: Env = process.env): boolean {
  return flag(env, 'DYNAMODB_AWS_SEMANTICS', true);
}

/** The parts of the layer, from `DYNAMODB_*` variables; a value it cannot read is an error, not a default. */
export function readSemanticsConfig(env: Env = process.env): SemanticsConfig {
  return {
    conflicts: flag(env, 'DYNAMODB_CONFLICTS', DEFAULT_SEMANTICS.conflicts),
    conflictHoldMs: number(env, 'DYNAMODB_CONFLICT_HOLD_MS', DEFAULT_SEMANTICS.conflictHoldMs, 0),
    transactionMs: number(env, 'DYNAMODB_TRANSACTION_MS', DEFAULT_SEMANTICS.transactionMs, 0),
    indexLagMs: number(env, 'DYNAMODB_INDEX_LAG_MS', DEFAULT_SEMANTICS.indexLagMs, 0),
    partitionLimits: flag(env, 'DYNAMODB_PARTITION_LIMITS', DEFAULT_SEMANTICS.partitionLimits),
    partitionDivisor: number(env, 'DYNAMODB_PARTITION_DIVISOR', DEFAULT_SEMANTICS.partitionDivisor, 1e-9),
    staleReadsMs: number(env, 'DYNAMODB_STALE_READS_MS', DEFAULT_SEMANTICS.staleReadsMs, 0),
    ledger: ledgerMode(env),
  };
}

/** One line for `npm start`'s progress: what the layer does. */
export function describeSemantics(config: SemanticsConfig): string {
  const parts: string[] = [];
  if (config.conflicts)
    parts.push(
      `transaction conflicts (items held ${config.transactionMs ? `≤ ${config.transactionMs} ms` : 'while in flight'}${config.conflictHoldMs ? ` +${config.conflictHoldMs} ms` : ''})`,
    );
  if (config.indexLagMs > 0) parts.push(`index lag ${config.indexLagMs} ms`);
  if (config.partitionLimits)
    parts.push(`partition limits${config.partitionDivisor !== 1 ? ` ÷${config.partitionDivisor}` : ''}`);
  if (config.staleReadsMs > 0) parts.push(`stale reads ${config.staleReadsMs} ms`);
  if (config.ledger !== 'off') parts.push(`ledger (${config.ledger}) at /__ledger`);
  return parts.length ? parts.join(', ') : 'nothing (every part off)';
}
