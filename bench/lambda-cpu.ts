/**
 * How much of HandshakeLatency is the function's own CPU at each Lambda
 * memory size. Lambda gives a function CPU in proportion to its memory (one
 * vCPU at 1769 MB), so a child process runs the Lambda's plan inside a cgroup
 * (v1 cpu controller, CFS quota) limited to that share, against the emulator
 * in this process (unlimited), and is compared with an unlimited child in the
 * same run. Needs a writable /sys/fs/cgroup/cpu (root); says so and skips
 * otherwise.
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, rmdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { build } from 'esbuild';
import { startEmulatorWithKubeconfig } from '../lab/emulator/kubeconfig.js';
import { BenchFailure, median, percentile, type Row } from './common.js';

const CGROUP_ROOT = '/sys/fs/cgroup/cpu';
const PERIOD_US = 100_000;
/** Lambda: 1769 MB is one full vCPU; CPU scales linearly with memory below it. */
const MB_PER_VCPU = 1769;
const ROUNDS = 7;
const SIZES = [128, 256, 512, 1024] as const;

function cgroupFor(memoryMb: number | undefined): string | undefined {
  if (memoryMb === undefined) return undefined;
  const dir = join(CGROUP_ROOT, `ksp-bench-${memoryMb}mb-${process.pid}`);
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'cpu.cfs_period_us'), String(PERIOD_US));
  writeFileSync(join(dir, 'cpu.cfs_quota_us'), String(Math.round((PERIOD_US * memoryMb) / MB_PER_VCPU)));
  return dir;
}

async function child(
  script: string,
  server: string,
  memoryMb?: number,
): Promise<{ handshakes: Record<string, number[]>; runMs: number[]; distorted: Record<string, number> }> {
  const group = cgroupFor(memoryMb);
  try {
    const c = spawn(process.execPath, [script, server, String(ROUNDS)], { stdio: ['pipe', 'pipe', 'pipe'] });
    if (group) writeFileSync(join(group, 'cgroup.procs'), String(c.pid));
    let out = '';
    let err = '';
    c.stdout.on('data', (d) => (out += d));
    c.stderr.on('data', (d) => (err += d));
    c.stdin.write('go\n');
    const code = await new Promise<number | null>((r) => c.on('close', r));
    if (code !== 0) throw new BenchFailure(`lambda-cpu child (${memoryMb ?? 'unlimited'} MB) failed: ${err.slice(-400)}`);
    return JSON.parse(out);
  } finally {
    if (group) rmdirSync(group);
  }
}

export async function lambdaCpuBench(): Promise<Row[]> {
  if (!existsSync(join(CGROUP_ROOT, 'cgroup.procs'))) {
    console.error(`lambda-cpu: skipped, ${CGROUP_ROOT} is not a cgroup v1 cpu controller here`);
    return [];
  }
  // A bundle, so the child does not spend its small CPU share compiling TypeScript.
  const script = join(process.cwd(), '.tmp', 'lambda-cpu-child.mjs');
  mkdirSync(join(process.cwd(), '.tmp'), { recursive: true });
  await build({
    entryPoints: ['bench/lambda-cpu-child.ts'],
    outfile: script,
    bundle: true,
    platform: 'node',
    target: 'node20',
    format: 'esm',
    logLevel: 'warning',
    banner: { js: "import { createRequire as __r } from 'node:module'; const require = __r(import.meta.url);" },
  });
  const lab = await startEmulatorWithKubeconfig({});
  const rows: Row[] = [];
  try {
    const server = lab.emulator.url.toString();
    const free = await child(script, server);
    const freeP50 = median([...free.handshakes.websocket!, ...free.handshakes.spdy!]);
    rows.push({ bench: 'Lambda CPU share', what: 'handshake p50, no CPU limit (the peer)', value: freeP50, unit: 'ms' });
    const freeCount = free.handshakes.websocket!.length + free.handshakes.spdy!.length;
    rows.push({
      bench: 'Lambda CPU share',
      what: "no CPU limit: handshakes marked as our own CPU's",
      value: (100 * (free.distorted.websocket! + free.distorted.spdy!)) / freeCount,
      unit: '%',
      ratio: `${free.distorted.websocket! + free.distorted.spdy!} of ${freeCount}`,
    });
    for (const mb of SIZES) {
      const r = await child(script, server, mb);
      for (const t of ['websocket', 'spdy'] as const) {
        const h = r.handshakes[t]!;
        rows.push({
          bench: 'Lambda CPU share',
          what: `${mb} MB (${((mb / MB_PER_VCPU) * 100).toFixed(0)}% of a vCPU): ${t} handshake p50 / p99`,
          value: median(h),
          unit: 'ms',
          ratio: `p99 ${percentile(h, 99).toFixed(1)} ms; ${(median(h) / freeP50).toFixed(1)}× unlimited`,
        });
        rows.push({
          bench: 'Lambda CPU share',
          what: `${mb} MB: ${t} handshakes marked as our own CPU's (upgrade.ownCpu.distorted: not published as HandshakeLatency)`,
          value: (100 * r.distorted[t]!) / h.length,
          unit: '%',
          ratio: `${r.distorted[t]} of ${h.length}`,
        });
      }
      rows.push({ bench: 'Lambda CPU share', what: `${mb} MB: one plan (4 sessions, hold 0), p50`, value: median(r.runMs), unit: 'ms' });
    }
  } finally {
    await lab.stop();
  }
  return rows;
}
