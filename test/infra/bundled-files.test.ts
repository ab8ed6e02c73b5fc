import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { App, Stack } from 'aws-cdk-lib';
import { afterAll, describe, expect, it } from 'vitest';
import {
  BUNDLED_ASSET_DIR,
  rendererFiles,
  rendererPackageDir,
} from '../../functions/platform/reference-assets';
import { projectRoot, ServiceFunction } from '../../infra/constructs/service-function';

const outdir = mkdtempSync(join(tmpdir(), 'bundled-files-'));
afterAll(() => rmSync(outdir, { recursive: true, force: true }));

const rendererCopies = () =>
  Object.keys(rendererFiles).map((name) => ({
    from: join(rendererPackageDir(), name),
    to: `${BUNDLED_ASSET_DIR}/${name}`,
  }));

describe('ServiceFunction bundledFiles', () => {
  it('copies the files next to the bundle, outside the JS bundle itself', () => {
    // Bundling on (unlike the template tests): the copy happens in esbuild's afterBundling hook.
    const app = new App({ outdir });
    const stack = new Stack(app, 'Bundled');
    // A small entry keeps this fast; the platform handler gets the same files (service-stack.ts).
    new ServiceFunction(stack, 'Fn', {
      entry: 'functions/platform/reference-assets.ts',
      bundledFiles: rendererCopies(),
    });
    app.synth();
    const assets = readdirSync(outdir).filter((entry) => entry.startsWith('asset.'));
    expect(assets).toHaveLength(1);
    const code = join(outdir, assets[0] ?? '');
    for (const { from, to } of rendererCopies()) {
      expect(readFileSync(join(code, to)).equals(readFileSync(from)), to).toBe(true);
    }
    const bundle = readFileSync(join(code, 'index.mjs'), 'utf8');
    expect(bundle).not.toContain('SwaggerUIBundle');
  });

  it('refuses a source outside the project or a target outside the bundle', () => {
    const stack = new Stack(new App({ context: { 'aws:cdk:bundling-stacks': [] } }), 'Refused');
    const entry = 'functions/platform/reference-assets.ts';
    expect(
      () =>
        new ServiceFunction(stack, 'Outside', { entry, bundledFiles: [{ from: '/etc/passwd', to: 'x' }] }),
    ).toThrow(/inside the project/);
    expect(
      () =>
        new ServiceFunction(stack, 'Escapes', {
          entry,
          bundledFiles: [{ from: join(projectRoot, 'package.json'), to: '../package.json' }],
        }),
    ).toThrow(/inside the bundle/);
  });
});
