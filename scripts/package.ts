/**
 * `npm pack`'s build (prepack): what the published package holds under dist/, built from the sources.
 *   dist/cli.js        the CLI, self-contained (bin/kube-stream-probe.js runs it)
 *   dist/index.js      the API (`kube-stream-probe`), its dependencies left to npm
 *   dist/cdk.js        the construct (`kube-stream-probe/cdk`), aws-cdk-lib and constructs the app's (peers)
 *   dist/lambda/       the probe function's bundle, with the options the construct uses from a clone
 *   dist/image/        container/Dockerfile beside the task and in-cluster bundles (its `prebuilt` stage)
 *   dist/types/        the .d.ts of the API and the construct
 * Run: npx tsx scripts/package.ts (npm pack runs it).
 */
import { execFileSync } from 'node:child_process';
import { copyFileSync, mkdirSync, renameSync, rmSync } from 'node:fs';
import { build } from 'esbuild';
import { probeEsbuildOptions } from '../infra/probe-code.js';

rmSync('dist', { recursive: true, force: true });
const node = (args: string[]) => execFileSync(process.execPath, args, { stdio: 'inherit' });
// The CLI, the task and the in-cluster runner, as `npm run build` makes them.
node(['scripts/build.mjs']);

const library = {
  bundle: true,
  platform: 'node',
  target: 'node20',
  format: 'esm',
  sourcemap: true,
  packages: 'external',
  legalComments: 'none',
  logLevel: 'warning',
} as const;
await build({ ...library, entryPoints: ['src/api/index.ts'], outfile: 'dist/index.js' });
await build({ ...library, entryPoints: ['infra/index.ts'], outfile: 'dist/cdk.js', define: { __KSP_PACKAGE__: 'true' } });
await build({ ...probeEsbuildOptions('dist/lambda/index.mjs'), logLevel: 'warning' });

mkdirSync('dist/image', { recursive: true });
copyFileSync('container/Dockerfile', 'dist/image/Dockerfile');
for (const f of ['task.mjs', 'task.mjs.map', 'runner.mjs', 'runner.mjs.map']) renameSync(`dist/${f}`, `dist/image/${f}`);

node(['node_modules/typescript/bin/tsc', '-p', 'tsconfig.package.json']);
console.log('packaged dist/: cli.js, index.js, cdk.js, lambda/, image/, types/');
