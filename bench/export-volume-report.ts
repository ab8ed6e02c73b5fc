import type { ExportRun, ExportVolumeResult, ExportVolumeSet } from './protocol';
import { mark, section, table, type Verdict } from './report';

/** Issue 9's figures. */
export const EXPORT_TARGETS = {
  /** Peak RSS of the export process at the reference size. */
  peakRssBytes: 100 * 1024 * 1024,
  referenceMessages: 100_000,
  /** A larger export's peak over the reference's, at most (memory must not grow with size). */
  growth: 0.1,
};

const mb = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(1)} MB`;
const count = (value: number) => Math.round(value).toLocaleString('en');
const seconds = (ms: number) => `${(ms / 1000).toFixed(1)} s`;

function whole(run: ExportRun, set: ExportVolumeSet): boolean {
  return (
    run.status === 200 && run.complete && run.rows === set.conversations && run.messages === set.messages
  );
}

/**
 * Section 7 of `npm run bench` (and of `export-volume-main.ts --report`): one row per export, the
 * judged rows run as Lambda runs the function; verdicts go to `verdicts`.
 */
export function reportExportVolume(result: ExportVolumeResult, verdicts: Verdict[]): void {
  const { peakRssBytes, referenceMessages, growth } = EXPORT_TARGETS;
  section(
    `7. Export volume — peak RSS ≤ ${mb(peakRssBytes)} exporting ${count(referenceMessages)} messages (2,000+ conversations), larger within +${growth * 100} %; messages/s; read units; PDF job`,
  );
  const reference = result.sets.find((set) => set.messages === referenceMessages);
  const rows: string[][] = [];
  for (const set of result.sets) {
    console.log(
      `  ${count(set.messages)} messages in ${count(set.conversations)} conversations (one of 5,000): ${count(set.seededItems)} items seeded with BatchWriteItem in ${seconds(set.seedMs)} (${count(set.messages / (set.seedMs / 1000))} messages/s)`,
    );
    for (const error of set.errors) {
      verdicts.push({ what: `export ${count(set.messages)} messages`, ok: false, detail: error });
      console.log(`  ✗ ${error}`);
    }
    for (const run of set.runs) {
      const label = `export ${count(set.messages)} messages ${run.format.toUpperCase()}`;
      const isWhole = whole(run, set);
      if (!isWhole)
        verdicts.push({
          what: `${label} complete (${run.heap} heap)`,
          ok: false,
          detail: `status ${run.status}, ${run.rows} rows, ${run.messages} messages${run.failure ? `, ${run.failure}` : ''}`,
        });
      let target = 'cross-check';
      if (run.heap === 'lambda') {
        const same = reference?.runs.find((each) => each.format === run.format && each.heap === 'lambda');
        if (set === reference || !same) {
          const ok = run.peakRss <= peakRssBytes;
          verdicts.push({
            what: `${label} peak RSS`,
            ok,
            detail: `${mb(run.peakRss)} (≤ ${mb(peakRssBytes)})`,
          });
          target = `${mark(ok)} ≤ ${mb(peakRssBytes)}`;
        } else {
          const ratio = run.peakRss / same.peakRss - 1;
          const ok = ratio <= growth;
          const change = `${ratio >= 0 ? '+' : ''}${(ratio * 100).toFixed(1)} %`;
          verdicts.push({
            what: `${label} peak RSS vs ${count(referenceMessages)}`,
            ok,
            detail: `${mb(run.peakRss)}, ${change} (≤ +${growth * 100} %)`,
          });
          target = `${mark(ok)} ${change} (≤ +${growth * 100} %)`;
        }
      }
      rows.push([
        count(set.messages),
        run.format.toUpperCase(),
        run.heap === 'lambda' ? `as Lambda: ${run.flags}` : `capped: ${run.flags}`,
        `${run.status} ${mark(isWhole)}`,
        count(run.rows),
        mb(run.bytes),
        seconds(run.elapsedMs),
        count(run.messages / (run.elapsedMs / 1000)),
        ((run.readUnits / run.messages) * 1000).toFixed(1),
        mb(run.baselineRss),
        mb(run.peakRss),
        `${mb(run.newSpacePeak)} / ${mb(run.oldSpacePeak)}`,
        target,
      ]);
    }
  }
  if (rows.length > 0)
    console.log(
      table(
        [
          '>messages',
          'format',
          'node heap flags',
          'status',
          '>rows',
          '>output',
          '>time',
          '>messages/s',
          '>RCU/1,000 msgs',
          '>baseline RSS',
          '>peak RSS',
          '>young / old gen',
          'target',
        ],
        rows,
      ),
    );
  console.log(
    `  ${result.runtime}; each export in a fresh process invoking the streaming handler as the local gateway does, into a sink that counts and drops (the fastest client); DynamoDB Local on this machine`,
  );
  console.log(
    `  judged: node started as Lambda's Node.js runtime starts it for the functions' ${result.functionMemoryMb} MB (${result.lambdaFlags})${result.wrapperFlags ? `, through the exports function's exec wrapper (infra/function-tuning.ts: ${result.wrapperFlags}, last wins)` : ''}; cross-check: the same export with V8's heap capped (${result.cappedFlags}): what the export itself needs`,
  );
  console.log(
    '  peak RSS: the kernel high-water mark (VmHWM) reset after loading; baseline: RSS after loading and a full collection; young / old gen: V8 committed sizes at their largest',
  );
  const runs = result.sets.flatMap((set) => set.runs);
  const judged = runs.filter((run) => run.heap === 'lambda');
  const capped = runs.filter((run) => run.heap === 'capped');
  if (judged.some((run) => run.peakRss > peakRssBytes) && capped.length > 0) {
    const most = (values: number[]) => mb(Math.max(...values));
    console.log(
      `  what bounds it: V8's young generation, committed up to ${most(judged.map((run) => run.newSpacePeak))} with the judged semi-space size, while the old generation stays at ${most(judged.map((run) => run.oldSpacePeak))};` +
        ` heap-capped, the same exports peak at ${most(capped.map((run) => run.peakRss))}${capped.every((run) => run.peakRss <= peakRssBytes) ? ` ${mark(true)}` : ''}`,
    );
  }
  console.log(
    '  RCU: read units DynamoDB Local reports for the whole request (auth, count, listing, conversations, messages) per 1,000 messages exported',
  );

  if (result.pdf) {
    const pdf = result.pdf;
    const limitMs = result.pdfTimeoutSeconds * 1000;
    const ok =
      pdf.status === 'completed' && pdf.isPdf && pdf.completedMs <= limitMs && pdf.worker.failures === 0;
    verdicts.push({
      what: 'PDF job (5,000 messages) completed',
      ok,
      detail: `${pdf.status} ${seconds(pdf.completedMs)} after the 202${pdf.isPdf ? '' : ', not a PDF'}`,
    });
    console.log(
      `  PDF transcript, ${count(pdf.messages)} messages: 202 → ${pdf.status} in ${(pdf.completedMs / 1000).toFixed(2)} s ${mark(ok)} (worker timeout ${result.pdfTimeoutSeconds} s; handler ${(pdf.worker.handlerMs / 1000).toFixed(2)} s), ${mb(pdf.pdfBytes)} PDF${pdf.isPdf ? '' : ' ✗ not a PDF'}`,
    );
    console.log(
      `    worker peak RSS ${mb(pdf.worker.peakRss)} (baseline ${mb(pdf.worker.baselineRss)}; young / old gen ${mb(pdf.worker.newSpacePeak)} / ${mb(pdf.worker.oldSpacePeak)}; as Lambda: ${pdf.worker.flags}); no goal set — the function has ${result.functionMemoryMb} MB`,
    );
  } else {
    verdicts.push({ what: 'PDF job', ok: false, detail: result.pdfError ?? 'not measured' });
    console.log(`  ✗ PDF job not measured: ${result.pdfError ?? 'no data set'}`);
  }
}
