/**
 * The package as a user gets it: `npm pack` (its prepack builds dist/), installed into an empty directory with
 * nothing of ours but the tarball — no devDependencies, no esbuild, no tsx — then the CLI's help, the packaged
 * emulator and a `run` against it, the API (`kube-stream-probe`) from a TypeScript file, and a CDK app that imports
 * the construct (`kube-stream-probe/cdk`), type-checked with tsc and synthesized: the function's code and the task
 * image are the package's prebuilt bundles.
 */
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

type Json = any;
const root = process.cwd();
let work: string;
let app: string;
let tarball: string;
let emulator: ChildProcess | undefined;
/** The versions our own lock file installs: the app's TypeScript, Node types and CDK peers. */
const installed = (pkg: string) => `${pkg}@${JSON.parse(readFileSync(join(root, 'node_modules', pkg, 'package.json'), 'utf8')).version}`;
const run = (cmd: string, args: string[], cwd = app, timeout = 180_000) => {
  const r = spawnSync(cmd, args, { cwd, encoding: 'utf8', timeout, env: { ...process.env, npm_config_fund: 'false', npm_config_audit: 'false' } });
  return { status: r.status, out: r.stdout, err: r.stderr };
};
const bin = () => join(app, 'node_modules/.bin/kube-stream-probe');

beforeAll(() => {
  work = mkdtempSync(join(tmpdir(), 'ksp-package-'));
  const pack = run('npm', ['pack', '--json', '--pack-destination', work], root);
  expect(pack.status, pack.err).toBe(0);
  const [info] = JSON.parse(pack.out.slice(pack.out.indexOf('[')));
  tarball = join(work, info.filename);
  (globalThis as Json).packedFiles = info.files.map((f: Json) => f.path as string);
  app = join(work, 'app');
  rmSync(app, { recursive: true, force: true });
  spawnSync('mkdir', [app]);
  writeFileSync(join(app, 'package.json'), JSON.stringify({ name: 'probe-app', private: true, type: 'module' }));
  const install = run('npm', [
    'install',
    '--prefer-offline',
    '--no-save',
    tarball,
    installed('aws-cdk-lib'),
    installed('constructs'),
    installed('typescript'),
    installed('@types/node'),
  ]);
  expect(install.status, install.err).toBe(0);
}, 300_000);
afterAll(() => {
  emulator?.kill('SIGINT');
  rmSync(work, { recursive: true, force: true });
});

