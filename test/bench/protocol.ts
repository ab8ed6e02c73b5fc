/** What the measuring child processes report to run.ts: progress lines, then RESULT_MARKER + JSON. */
export const RESULT_MARKER = '@@RESULT ';

export interface Distribution {
  meanUs: number;
  p50Us: number;
  p99Us: number;
}

export interface WarmChainResult {
  warmup: number;
  requests: number;
  /** DocumentClient sends per measured request (1 = the conversation GetItem). */
  sendsPerRequest: number;
  chain: Distribution;
  stub: Distribution;
  /** The whole request with a plain async function in place of the mock: no stub cost to subtract. */
  plain: Distribution;
  plainSendsPerRequest: number;
  /** Responses other than 200 during the measured loop (must be 0). */
  failures: number;
  firstStatus: number;
}
