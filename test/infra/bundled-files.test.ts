import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { App, Stack } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { afterAll, describe, expect, it } from 'vitest';
import {
  BUNDLED_ASSET_DIR,
  rendererFiles,
  rendererPackageDir,
} from '../../functions/platform/reference-assets';
import { projectRoot, ServiceFunction } from '../../infra/constructs/service-function';
import { execWrapper } from '../../infra/function-tuning';

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

  it('bundles the exec wrapper, executable, when a function has node flags, and names it in its environment', () => {
    const wrapperOut = mkdtempSync(join(outdir, 'wrapper-'));
    const app = new App({ outdir: wrapperOut });
    const stack = new Stack(app, 'Wrapped');
    new ServiceFunction(stack, 'Fn', {
      entry: 'functions/platform/reference-assets.ts',
      environment: { KEPT: 'yes' },
      nodeFlags: ['--max-semi-space-size=1', '--stack-size=900'],
    });
    app.synth();
    const [asset] = readdirSync(wrapperOut).filter((entry) => entry.startsWith('asset.'));
    const script = join(wrapperOut, asset ?? '', execWrapper.target);
    expect(readFileSync(script).equals(readFileSync(execWrapper.source))).toBe(true);
    // Lambda runs the wrapper itself: without the execute bits the function cannot start.
    expect(statSync(script).mode & 0o777).toBe(0o755);
    const [lambda] = Object.values(Template.fromStack(stack).findResources('AWS::Lambda::Function'));
    expect(lambda?.Properties.Environment.Variables).toMatchObject({
      KEPT: 'yes',
      AWS_LAMBDA_EXEC_WRAPPER: `/var/task/${execWrapper.target}`,
      [execWrapper.flagsVar]: '--max-semi-space-size=1 --stack-size=900',
    });
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