describe('the npm package', () => {
  it('holds the built package and not the repository: no tests, corpus, lab or TypeScript sources', () => {
    const files: string[] = (globalThis as Json).packedFiles;
    expect(files).toContain('dist/cli.js');
    expect(files).toContain('dist/lambda/index.mjs');
    expect(files).toContain('dist/image/Dockerfile');
    expect(files).toContain('dist/types/infra/index.d.ts');
    // The license the package.json names, its text beside it (Apache-2.0).
    expect(files).toContain('LICENSE');
    expect(readFileSync(join(app, 'node_modules/kube-stream-probe/LICENSE'), 'utf8')).toMatch(/Apache License\s+Version 2\.0, January 2004/);
    expect(files.filter((f) => /^(test|fuzz|lab|src|infra|functions|scripts|bench)\//.test(f) || /\.ts$/.test(f.replace(/\.d\.ts$/, '')))).toEqual([]);
    expect(files.length).toBeLessThan(250);
    // Installed without our devDependencies: the construct needs no esbuild, the CLI no tsx.
    for (const dev of ['esbuild', 'tsx', 'vitest']) expect(existsSync(join(app, 'node_modules', dev)), dev).toBe(false);
  });

  it('npx kube-stream-probe --help and --version answer from the installed bin; require() loads the API and the construct', () => {
    const help = run('npx', ['--no-install', 'kube-stream-probe', '--help']);
    expect(help.status, help.err).toBe(0);
    expect(help.out).toMatch(/^Usage: kube-stream-probe <command>/);
    // A CommonJS app (CDK's default template) loads the ESM package with require() (Node 20.19+).
    for (const [spec, name] of [
      ['kube-stream-probe', 'probeCluster'],
      ['kube-stream-probe/cdk', 'StreamProbe'],
    ])
      expect(run(process.execPath, ['-e', `process.stdout.write(typeof require(${JSON.stringify(spec)}).${name})`]).out).toBe('function');
    const version = run(bin(), ['--version']);
    expect(version.out.trim()).toContain(JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')).version);
  });

  it('runs against the emulator it ships: `run` exits 0 with clean verdicts, and the API probes the same cluster', async () => {
    const kubeconfig = join(work, 'kubeconfig.yaml');
    emulator = spawn(bin(), ['emulator', '--write-kubeconfig', kubeconfig], { cwd: app, stdio: ['ignore', 'pipe', 'pipe'] });
    await new Promise<void>((resolve, reject) => {
      let text = '';
      emulator!.stdout!.on('data', (d: Buffer) => {
        text += d;
        if (text.includes('kubeconfig:')) resolve();
      });
      emulator!.once('exit', (code) => reject(new Error(`the packaged emulator exited ${code}`)));
    });
    const probe = run(bin(), ['run', '--kubeconfig', kubeconfig, '--ops', 'exec,portforward']);
    expect(probe.err).toBe('');
    expect(probe.status).toBe(0);
    expect(probe.out).toMatch(/^exec +kubectl +0s +ok +ok +clean/m);
    expect(probe.out).toMatch(/^portforward +kubectl +0s +ok +ok +clean/m);

    writeFileSync(
      join(app, 'api.ts'),
      `import { probeCluster, isProbeError } from 'kube-stream-probe';
const report = await probeCluster({ kubeconfig: process.argv[2], plan: { operations: ['exec'], holds: ['0s'] } });
console.log(report.verdicts.map((v) => \`\${v.operation} \${v.keepalive} \${v.verdict}\`).join('\\n'));
for (const bad of [{ plan: { operations: ['exce'] } }, { namespace: 'Bad_NS' }]) {
  try {
    await probeCluster({ kubeconfig: process.argv[2], ...bad });
  } catch (err) {
    if (isProbeError(err)) console.log(err.code, err.message);
  }
}
`,
    );
    writeFileSync(
      join(app, 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: { target: 'ES2022', module: 'NodeNext', moduleResolution: 'NodeNext', strict: true, outDir: 'out', types: ['node'] },
        files: ['api.ts', 'app.ts'],
      }),
    );
    writeCdkApp();
    const tsc = run('npx', ['--no-install', 'tsc', '-p', '.']);
    expect(tsc.out + tsc.err).toBe('');
    expect(tsc.status).toBe(0);
    const api = run(process.execPath, ['out/api.js', kubeconfig]);
    expect(api.err).toBe('');
    expect(api.out.split('\n')).toEqual([
      'exec kubectl clean',
      'USAGE probeCluster: plan.operations[0] "exce" is not one of exec, portforward, attach: did you mean "exec"?',
      // The target's names by the same rules as run's --namespace.
      'USAGE probeCluster: namespace "Bad_NS" is not a namespace name',
      '',
    ]);
  }, 120_000);

  it('a CDK app imports the construct, type-checks and synthesizes with the prebuilt function and image', () => {
    if (!existsSync(join(app, 'out/app.js'))) {
      writeCdkApp();
      expect(run('npx', ['--no-install', 'tsc', '-p', '.']).status).toBe(0);
    }
    const synth = run(process.execPath, ['out/app.js']);
    expect(synth.err).toBe('');
    expect(synth.status).toBe(0);
    const out = join(app, 'cdk.out');
    const assets = JSON.parse(readFileSync(join(out, 'Probe.assets.json'), 'utf8'));
    const template = JSON.parse(readFileSync(join(out, 'Probe.template.json'), 'utf8'));
    const fn = Object.values<Json>(template.Resources).find((r) => r.Type === 'AWS::Lambda::Function' && r.Properties.Handler === 'index.handler')!;
    expect(fn.Properties.Runtime).toBe('nodejs24.x');
    const code = Object.entries<Json>(assets.files).find(([hash]) => fn.Properties.Code.S3Key.startsWith(hash))![1];
    expect(readdirSync(join(out, code.source.path)).sort()).toEqual(['index.mjs', 'index.mjs.map']);
    // The bundle loads (its AWS SDK is the runtime's, here the package's dependencies) and exports the handler.
    const load = run(process.execPath, [
      '--input-type=module',
      '-e',
      `const m = await import(${JSON.stringify(join(out, code.source.path, 'index.mjs'))}); console.log(typeof m.handler)`,
    ]);
    expect(load.out.trim()).toBe('function');
    const [image] = Object.values<Json>(assets.dockerImages);
    expect(image.source.dockerBuildArgs).toEqual({ BUNDLES: 'prebuilt' });
    expect(readdirSync(join(out, image.source.directory)).sort()).toEqual(['Dockerfile', 'runner.mjs', 'runner.mjs.map', 'task.mjs', 'task.mjs.map']);
    // The prebuilt stage copies what is there: its globs match the bundles.
    expect(readFileSync(join(out, image.source.directory, 'Dockerfile'), 'utf8')).toMatch(
      /^FROM scratch AS prebuilt\nCOPY \*\.mjs \*\.mjs\.map \/src\/dist\/$/m,
    );
  });
});

function writeCdkApp(): void {
  writeFileSync(
    join(app, 'app.ts'),
    `import { App, Duration, Stack } from 'aws-cdk-lib';
import * as ec2 from 'aws-cdk-lib/aws-ec2';
import { StreamProbe } from 'kube-stream-probe/cdk';
const app = new App({ outdir: 'cdk.out' });
const stack = new Stack(app, 'Probe', { env: { account: '111111111111', region: 'eu-west-1' } });
const vpc = new ec2.Vpc(stack, 'Vpc', { maxAzs: 2 });
new StreamProbe(stack, 'Probe', {
  locationName: 'eu-west-1-vpc',
  vpc,
  subnets: vpc.privateSubnets,
  clusters: [{ name: 'prod-eu', endpoint: 'https://0123456789ABCDEF.gr7.eu-west-1.eks.amazonaws.com', auth: { type: 'eks', clusterName: 'prod-eu' }, target: { namespace: 'kube-stream-probe' } }],
  schedules: [
    { name: 'short', expression: 'rate(5 minutes)', holds: [Duration.seconds(0), Duration.seconds(65)] },
    { name: 'long', expression: 'rate(6 hours)', holds: [Duration.minutes(30)] },
  ],
});
app.synth();
`,
  );
}
