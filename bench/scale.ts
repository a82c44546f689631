/**
 * npm run bench -- scale: one location of N clusters (N = 10, 25, 50) in one run, as the function runs it — the
 * full plan (exec and port-forward × both transports × two holds × kubectl's keepalive and none: 16 sessions per
 * cluster, 800 at 50 clusters) with one start pacer — in a child under the CPU share of a memory size, against
 * one TLS emulator serving every cluster name. Reports wall time, peak RSS, the handshake p50 against the peer
 * (the same N unlimited, one start at a time), the handshakes marked as our own CPU's, sessions lost and how long
 * the pacer made starts wait. The memory default and the session-start limit (src/config/location-size.ts) are
 * read from it: docs/benchmarks.md.
 */
import { startEmulatorWithKubeconfig } from '../lab/emulator/kubeconfig.js';
import { LAMBDA_MB_PER_VCPU } from '../src/probe/cpu-share.js';
import { defaultMemoryMb } from '../src/config/location-size.js';
import { median, percentile, type Row } from './common.js';
import { buildChild, cgroupsUsable, runChild } from './cpu-child.js';

const HOLDS = [3, 10] as const;
const SESSIONS_PER_CLUSTER = 2 * 2 * HOLDS.length * 2;
const TARGET_RATIO = 2;

export async function scaleBench(): Promise<Row[]> {
  if (!cgroupsUsable('scale')) return [];
  const script = await buildChild();
  const lab = await startEmulatorWithKubeconfig({ tls: true });
  const rows: Row[] = [];
  const B = 'scale';
  try {
    for (const clusters of [10, 25, 50]) {
      const sessions = clusters * SESSIONS_PER_CLUSTER;
      const args = { kubeconfig: lab.kubeconfig, rounds: 1, clusters, holdsSeconds: [...HOLDS], keepalives: ['kubectl', 'none'] as const };
      const floor = await runChild(script, { ...args, keepalives: [...args.keepalives], mode: 'floor' });
      const chosen = defaultMemoryMb(sessions);
      // The chosen default, and the size below it (where the limit comes from).
      const sizes = [...new Set([chosen, ...[512, 1024, 1769].filter((m) => m < chosen).slice(-1)])];
      for (const mb of sizes) {
        const r = await runChild(script, { ...args, keepalives: [...args.keepalives], mode: 'paced' }, mb, true);
        if (r.failures.length) console.error(`scale ${clusters} clusters at ${mb} MB: lost ${r.failures.slice(0, 5).join('; ')}`);
        const label = `${clusters} clusters (${sessions} sessions), ${mb} MB (${((mb / LAMBDA_MB_PER_VCPU) * 100).toFixed(0)}% of a vCPU)${mb === chosen ? ', the default' : ''}`;
        for (const t of ['websocket', 'spdy'] as const) {
          const ratio = median(r.handshakes[t]) / median(floor.handshakes[t]);
          rows.push({
            bench: B,
            what: `${label}: ${t} handshake p50 (peer ${median(floor.handshakes[t]).toFixed(1)} ms; p99 ${percentile(r.handshakes[t], 99).toFixed(0)} ms; ${r.distorted[t]} of ${r.handshakes[t].length} marked)`,
            value: median(r.handshakes[t]),
            unit: 'ms',
            ratio: `${ratio.toFixed(1)}× the peer`,
            ...(mb === chosen ? { target: `≤ ${TARGET_RATIO}× the peer`, pass: ratio <= TARGET_RATIO } : {}),
          });
        }
        rows.push({
          bench: B,
          what: `${label}: wall time of the run (holds ${HOLDS.join(' s, ')} s; longest wait for a start ${(r.longestWaitMs / 1000).toFixed(1)} s, ${r.forcedByWindow} starts forced by the window)`,
          value: r.runMs[0]! / 1000,
          unit: 's',
        });
        rows.push({
          bench: B,
          what: `${label}: peak RSS`,
          value: r.maxRssMiB,
          unit: 'MiB',
          ratio: `${((r.maxRssMiB / mb) * 100).toFixed(0)} % of the memory size`,
        });
        rows.push({
          bench: B,
          what: `${label}: sessions lost`,
          value: r.failures.length,
          unit: `of ${r.sessions}`,
          target: '0',
          pass: r.failures.length === 0,
        });
      }
    }
  } finally {
    await lab.stop();
  }
  return rows;
}
