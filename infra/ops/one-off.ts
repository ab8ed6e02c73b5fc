import { useLocalStackEnvironment } from '../local/stack-state';

/**
 * The shell of a one-off table script that takes no arguments (`npm run visitors:backfill`,
 * `npm run shards:backfill`): `--help` prints `help`; anything else is refused with it; the
 * environment is the running local stack's, or the caller's; a failure prints its message and
 * exits 1. `run` imports the data layer itself, since that reads its configuration at load.
 */
export function runOneOff(help: string, run: () => Promise<void>): void {
  const main = async () => {
    const args = process.argv.slice(2);
    if (args.includes('--help') || args.includes('-h')) {
      console.log(help);
      return;
    }
    if (args.length > 0) throw new Error(`Unknown argument ${args[0]}\n\n${help}`);
    useLocalStackEnvironment();
    await run();
  };
  main().catch((error: unknown) => {
    console.error(error instanceof Error ? error.message : error);
    process.exit(1);
  });
}
