// Bundles the CLI into dist/cli.js and the container task (functions/task.ts) into dist/task.mjs (Node 20+, ESM).
// The Lambda bundle is built by infra (esbuild too). The AWS SDK is bundled here: neither a laptop nor a container
// has the Lambda runtime's copy.
import { build } from 'esbuild';

const common = {
  bundle: true,
  platform: 'node',
  target: 'node20',
  format: 'esm',
  minify: true,
  sourcemap: true,
  legalComments: 'none',
  // Some CommonJS dependencies call require(); give the ESM bundle one.
  banner: { js: "import { createRequire as __ksp_cr } from 'node:module'; const require = __ksp_cr(import.meta.url);" },
  logLevel: 'warning',
  // ws masks and unmasks WebSocket frames with the native bufferutil when it can load it (3× the tunnel's
  // throughput, docs/benchmarks.md); a native addon cannot be bundled, so it is required at run time and
  // ws falls back to JavaScript where it is not installed.
  external: ['bufferutil', 'utf-8-validate'],
};

// `node scripts/build.mjs container` builds what the container image needs: the task and the in-cluster runner
// (functions/runner.ts, the CLI's `run` alone). The image's build context holds only src/ and functions/
// (.dockerignore), not the lab the CLI's demo ships. (`task` is the older name of that target.)
const only = process.argv[2];
const container = only === 'container' || only === 'task';
if (!container) await build({ ...common, entryPoints: ['src/cli/main.ts'], outfile: 'dist/cli.js' });
await build({ ...common, entryPoints: ['functions/task.ts'], outfile: 'dist/task.mjs' });
await build({ ...common, entryPoints: ['functions/runner.ts'], outfile: 'dist/runner.mjs' });
console.log(container ? 'built dist/task.mjs and dist/runner.mjs' : 'built dist/cli.js, dist/task.mjs and dist/runner.mjs');
