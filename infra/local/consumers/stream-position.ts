import { readFileSync, renameSync, writeFileSync } from 'node:fs';

/**
 * The stream reader's saved place, on disk. AWS keeps an event source mapping's position for it;
 * locally a restart of `npm start` would otherwise begin at the newest record and never hand over
 * what was committed before a crash, so the reader keeps its place in a file of its own.
 */

/**
 * Where the reader left each shard of the stream, kept in a file (under `DATA_DIR`) so that a
 * restart resumes there: for each shard, the last record that every subscriber has handled (or
 * skipped after its retries, or did not want); `null` when none yet (the shard is then read from
 * its oldest record). Records after it may have been handled too: a restart hands them over again
 * (at least once), never skips one.
 */
export interface StreamPosition {
  streamArn: string;
  shards: Record<string, string | null>;
}

/** The saved position; `undefined` when there is none yet, `'unreadable'` when the file is not one. */
export function readPosition(file: string): StreamPosition | 'unreadable' | undefined {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
  try {
    const parsed = JSON.parse(text) as Partial<StreamPosition> | null;
    if (typeof parsed?.streamArn === 'string' && typeof parsed.shards === 'object' && parsed.shards)
      return { streamArn: parsed.streamArn, shards: parsed.shards };
  } catch {
    // Not JSON: as unreadable as a file of the wrong shape.
  }
  return 'unreadable';
}

/** Whole or not at all: a crash while saving leaves the previous position. */
export function writePosition(file: string, text: string): void {
  const temporary = `${file}.${process.pid}.tmp`;
  writeFileSync(temporary, text);
  renameSync(temporary, file);
}
