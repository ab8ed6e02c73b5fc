import { runOneOff } from './one-off';

const HELP = `npm run visitors:backfill

Gives visitors written before the contacts work (issue 27) their listing and sync keys, so
GET /api/visitors and its updatedSince sync see them. Scans the table once for visitor items without
them (the only way to find them), writes each one's keys on the condition that no write did
meanwhile, and prints progress. Safe to run while the service runs, and again (only what is left is
written).

Where: the running local stack (.local-data/local-stack.json from npm start), or the environment:
TABLE_NAME, AWS_ENDPOINT_URL_DYNAMODB (or AWS credentials and region).`;

runOneOff(HELP, async () => {
  // Imported only now: the data layer reads its configuration at load.
  const { backfillVisitorKeys } = await import('../../shared/db/visitor-backfill');
  const t0 = Date.now();
  const done = await backfillVisitorKeys((progress) =>
    console.log(
      `scanned ${progress.scanned.toLocaleString('en')} items, ${progress.updated.toLocaleString('en')} visitors given their keys…`,
    ),
  );
  console.log(
    `done in ${((Date.now() - t0) / 1000).toFixed(1)} s: ${done.updated.toLocaleString('en')} visitors given their listing and sync keys`,
  );
});
