import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

/**
 * A comment that sends the reader to a file of this repository ("see shared/auth/ttl-cache.ts") must
 * send them somewhere: a file moved or renamed leaves such pointers behind, and a newcomer follows
 * them to nothing. Every repository path named in a comment of the code must exist.
 */
const root = fileURLToPath(new URL('../..', import.meta.url));

/** A path under one of the repository's top-level folders, ending in a file extension. */
const REPOSITORY_PATH =
  /\b((?:functions|shared|infra|test|bench|docs|events|clients|examples)\/[\w./-]+\.(?:ts|mts|mjs|md|json))\b/g;

/** Comment lines of a source file: `//` lines and the lines of `/* … *\/` blocks. */
function commentLines(text: string): { line: number; text: string }[] {
  const lines = text.split('\n');
  const found: { line: number; text: string }[] = [];
  let inBlock = false;
  lines.forEach((raw, index) => {
    const line = raw.trim();
    if (inBlock || line.startsWith('/*') || line.startsWith('//'))
      found.push({ line: index + 1, text: line });
    if (line.startsWith('/*') && !line.includes('*/')) inBlock = true;
    else if (inBlock && line.includes('*/')) inBlock = false;
  });
  return found;
}

describe('comments that name a file of the repository', () => {
  it('name files that exist', () => {
    const sources = execFileSync('git', ['ls-files', '*.ts', '*.mts', '*.mjs'], {
      cwd: root,
      encoding: 'utf8',
    })
      .split('\n')
      .filter(Boolean);
    const dangling: string[] = [];
    for (const file of sources) {
      const absolute = join(root, file);
      // Listed by git but deleted in the working tree (a move not yet staged).
      if (!existsSync(absolute)) continue;
      for (const { line, text } of commentLines(readFileSync(absolute, 'utf8'))) {
        for (const [, path = ''] of text.matchAll(REPOSITORY_PATH)) {
          if (!existsSync(join(root, path))) dangling.push(`${file}:${line} names ${path}`);
        }
      }
    }
    expect(sources.length).toBeGreaterThan(100);
    expect(dangling).toEqual([]);
  });
});
