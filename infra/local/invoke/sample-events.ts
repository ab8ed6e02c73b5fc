import { existsSync, readdirSync } from 'node:fs';
import { basename, dirname, join, relative } from 'node:path';
import { ROOT } from './targets';

/**
 * The sample events under `events/`: listed by `npm run invoke -- --help` and run one by one by the
 * tests, so a sample that no longer fits its function is found.
 */

export const EVENTS_DIR = join(ROOT, 'events');

/** Every sample event under `events/`, as paths relative to the repository. */
export function sampleEvents(): string[] {
  const found: string[] = [];
  const walk = (dir: string) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) walk(path);
      else if (entry.name.endsWith('.json')) found.push(relative(ROOT, path));
    }
  };
  if (existsSync(EVENTS_DIR)) walk(EVENTS_DIR);
  return found.sort();
}

/** The folder an event file sits in, for the help text. */
export function sampleKind(path: string): string {
  return basename(dirname(path));
}
