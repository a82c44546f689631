// Bundles the container task (functions/task.ts) into dist/task.mjs: Node 20+, ESM, the AWS SDK included
// (a container has no runtime copy of it), bufferutil left out (ws falls back to JavaScript without it).
import { build } from 'esbuild';

await build({
  entryPoints: ['functions/task.ts'],
  outfile: 'dist/task.mjs',
  bundle: true,
  platform: 'node',
  target: 'node20',
  format: 'esm',
  minify: true,
  sourcemap: true,
  legalComments: 'none',
  banner: { js: "import { createRequire as __ksp_cr } from 'node:module'; const require = __ksp_cr(import.meta.url);" },
  external: ['bufferutil', 'utf-8-validate'],
  logLevel: 'warning',
});
console.log('built dist/task.mjs');
