/**
 * Handshake timing accuracy: when we say the 101 arrived vs when the emulator
 * wrote it (same process, same clock), and our upgrade time vs kubectl -v=7's
 * "101 Switching Protocols in N milliseconds" against the same server.
 */
import { openExec } from '../src/streaming/index.js';
import type { Transport } from '../src/streaming/types.js';
import { startEmulatorWithKubeconfig } from '../lab/emulator/kubeconfig.js';
import { runKubectl } from '../lab/kubectl.js';
import { BenchFailure, median, percentile, type Row } from './common.js';

const N = 40;

export async function handshakeBench(): Promise<Row[]> {
  const lab = await startEmulatorWithKubeconfig({});
  const rows: Row[] = [];
  try {
    for (const transport of ['spdy', 'websocket'] as Transport[]) {
      const errors: number[] = [];
      const upgrades: number[] = [];
      for (let i = 0; i < N; i++) {
        const s = await openExec(
          transport,
          { server: lab.emulator.url },
          { namespace: 'default', pod: 'probe-target', container: 'main', command: ['true'], keepalive: 'none' },
        );
        const rec = lab.emulator.upgrades.at(-1)!;
        if (rec.status !== 101 || rec.wrote101At === undefined) throw new BenchFailure(`${transport}: the emulator did not record a 101`);
        errors.push(s.timing.at101 - rec.wrote101At);
        upgrades.push(s.timing.phases.upgradeMs);
        await s.exit;
        s.close();
      }
      if (errors.some((e) => e < 0)) throw new BenchFailure(`${transport}: a 101 was "read" before it was written`);
      const p50 = median(errors);
      const p95 = percentile(errors, 95);
      rows.push({
        bench: 'handshake',
        what: `ours ${transport}: 101 read − 101 written by the emulator, p50 (p95 ${p95.toFixed(3)})`,
        value: p50,
        unit: 'ms',
        target: '< 1 ms (p50)',
        pass: p50 < 1,
      });
      rows.push({ bench: 'handshake', what: `ours ${transport}: request written → 101 (upgradeMs), p50`, value: median(upgrades), unit: 'ms' });
    }
    // kubectl's own view of the same SPDY upgrade.
    const theirs: number[] = [];
    for (let i = 0; i < 10; i++) {
      const r = await runKubectl('1.33', ['--kubeconfig', lab.kubeconfig, '-v=7', 'exec', 'probe-target', '--', 'true'], {
        env: { KUBECTL_REMOTE_COMMAND_WEBSOCKETS: 'false' },
      });
      // Older klog: "... 101 Switching Protocols in N milliseconds"; 1.33: structured "status=... milliseconds=N".
      const m = /101 Switching Protocols in (\d+) milliseconds/.exec(r.stderr) ?? /status="101 Switching Protocols" milliseconds=(\d+)/.exec(r.stderr);
      if (!m) throw new BenchFailure(`kubectl -v=7 printed no "101 Switching Protocols in N milliseconds": ${r.stderr.slice(-300)}`);
      theirs.push(Number(m[1]));
    }
    rows.push({ bench: 'handshake', what: 'kubectl 1.33 -v=7 SPDY "Switching Protocols in N ms" (whole ms), p50', value: median(theirs), unit: 'ms' });
  } finally {
    await lab.stop();
  }
  return rows;
}
