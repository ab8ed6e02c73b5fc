import type { ContactJobRun, ContactVolumeResult } from './protocol';
import { mark, section, table, type Verdict } from './report';

/** The contract: an erasure is complete within 60 s. */
export const ERASURE_TARGET_MS = 60_000;

const row = (what: string, run: ContactJobRun, unit: string) => [
  what,
  `${run.items.toLocaleString('en')} ${unit}`,
  `${(run.wallMs / 1000).toFixed(1)} s`,
  `${run.beginMs.toFixed(0)} ms`,
  String(run.steps),
  run.roundTrips.toLocaleString('en'),
  run.writeUnits.toLocaleString('en', { maximumFractionDigits: 1 }),
  run.readUnits.toLocaleString('en', { maximumFractionDigits: 1 }),
  (run.writeUnits / Math.max(1, run.items)).toFixed(2),
];

export function reportContactVolume(result: ContactVolumeResult, verdicts: Verdict[]): void {
  section(
    '9. Contacts: a merge of 1,000 conversations, an erasure of 10,000 messages (in-process, DynamoDB Local)',
  );
  console.log(
    table(
      ['job', '>items', '>wall', '>request', '>steps', '>round trips', '>WCU', '>RCU', '>WCU/item'],
      [
        row('merge (POST /api/visitors/{id}/merge + visitor-jobs)', result.merge, 'conversations'),
        row('erasure (DELETE /api/visitors/{id} + visitor-jobs)', result.erasure, 'messages'),
      ],
    ),
  );
  console.log(
    '  request = the transaction the API answers after (merge: both visitors, event, audit entry; erasure: the cleared profile, event, audit entry); the rest is the worker’s, in bounded steps (a merge page: 25 conversations; an erasure step: ≤ 100 messages), each resumable.',
  );
  const erasureOk = result.erasure.wallMs <= ERASURE_TARGET_MS;
  console.log(
    `  ${mark(erasureOk)} erasure of ${result.erasure.items.toLocaleString('en')} messages in ${(result.erasure.wallMs / 1000).toFixed(1)} s (contract: within ${ERASURE_TARGET_MS / 1000} s)`,
  );
  verdicts.push({
    what: 'visitor erasure (10,000 messages)',
    ok: erasureOk,
    detail: `${(result.erasure.wallMs / 1000).toFixed(1)} s, ${result.erasure.writeUnits.toFixed(0)} WCU`,
  });
  verdicts.push({
    what: 'visitor merge (1,000 conversations)',
    ok: result.merge.items > 0,
    detail: `${(result.merge.wallMs / 1000).toFixed(1)} s, ${result.merge.writeUnits.toFixed(0)} WCU, ${result.merge.roundTrips} round trips`,
  });
}
