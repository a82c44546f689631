/**
 * Running the Lambda's plan in a child process under a Lambda memory size's CPU share (lambda-cpu.ts, scale.ts):
 * a cgroup v1 cpu controller with a CFS quota of memory / 1769 MB of a vCPU (Lambda: one vCPU at 1769 MB), the
 * child bundled first so it does not spend its small share compiling TypeScript.
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, rmdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { build } from 'esbuild';
import { LAMBDA_MB_PER_VCPU } from '../src/probe/cpu-share.js';
import { BenchFailure } from './common.js';
import type { ChildArgs } from './lambda-cpu-child.js';

export const CGROUP_ROOT = '/sys/fs/cgroup/cpu';
const PERIOD_US = 100_000;

export interface ChildResult {
  handshakes: Record<'websocket' | 'spdy', number[]>;
  /** What HandshakeLatency publishes: the handshakes not marked as our own CPU's. */
  published: Record<'websocket' | 'spdy', number[]>;
  runMs: number[];
  marked: Array<{ round: number; transport: string; ms: number; busyMs: number }>;
  distorted: Record<'websocket' | 'spdy', number>;
  sessions: number;
  failures: string[];
  longestWaitMs: number;
  maxInFlight: number;
  forcedByWindow: number;
  maxRssMiB: number;
}

/** Whether this machine lets us make CPU-limited cgroups (root, cgroup v1 cpu controller); says why not. */
export function cgroupsUsable(bench: string): boolean {
  if (existsSync(join(CGROUP_ROOT, 'cgroup.procs'))) return true;
  console.error(`${bench}: skipped, ${CGROUP_ROOT} is not a cgroup v1 cpu controller here`);
  return false;
}

export async function buildChild(): Promise<string> {
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
    external: ['bufferutil'],
    banner: { js: "import { createRequire as __r } from 'node:module'; const require = __r(import.meta.url);" },
  });
  return script;
}

function cgroupFor(memoryMb: number | undefined): string | undefined {
  if (memoryMb === undefined) return undefined;
  const dir = join(CGROUP_ROOT, `ksp-bench-${memoryMb}mb-${process.pid}`);
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'cpu.cfs_period_us'), String(PERIOD_US));
  writeFileSync(join(dir, 'cpu.cfs_quota_us'), String(Math.round((PERIOD_US * memoryMb) / LAMBDA_MB_PER_VCPU)));
  return dir;
}

/** Runs the child with `args`, unlimited or under `memoryMb`'s CPU share; every session must be ok unless `lossesReported`. */
export async function runChild(script: string, args: ChildArgs, memoryMb?: number, lossesReported = false): Promise<ChildResult> {
  const group = cgroupFor(memoryMb);
  const what = `${memoryMb ?? 'unlimited'} MB, ${args.clusters} clusters, ${args.mode}`;
  try {
    const c = spawn(process.execPath, [script, JSON.stringify(args)], { stdio: ['pipe', 'pipe', 'pipe'] });
    if (group) writeFileSync(join(group, 'cgroup.procs'), String(c.pid));
    let out = '';
    let err = '';
    c.stdout.on('data', (d) => (out += d));
    c.stderr.on('data', (d) => (err += d));
    c.stdin.write('go\n');
    const code = await new Promise<number | null>((r) => c.on('close', r));
    if (code !== 0) throw new BenchFailure(`lambda-cpu child (${what}) failed: ${err.slice(-400)}`);
    const r = JSON.parse(out) as ChildResult;
    if (r.failures.length && !lossesReported)
      throw new BenchFailure(`lambda-cpu child (${what}): ${r.failures.length} of ${r.sessions} sessions failed, e.g. ${r.failures.slice(0, 3).join('; ')}`);
    return r;
  } finally {
    if (group) rmdirSync(group);
  }
}
