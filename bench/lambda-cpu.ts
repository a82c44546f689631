/**
 * How much of HandshakeLatency is the function's own CPU at each Lambda memory size, and whether the start pacer
 * (src/probe/start-pacer.ts) keeps it the path's. Lambda gives a function CPU in proportion to its memory (one
 * vCPU at 1769 MB), so a child process runs the Lambda's plan inside a cgroup (v1 cpu controller, CFS quota)
 * limited to that share, against the TLS emulator in this process (unlimited) — the pacer reads the child's quota
 * from its cgroup as it reads Lambda's from the function's memory. The peer, in the same run: an unlimited child
 * starting one session at a time (the path's own handshake, nothing of ours queued in front of it). Needs a
 * writable /sys/fs/cgroup/cpu (root); says so and skips otherwise.
 */
import { LAMBDA_MB_PER_VCPU } from '../src/probe/cpu-share.js';
import { median, percentile, type Row } from './common.js';
import { buildChild, cgroupsUsable, runChild, type ChildResult } from './cpu-child.js';
import { emulatorProcess, stopProcesses } from './throughput.js';

const SIZES = [128, 256, 512, 1024] as const;
/** The plans: the single location's (one cluster) and a 10-cluster location's, rounds each. */
const PLANS = [
  // Twenty rounds (40 handshakes a transport): a fresh child's first handshake is a cold process's (up to 100 ms
  // at 512 MB, our JIT and first TLS context), and with 18 it alone was 5.6 % of the readings.
  { clusters: 1, rounds: 20, sizes: SIZES },
  // Six rounds: 120 handshakes a transport, so that the p99 is not simply the slowest one.
  { clusters: 10, rounds: 6, sizes: [512, 1024] as const },
] as const;
/** Issue 26's target: at 512 MB the handshake p50 within 2× of the unlimited peer, both transports. */
const TARGET_MB = 512;
const TARGET_RATIO = 2;
/**
 * Issue 42's: at 512 MB the p99 of what HandshakeLatency publishes (the handshakes not marked as our own CPU's,
 * src/metrics/datums.ts; CloudWatch's p99 is taken over those datums) within 3× of the peer's own p99.
 */
const TARGET_P99_RATIO = 3;
/** And it may not get there by leaving readings out: at most this share of handshakes withheld. */
const MAX_WITHHELD_PERCENT = 5;

type Mode = 'paced' | 'floor' | 'unpaced';

/** Which rounds the marked handshakes of `t` came in, and how long they read (round 1 is a cold process's). */
function markedIn(r: ChildResult, t: string): string {
  const m = r.marked.filter((x) => x.transport === t);
  return m.length ? `: ${m.map((x) => `round ${x.round}, ${x.ms.toFixed(0)} ms`).join('; ')}` : '';
}

