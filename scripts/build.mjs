// Bundles the CLI into dist/cli.js (Node 20, ESM). The Lambda bundle is built by infra (esbuild too).
import { build } from 'esbuild';

await build({
  entryPoints: ['src/cli/main.ts'],
  outfile: 'dist/cli.js',
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
});
console.log('built dist/cli.js');
