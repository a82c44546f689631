#!/usr/bin/env node
// Runs the bundled CLI; build it first with `npm run build`.
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const cli = fileURLToPath(new URL('../dist/cli.js', import.meta.url));
if (!existsSync(cli)) {
  process.stderr.write('kube-stream-probe: dist/cli.js is missing; run `npm run build` first (or `npm run cli -- <command>`).\n');
  process.exit(2);
}
await import(cli);
