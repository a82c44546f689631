/**
 * The long-hold task's image as `cdk deploy` would build it, without Docker:
 * the build context CDK stages (the repository root cut down by .dockerignore)
 * holds only what the bundle is built from, so a change to docs or tests
 * neither rebuilds nor re-uploads the image; the Dockerfile's build step runs
 * in that context and the bundle it makes starts and reports a bad
 * configuration; the base image is pinned by digest on the Lambda's Node.js
 * major and the task runs as a non-root user.
 */
import { spawnSync } from 'node:child_process';
import { cpSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { App } from 'aws-cdk-lib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LocationStack } from '../../infra/location-stack.js';
import { PROBE_RUNTIME } from '../../infra/stream-probe.js';
import { readConfigDocument } from '../../src/config/load.js';
import { parseProbeConfig } from '../../src/config/probe-config.js';

type Json = any;
let outdir: string;
let context: string;
const files = (dir: string): string[] =>
  readdirSync(dir).flatMap((f) => {
    const p = join(dir, f);
    return statSync(p).isDirectory() ? files(p) : [relative(context, p)];
  });

beforeAll(() => {
  outdir = mkdtempSync(join(tmpdir(), 'ksp-image-'));
  const c = readConfigDocument('infra/examples/private-vpc.yaml') as Json;
  c.schedules.push({ name: 'long', expression: 'rate(6 hours)', holds: ['30m'] });
  c.locations[0].vpc.endpoints = { mode: 'none' };
  const config = parseProbeConfig(c);
  const app = new App({ outdir });
  new LocationStack(app, 'image', { config, location: config.locations[0]! });
  const assembly = app.synth();
  // The asset manifest (what cdk-assets builds and publishes): one image, its context staged in the assembly.
  const images = Object.values<Json>(JSON.parse(readFileSync(join(assembly.directory, 'image.assets.json'), 'utf8')).dockerImages);
  expect(images.map((i) => [i.source.dockerFile, i.source.platform])).toEqual([['container/Dockerfile', 'linux/arm64']]);
  context = join(assembly.directory, images[0].source.directory);
}, 120_000);
afterAll(() => rmSync(outdir, { recursive: true, force: true }));

describe('the task image', () => {
  it('its build context is what the bundle is built from, and nothing else', () => {
    const all = files(context);
    expect([...new Set(all.map((f) => f.split('/')[0]))].sort()).toEqual([
      '.dockerignore',
      'container',
      'functions',
      'package-lock.json',
      'package.json',
      'scripts',
      'src',
    ]);
    expect(all.filter((f) => /^(scripts|container)\//.test(f)).sort()).toEqual(['container/Dockerfile', 'scripts/build.mjs']);
    expect(all.some((f) => /(^|\/)(node_modules|docs|test|lab|infra|\.git)\//.test(f) || f === 'README.md')).toBe(false);
  });

  it("the Dockerfile's build step works in that context, and the bundles run (the task reports a missing configuration, exit 1; the runner's run and serve answer)", () => {
    const work = mkdtempSync(join(tmpdir(), 'ksp-image-build-'));
    try {
      cpSync(context, work, { recursive: true });
      symlinkSync(join(process.cwd(), 'node_modules'), join(work, 'node_modules')); // what `npm ci` installs from the lock file
      // The Dockerfile's own build step, as written there.
      const step = /^RUN node (scripts\/build\.mjs.*)$/m.exec(readFileSync('container/Dockerfile', 'utf8'))![1]!.split(' ');
      const build = spawnSync(process.execPath, step, { cwd: work, encoding: 'utf8' });
      expect(build.stderr).toBe('');
      expect(build.status).toBe(0);
      const run = spawnSync(process.execPath, [join(work, 'dist/task.mjs')], {
        cwd: work,
        encoding: 'utf8',
        env: { PATH: process.env.PATH ?? '', KSP_EVENT: '{"holds":["0s"]}' },
        timeout: 30_000,
      });
      expect(run.stdout).toMatch(/KSP_LOCATION_CONFIG is not set/);
      expect(run.status).toBe(1);
      const runner = spawnSync(process.execPath, [join(work, 'dist/runner.mjs'), 'run', '--help'], { cwd: work, encoding: 'utf8', timeout: 30_000 });
      expect(runner.stdout).toMatch(/--exit-zero-on-finding/);
      expect(runner.status).toBe(0);
      const serve = spawnSync(process.execPath, [join(work, 'dist/runner.mjs'), 'serve', '--help'], { cwd: work, encoding: 'utf8', timeout: 30_000 });
      expect(serve.stdout).toMatch(/blackbox_exporter/);
      expect(serve.status).toBe(0);
    } finally {
      rmSync(work, { recursive: true, force: true });
    }
  }, 120_000);

  it('the base image is pinned by digest, on the Node.js major the Lambda runs; runner, serve and task (the default, last) run as a non-root user', () => {
    const dockerfile = readFileSync('container/Dockerfile', 'utf8');
    const stages = [...dockerfile.matchAll(/^FROM (?:--platform=\S+ )?(\S+) AS (\S+)$/gm)].map((m) => ({ from: m[1]!, name: m[2]! }));
    expect(stages.map((s) => s.name)).toEqual(['source', 'prebuilt', 'bundles', 'runner', 'serve', 'task']);
    const major = /^nodejs(\d+)\.x$/.exec(PROBE_RUNTIME.name)![1];
    const bases = stages.filter((s) => !['prebuilt', 'bundles', 'serve'].includes(s.name)).map((s) => s.from);
    for (const image of bases) expect(image).toMatch(new RegExp(`^node:${major}-bookworm-slim@sha256:[0-9a-f]{64}$`));
    expect(stages.find((s) => s.name === 'serve')!.from).toBe('runner');
    expect(stages.find((s) => s.name === 'bundles')!.from).toBe('${BUNDLES}');
    expect(dockerfile).toMatch(/^ARG BUNDLES=source$/m);
    // Each runtime stage's text: its user, and what it runs.
    const body = (name: string) => dockerfile.split(/^FROM /m).find((b) => b.includes(` AS ${name}\n`))!;
    for (const name of ['runner', 'task']) expect(body(name)).toMatch(/^USER node$/m);
    expect(body('serve')).not.toMatch(/^USER /m); // inherits the runner's
    expect(body('runner')).toMatch(/^ENTRYPOINT \["node", "--enable-source-maps", "\/app\/runner\.mjs"\]$/m);
    expect(body('serve')).toMatch(/^ENTRYPOINT \["node", "--enable-source-maps", "\/app\/runner\.mjs", "serve"\]$/m);
    expect(dockerfile.trimEnd().split('\n').at(-1)).toBe('ENTRYPOINT ["node", "--enable-source-maps", "/app/task.mjs"]');
  });
});
