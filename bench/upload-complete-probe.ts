/**
 * Child of upload-complete-main.ts: the uploads function's handler alone in this process (the
 * emulators live in the parent), completing one upload through a Lambda event; reports the time of
 * `complete` and this process's peak RSS over it against its RSS before.
 */
import type { APIGatewayProxyResult } from 'aws-lambda';
import { lambdaContext, proxyEvent } from '../infra/local/lambda-event';
import { settledRss, watchPeakRss } from './peak-rss';
import { RESULT_MARKER } from './protocol';

const [uploadId = '', token = ''] = process.argv.slice(2);
const { handler } = await import('../functions/uploads/handler');
const call = (method: string, resource: string, path: string) =>
  handler(
    proxyEvent({
      method,
      resource,
      path,
      pathParameters: { id: path.split('/')[3] ?? '' },
      headers: { Authorization: `Bearer ${token}` },
    }),
    lambdaContext('uploads'),
  ) as Promise<APIGatewayProxyResult>;
// Warm: the modules, the credential and the SDK clients load before the measured call.
await call('GET', '/api/uploads/{id}', `/api/uploads/${uploadId}`);
const baselineRss = settledRss();
const peak = watchPeakRss();
const started = performance.now();
const answer = await call('POST', '/api/uploads/{id}/complete', `/api/uploads/${uploadId}/complete`);
const elapsedMs = performance.now() - started;
const { peak: peakRss } = peak.stop();
console.log(
  `${RESULT_MARKER}${JSON.stringify({ status: answer.statusCode, elapsedMs, peakRss, baselineRss, body: answer.statusCode === 200 ? undefined : answer.body })}`,
);
