import { describe, expect, it } from 'vitest';
import type { $ZodType } from 'zod/v4/core';
import { groupEntry, routeTable } from '../../functions/routes';
import { workerDefinitions, workerEntry } from '../../functions/workers';
import { projectionOf } from '../../shared/db/project';
import { bundleMetafile } from './helpers/bundle-metafile';

/**
 * The cursor key ring is read from Secrets Manager before a function's first request
 * (shared/cursor-keys.ts): a function whose bundle holds that module makes that call
 * (shared/secrets.ts) in every cold start. Only the functions that answer cursor pages may hold it. It once reached seven functions
 * through the modules that write conversations, events and messages.
 */

const CURSOR_KEYS = 'shared/cursor-keys.ts';

/** An object answer with a `nextCursor` field (its projection lists the fields, lazy schemas built). */
const answersCursorPages = (schema: $ZodType): boolean => {
  const fields = projectionOf(schema);
  return typeof fields === 'object' && !Array.isArray(fields) && 'nextCursor' in fields;
};

describe('the cursor key ring', () => {
  it('is in the bundle of exactly the functions that answer cursor pages', async () => {
    const functions = [
      ...routeTable().map((group) => ({
        name: group.name,
        entry: groupEntry(group.name),
        signsCursors: group.routes.some((route) => answersCursorPages(route.response.schema)),
      })),
      ...workerDefinitions.map((worker) => ({
        name: worker.name,
        entry: workerEntry(worker.name),
        signsCursors: false,
      })),
    ];
    const holding = await Promise.all(
      functions.map(async ({ name, entry }) => [
        name,
        CURSOR_KEYS in (await bundleMetafile(name, entry)).inputs,
      ]),
    );
    const expected = functions.map(({ name, signsCursors }) => [name, signsCursors]);
    expect(Object.fromEntries(holding)).toEqual(Object.fromEntries(expected));
    // The route table says so too: the groups that list conversations, messages and events.
    expect(functions.filter((fn) => fn.signsCursors).map((fn) => fn.name)).toEqual(
      expect.arrayContaining(['conversations', 'events']),
    );
  }, 120_000);
});
