#!/usr/bin/env node
/**
 * The seeded mutations issue 39 listed as surviving, each applied alone to the source, its test run, the source put
 * back: a mutation the test does not fail on is printed SURVIVED and the script exits 1. `npm run mutations`.
 * (A mutation whose text is no longer in the file is printed STALE: update it with the code it guards.)
 */
import { spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';

const MUTATIONS = [
  [
    'an exit status before the last byte, every byte arrived',
    'src/probe/transfer.ts',
    'exitAt !== undefined && (received < bytes || exitAt < this.lastByteAt)',
    'exitAt !== undefined && received < bytes',
    'test/unit/transfer.test.ts',
  ],
  [
    'a non-zero exit after every byte counted complete',
    'src/probe/transfer.ts',
    '    if (this.channel.exit && this.exit?.exitCode !== 0) return this.endWithExit();\n',
    '',
    'test/unit/transfer.test.ts',
  ],
  ['MB/s instead of MiB/s', 'src/probe/transfer.ts', 'bytes / BYTES_PER_MIB / (ms / 1000)', 'bytes / 1e6 / (ms / 1000)', 'test/unit/one-source.test.ts'],
  [
    'ALB no longer identified',
    'src/probe/hop-products.ts',
    'match: { server: /awselb/i, body: /awselb/i }',
    'match: { server: /x-awselb/i, body: /x-awselb/i }',
    'test/unit/hop-replies.test.ts',
  ],
  [
    'Envoy no longer identified',
    'src/probe/hop-products.ts',
    'match: { server: /envoy|istio/i, body: /upstream connect error|no healthy upstream|RBAC: access denied/i }',
    'match: { server: /x-envoy/i }',
    'test/unit/hop-replies.test.ts',
  ],
  [
    "Envoy's Server header no longer read",
    'src/probe/hop-products.ts',
    'match: { server: /envoy|istio/i,',
    'match: { server: /x-envoy/i,',
    'test/unit/hop-replies.test.ts',
  ],
  ['a 405 from a hop not a rule', 'src/probe/upgrade-refusal.ts', '[403, 405]', '[403]', 'test/unit/hop-replies.test.ts'],
  ["http2-leg without the API server's 400", 'src/probe/upgrade-refusal.ts', '  !!u.kubernetesStatus &&\n', '', 'test/unit/hop-replies.test.ts'],
  [
    'WINDOW_UPDATE flags not checked',
    'src/streaming/spdy/parser.ts',
    "        if (h.flags !== 0) throw this.badFrame(h, `flags ${h.flags}, must be 0`);\n        return { type: 'WINDOW_UPDATE'",
    "        return { type: 'WINDOW_UPDATE'",
    'test/unit/rules.test.ts',
  ],
];

let survived = 0;
for (const [name, file, from, to, test] of MUTATIONS) {
  const original = readFileSync(file, 'utf8');
  if (original.split(from).length !== 2) {
    console.log(`STALE    ${name} (${file})`);
    survived++;
    continue;
  }
  writeFileSync(file, original.replace(from, to));
  try {
    const r = spawnSync('npx', ['vitest', 'run', test], { encoding: 'utf8', timeout: 300_000 });
    const killed = r.status !== 0;
    if (!killed) survived++;
    console.log(`${killed ? 'KILLED  ' : 'SURVIVED'} ${name} (${test})`);
  } finally {
    writeFileSync(file, original);
  }
}
console.log(`${MUTATIONS.length - survived} of ${MUTATIONS.length} killed`);
process.exitCode = survived ? 1 : 0;
