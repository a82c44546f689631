/**
 * Memory per held idle session: RSS growth with 100 and 500 sessions per transport, in a clean child process
 * (memory-child.ts), from a baseline the process reached idle (V8 has given back the young generation the
 * warm-up grew) and, beside it, from one right after the warm-up.
 */
import { spawn } from 'node:child_process';
import { startEmulatorWithKubeconfig } from '../lab/emulator/kubeconfig.js';
import { BenchFailure, type Row } from './common.js';

function run(cmd: string, args: string[]): Promise<{ status: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(cmd, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c) => (stdout += c));
    child.stderr.on('data', (c) => (stderr += c));
    const timer = setTimeout(() => child.kill('SIGKILL'), 120_000);
    child.on('close', (status) => (clearTimeout(timer), resolve({ status, stdout, stderr })));
  });
}

const IDLE_TARGET_KIB: Record<string, number> = { spdy: 25, websocket: 15 };
const signed = (x: number) => `${x >= 0 ? '+' : ''}${x.toFixed(1)}`;

export async function memoryBench(): Promise<Row[]> {
  const lab = await startEmulatorWithKubeconfig({});
  const rows: Row[] = [];
  type Measure = { count: number; alive: number; rss: number; heap: number; external: number; newSpace: number };
  const measure = async (transport: string, n: number, baseline: 'warm' | 'settled'): Promise<Measure> => {
    // Async: the emulator lives in this process and must keep answering while the child runs.
    const r = await run(process.execPath, [
      '--expose-gc',
      '--import',
      'tsx',
      'bench/memory-child.ts',
      lab.emulator.url.toString(),
      transport,
      String(n),
      baseline,
    ]);
    if (r.status !== 0) throw new BenchFailure(`memory child (${transport} × ${n}) failed: ${r.stderr.slice(-500)}`);
    const m = JSON.parse(r.stdout) as Measure;
    if (m.alive !== n) throw new BenchFailure(`memory child (${transport}): only ${m.alive} of ${n} sessions were open`);
    return m;
  };
  const kib = (bytes: number, n: number) => bytes / n / 1024;
  try {
    for (const transport of ['spdy', 'websocket']) {
      const totals = new Map<number, number>();
      for (const n of [100, 500]) {
        const m = await measure(transport, n, 'settled');
        const warm = await measure(transport, n, 'warm');
        const perKiB = kib(m.rss, n);
        totals.set(n, m.rss);
        rows.push({
          bench: 'memory per idle session',
          what: `${transport} exec × ${n} (live heap ${kib(m.heap, n).toFixed(1)} KiB/session, external ${kib(m.external, n).toFixed(1)}; V8's young generation ${signed(m.newSpace / 2 ** 20)} MiB; from a baseline right after the warm-up, whose young generation set-up grows further: ${kib(warm.rss, n).toFixed(1)} KiB RSS/session, young generation ${signed(warm.newSpace / 2 ** 20)} MiB)`,
          value: perKiB,
          unit: 'KiB RSS/session',
          // Issue 42: SPDY at most 25 KiB at ×100 (issue 26 had 50), WebSocket 15.
          ...(n === 100
            ? { target: `≤ ${IDLE_TARGET_KIB[transport]} KiB`, pass: perKiB <= IDLE_TARGET_KIB[transport]! }
            : { target: '< 100 KiB', pass: perKiB < 100 }),
        });
      }
      const marginal = (totals.get(500)! - totals.get(100)!) / 400 / 1024;
      rows.push({
        bench: 'memory per idle session',
        what: `${transport} exec, marginal from 100 to 500 sessions`,
        value: marginal,
        unit: 'KiB RSS/session',
        target: '< 100 KiB',
        pass: marginal < 100,
      });
    }
  } finally {
    await lab.stop();
  }
  return rows;
}
