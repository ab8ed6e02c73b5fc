import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { projectRoot } from '../../bench/options';
import packageJson from '../../package.json' with { type: 'json' };

/**
 * The project's floor is package.json's `engines` (the functions run on Lambda's nodejs22.x). npm
 * scripts put the `node` dev dependency (Node 22) first on PATH whatever the system's Node is, so
 * `npm test` runs the workers, and everything they start by name, on it.
 */
const floor = Number(/^>=\s*(\d+)/.exec(packageJson.engines.node)?.[1]);
const major = (version: string) => Number(/^v(\d+)\./.exec(version.trim())?.[1]);

describe('the Node.js the tests run on', () => {
  it('is the floor or newer: the test workers, a `node` started by name, and tsx', () => {
    const versions = {
      worker: process.version,
      node: execFileSync('node', ['-p', 'process.version'], { encoding: 'utf8' }).trim(),
      tsx: execFileSync(join(projectRoot, 'node_modules/.bin/tsx'), ['-e', 'console.log(process.version)'], {
        encoding: 'utf8',
      }).trim(),
    };
    console.info(
      `Node.js: test worker ${versions.worker}, node on PATH ${versions.node}, tsx ${versions.tsx}`,
    );
    expect(floor).toBe(22);
    for (const [where, version] of Object.entries(versions)) {
      expect(
        major(version),
        `${where} runs ${version}: run the tests through npm (npm test)`,
      ).toBeGreaterThanOrEqual(floor);
    }
  });

  it('is pinned for npm scripts: the node dev dependency is an exact version of the floor major', () => {
    expect(packageJson.devDependencies.node).toMatch(new RegExp(`^${floor}\\.\\d+\\.\\d+$`));
  });
});
