import type { Metafile } from 'esbuild';
import { describe, expect, it } from 'vitest';
import { groupEntry } from '../../functions/routes';
import { streamRouterParts, workerEntry } from '../../functions/workers';
import { bundleMetafile } from './helpers/bundle-metafile';

/**
 * zod is ~31 KB of a minified bundle and several milliseconds of a cold start's import. A function
 * that validates nothing with it (its input checked by hand, its storage projected through
 * zod-free projections: shared/schemas/projections.ts) keeps it out;
 * one import of a schema module anywhere in its graph would bring it back unnoticed.
 */
const ZOD_FREE_STREAM_PARTS = ['webhook-fanout'];

const isZod = (input: string): boolean =>
  input.startsWith('node_modules/zod/') || input === 'shared/schemas/zod.ts';

/**
 * How zod gets in: from the entry, each chain of imports that ends at a module of zod. `eager`
 * follows static imports only: what evaluating the entry alone evaluates.
 */
function chainsToZod(metafile: Metafile, entry: string, { eager = false } = {}): string[] {
  const chains = new Map<string, string[]>([[entry, [entry]]]);
  const queue = [entry];
  const found = new Set<string>();
  while (queue.length) {
    const current = queue.shift() ?? '';
    const chain = chains.get(current) ?? [];
    for (const { path, kind } of metafile.inputs[current]?.imports ?? []) {
      if (eager && kind === 'dynamic-import') continue;
      if (isZod(path)) found.add([...chain, path].join(' → '));
      else if (!chains.has(path)) {
        chains.set(path, [...chain, path]);
        queue.push(path);
      }
    }
  }
  return [...found];
}

describe('bundles without zod', () => {
  it.each(ZOD_FREE_STREAM_PARTS)(
    'the %s stream part bundles no zod, nor does the router before a part loads',
    async (name) => {
      expect(streamRouterParts.map((part) => part.name)).toContain(name);
      const part = await bundleMetafile(name, workerEntry(name));
      expect(chainsToZod(part, workerEntry(name))).toEqual([]);
      expect(Object.keys(part.inputs).filter(isZod)).toEqual([]);
      // The router loads each part on the first batch with records for it: a batch of events alone
      // evaluates the router and this part, never zod.
      const router = await bundleMetafile('stream-router', workerEntry('stream-router'));
      expect(chainsToZod(router, workerEntry('stream-router'), { eager: true })).toEqual([]);
    },
  );

  it('authentication, which every API function loads, builds no zod schema', async () => {
    // It reads the organization's chatbot configuration; its bounds once came with the chatbot
    // schemas, ~40 of them built in every API function's cold start.
    const entry = 'shared/http/middleware/authenticate.ts';
    const metafile = await bundleMetafile('authenticate', entry);
    expect(chainsToZod(metafile, entry)).toEqual([]);
  });

  /**
   * Bundles that read these resources without validating them: the events function projects event
   * data through shared/schemas/projections.ts, the data layer lists conversations per status from
   * shared/schemas/conversation-statuses.ts. The schemas (~290 for conversations alone, with the
   * event-data map over them) were most of the events function's cold import.
   */
  it.each([
    ['events', groupEntry('events'), ['conversation', 'message', 'note', 'visitor', 'event-data']],
    ['pdf-transcript', workerEntry('pdf-transcript'), ['conversation', 'message', 'note', 'visitor']],
  ])('the %s bundle builds none of the resource schemas it reads', async (name, entry, schemas) => {
    const metafile = await bundleMetafile(name, entry);
    const forbidden = schemas.map((schema) => `shared/schemas/${schema}.ts`);
    expect(Object.keys(metafile.inputs).filter((input) => forbidden.includes(input))).toEqual([]);
  });
});
