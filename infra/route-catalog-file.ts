import { mkdirSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { routeCatalog } from '../functions/routes';
import { ROUTE_CATALOG_FILE } from '../shared/http/route-catalog';
import { projectRoot } from './constructs/service-function';

/**
 * Writes the route catalog of this checkout for `version` inside the project (the bundler copies
 * bundled files from there) and returns its path. Atomic: parallel synths never read half a file.
 */
export function writeRouteCatalog(version: string): string {
  const dir = join(projectRoot, 'node_modules/.cache/route-catalog', version);
  mkdirSync(dir, { recursive: true });
  const file = join(dir, ROUTE_CATALOG_FILE);
  const partial = `${file}.${process.pid}.tmp`;
  writeFileSync(partial, JSON.stringify(routeCatalog(version)));
  renameSync(partial, file);
  return file;
}
