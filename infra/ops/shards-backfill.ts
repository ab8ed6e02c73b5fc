import { runOneOff } from './one-off';

const HELP = `npm run shards:backfill

Moves what a table deployed before the sharded keys (issue 37) holds under the old keys to the
sharded ones, so the conversation listings, the updatedSince sync and GET /api/events see it:
conversations get their sharded listing and sync keys (gsi1pk, gsi2pk, gsi3pk: ...#<n>), and the
events of ORG#<o>#EVENTS are copied to ORG#<o>#EVENTS#<n> (expired ones are deleted instead). Scans
the table once (the only way to find them), writes each item on the condition that no write did
meanwhile, and prints progress. The old item of an event younger than 24 h stays until a later run
(a stream record may still read it); the feed already serves its copy. Realtime notices need
nothing. Safe to run while the service runs, and again (only what is left is written).

Where: the running local stack (.local-data/local-stack.json from npm start), or the environment:
TABLE_NAME, AWS_ENDPOINT_URL_DYNAMODB (or AWS credentials and region).`;

const n = (value: number) => value.toLocaleString('en');

runOneOff(HELP, async () => {
  // Imported only now: the data layer reads its configuration at load.
  const { backfillShardedKeys } = await import('../../shared/db/shard-backfill');
  const t0 = Date.now();
  const done = await backfillShardedKeys((progress) =>
    console.log(
      `scanned ${n(progress.scanned)} items, ${n(progress.conversationsUpdated)} conversations given sharded keys, ${n(progress.eventsMoved)} events moved, ${n(progress.eventsDropped)} expired events dropped…`,
    ),
  );
  console.log(
    `done in ${((Date.now() - t0) / 1000).toFixed(1)} s: scanned ${n(done.scanned)} items; ${n(done.conversationsUpdated)} conversations given sharded listing and sync keys, ${n(done.eventsMoved)} events moved to their shard, ${n(done.eventsDropped)} expired events dropped`,
  );
  if (done.eventsHeld > 0)
    console.log(
      `${n(done.eventsHeld)} events younger than 24 h keep their old item as well (the feed serves their copy): run again after a day to delete those, or let their TTL do so`,
    );
});
