/**
 * npm run bench: every benchmark, with ratios against peers measured in the
 * same run. Exits non-zero only when a benchmark's own correctness check
 * fails (bytes differ, no 101, a bundle that does not load); targets are
 * reported as pass/fail.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { cpus, totalmem } from 'node:os';
import { join } from 'node:path';
import { PROBE_PROCESS_ENV, startedWithProbeEnv } from '../src/config/process-env.js';
import { bundleBench } from './bundle.js';
import { BENCH_RUNS_DIR, BenchFailure, rowsTable, type BenchRun, type Row } from './common.js';
import { costBench } from './cost.js';
import { handshakeBench } from './handshake.js';
import { lambdaCpuBench } from './lambda-cpu.js';
import { maskBench } from './mask.js';
import { memoryBench } from './memory.js';
import { throughputBench } from './throughput.js';
import { soakBench } from './soak.js';
import { scaleBench } from './scale.js';
import { transferBench } from './transfer.js';

if (!startedWithProbeEnv()) {
  // Our code is measured in the environment the function and the task give it, and glibc reads its malloc settings
  // only at a process's start: run again in a process that has it.
  const again = spawnSync(process.execPath, [...process.execArgv, ...process.argv.slice(1)], {
    stdio: 'inherit',
    env: { ...process.env, ...PROBE_PROCESS_ENV },
  });
  process.exit(again.status ?? 1);
}

const only = process.argv.slice(2);
const benches: Array<[string, () => Promise<Row[]>]> = [
  ['throughput', throughputBench],
  ['transfer', transferBench],
  ['mask', maskBench],
  ['handshake', handshakeBench],
  ['memory', memoryBench],
  ['bundle', bundleBench],
  ['cost', costBench],
  ['lambda-cpu', lambdaCpuBench],
  ['soak', soakBench],
  ['scale', scaleBench],
];

const startedAt = new Date().toISOString();
const machine = `node ${process.version}, ${cpus().length} × ${cpus()[0]?.model ?? 'cpu'}, ${Math.round(totalmem() / 2 ** 30)} GiB`;
console.log(
  `kube-stream-probe benchmarks, ${startedAt}, ${machine}, environment of the function: ${Object.entries(PROBE_PROCESS_ENV)
    .map(([k, v]) => `${k}=${v}`)
    .join(' ')}`,
);
let failed = false;
const all: Row[] = [];
for (const [name, fn] of benches) {
  if (only.length && !only.includes(name)) continue;
  try {
    all.push(...(await fn()));
  } catch (err) {
    failed = true;
    console.error(`BENCH ${name} FAILED its own check: ${(err as Error).message}`);
    if (!(err instanceof BenchFailure)) console.error(err);
  }
}
console.log(`\n${rowsTable(all)}`);
// Every run's rows, for the summary of several runs (npm run bench:summary, docs/benchmarks.md's first table).
const runs = join(process.cwd(), BENCH_RUNS_DIR);
mkdirSync(runs, { recursive: true });
const run: BenchRun = { startedAt, machine, sections: only.length ? only : benches.map(([n]) => n), full: only.length === 0, failed, rows: all };
writeFileSync(join(runs, `${startedAt.replace(/[:.]/g, '-')}.json`), `${JSON.stringify(run, null, 1)}\n`);
process.exit(failed ? 1 : 0);
