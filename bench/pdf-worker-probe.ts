/**
 * The PDF transcript worker in a process of its own, as Lambda runs it: bundled with the CDK
 * options (and the fonts CDK copies beside it), run by plain `node --expose-gc`, fed by the local
 * queue consumer from the real `pdf-jobs` queue. Prints `ready` once loaded and polling, then, after
 * its first job, `@@RESULT <PdfWorkerRun>` (peak RSS while handling it, handler time) and exits.
 *
 * Input (environment): the local stack's variables and `BENCH_PDF_QUEUE_URL` / `_ARN`.
 */
import type { SQSEvent } from 'aws-lambda';
import { handler } from '../functions/workers/pdf-transcript';
import { startQueueConsumer } from '../infra/local/consumers/queue-poller';
import { settledRss, watchPeakRss } from './peak-rss';
import { type PdfWorkerRun, RESULT_MARKER } from './protocol';

const baselineRss = settledRss();
let watch: ReturnType<typeof watchPeakRss> | undefined;
let report: ((run: PdfWorkerRun) => void) | undefined;
const reported = new Promise<PdfWorkerRun>((resolve) => {
  report = resolve;
});

const consumer = startQueueConsumer({
  name: 'pdf-transcript',
  endpoint: process.env.AWS_ENDPOINT_URL_SQS ?? '',
  queueUrl: process.env.BENCH_PDF_QUEUE_URL ?? '',
  queueArn: process.env.BENCH_PDF_QUEUE_ARN ?? '',
  batchSize: 1,
  handler: async (event: SQSEvent, context) => {
    const started = process.hrtime.bigint();
    let failures = 0;
    try {
      const result = await handler(event, context);
      failures = result.batchItemFailures.length;
      return result;
    } finally {
      const handlerMs = Number(process.hrtime.bigint() - started) / 1e6;
      const peak = watch?.stop();
      report?.({
        flags: process.execArgv.filter((flag) => flag.startsWith('--max-')).join(' '),
        baselineRss,
        peakRss: peak?.peak ?? 0,
        peakSource: peak?.source ?? 'sampled',
        sampledPeakRss: peak?.sampledPeak ?? 0,
        heapUsedPeak: peak?.heapUsedPeak ?? 0,
        newSpacePeak: peak?.newSpacePeak ?? 0,
        oldSpacePeak: peak?.oldSpacePeak ?? 0,
        handlerMs,
        failures,
      });
    }
  },
  onError: (error) => console.error('[pdf worker]', error),
});
// The peak counts from here: loaded, collected, polling (what a warm container holds between jobs).
watch = watchPeakRss();
console.log('ready');
const run = await reported;
console.log(`${RESULT_MARKER}${JSON.stringify(run)}`);
consumer.halt();
process.exit(0);