export async function lambdaCpuBench(): Promise<Row[]> {
  if (!cgroupsUsable('lambda-cpu')) return [];
  const script = await buildChild();
  // TLS, as the function talks to an API server (the TLS handshake is most of a start's CPU). The emulator runs in
  // a process of its own: inside `npm run bench` this process carries the earlier benches' heap, and the server's
  // share of a handshake then read up to 2× slower in the full run than alone (2026-12-04).
  const lab = await emulatorProcess(undefined, { args: ['--tls'] });
  const rows: Row[] = [];
  const B = 'Lambda CPU share';
  const child = (plan: (typeof PLANS)[number], mode: Mode, memoryMb?: number) =>
    runChild(script, { kubeconfig: lab.kubeconfig, rounds: plan.rounds, clusters: plan.clusters, mode, holdsSeconds: [0], keepalives: ['kubectl'] }, memoryMb);
  try {
    for (const plan of PLANS) {
      const label = `${plan.clusters} cluster${plan.clusters > 1 ? 's' : ''} (${plan.clusters * 4} sessions at once)`;
      const floor = await child(plan, 'floor');
      const floorP50 = (t: 'websocket' | 'spdy') => median(floor.handshakes[t]!);
      const floorP99 = (t: 'websocket' | 'spdy') => percentile(floor.handshakes[t]!, 99);
      for (const t of ['websocket', 'spdy'] as const)
        rows.push(
          { bench: B, what: `${label}, unlimited, one start at a time (the peer): ${t} handshake p50`, value: floorP50(t), unit: 'ms' },
          { bench: B, what: `${label}, unlimited, one start at a time (the peer): ${t} handshake p99`, value: floorP99(t), unit: 'ms' },
        );
      const unpaced = await child(plan, 'unpaced');
      for (const t of ['websocket', 'spdy'] as const)
        rows.push({
          bench: B,
          what: `${label}, unlimited, every session at once (no pacer): ${t} handshake p50`,
          value: median(unpaced.handshakes[t]!),
          unit: 'ms',
          ratio: `${(median(unpaced.handshakes[t]!) / floorP50(t)).toFixed(1)}× the peer`,
        });
      for (const mb of plan.sizes) {
        const share = `${((mb / LAMBDA_MB_PER_VCPU) * 100).toFixed(0)}% of a vCPU`;
        // [label, result, whether it is the shipped behaviour the target is on]
        const runs: Array<[string, ChildResult, boolean]> = [[`${mb} MB (${share}), paced`, await child(plan, 'paced', mb), mb === TARGET_MB]];
        // The pacer's effect, measured: the same size without it (the behaviour before 2026-12-03).
        if (mb === TARGET_MB) runs.push([`${mb} MB (${share}), no pacer`, await child(plan, 'unpaced', mb), false]);
        for (const [what, r, targeted] of runs) {
          for (const t of ['websocket', 'spdy'] as const) {
            const h = r.handshakes[t]!;
            const ratio = median(h) / floorP50(t);
            rows.push({
              bench: B,
              what: `${label}, ${what}: ${t} handshake p50 (p99 ${percentile(h, 99).toFixed(1)} ms; ${r.distorted[t]} of ${h.length} marked as our own CPU's)`,
              value: median(h),
              unit: 'ms',
              ratio: `${ratio.toFixed(1)}× the peer`,
              ...(targeted ? { target: `≤ ${TARGET_RATIO}× the peer`, pass: ratio <= TARGET_RATIO } : {}),
            });
            if (!targeted) continue;
            const p = r.published[t]!;
            const p99Ratio = percentile(p, 99) / floorP99(t);
            rows.push({
              bench: B,
              what: `${label}, ${what}: ${t} handshake p99 as published (${p.length} of ${h.length}: the ${h.length - p.length} marked as our own CPU's are not; of all ${percentile(h, 99).toFixed(1)} ms)`,
              value: percentile(p, 99),
              unit: 'ms',
              ratio: `${p99Ratio.toFixed(1)}× the peer's p99`,
              target: `≤ ${TARGET_P99_RATIO}× the peer's p99`,
              pass: p99Ratio <= TARGET_P99_RATIO,
            });
            // A p99 kept low by withholding readings would be no reading at all: the share withheld is held too.
            const withheld = ((h.length - p.length) / h.length) * 100;
            rows.push({
              bench: B,
              what: `${label}, ${what}: ${t} handshakes withheld (marked as our own CPU's${markedIn(r, t)})`,
              value: withheld,
              unit: '%',
              target: `≤ ${MAX_WITHHELD_PERCENT} %`,
              pass: withheld <= MAX_WITHHELD_PERCENT,
            });
          }
          rows.push({
            bench: B,
            what: `${label}, ${what}: one run, p50 (${r.maxInFlight ? `${r.maxInFlight} start(s) at once; longest wait for a turn ${r.longestWaitMs} ms` : 'every session at once'})`,
            value: median(r.runMs),
            unit: 'ms',
          });
        }
      }
    }
  } finally {
    await stopProcesses(lab.child);
  }
  return rows;
}
