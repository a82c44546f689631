/** Shared bench plumbing: result rows, timing, byte-exact echo transfers. */
import type { Duplex } from 'node:stream';

export interface Row {
  readonly bench: string;
  readonly what: string;
  readonly value: number;
  readonly unit: string;
  /** e.g. "ours / kubectl" */
  readonly ratio?: string;
  readonly target?: string;
  readonly pass?: boolean;
}

export class BenchFailure extends Error {}

/** Where each `npm run bench` leaves its rows (git-ignored). */
export const BENCH_RUNS_DIR = '.tmp/bench-runs';

/** One `npm run bench`, as run.ts writes it. */
export interface BenchRun {
  readonly startedAt: string;
  readonly machine: string;
  /** The sections run, and whether that was all of them (no section named). */
  readonly sections: readonly string[];
  readonly full: boolean;
  /** A section failed its own check (bytes differ, no 101…). */
  readonly failed: boolean;
  readonly rows: readonly Row[];
}

export const fmt = (v: number) => (Math.abs(v) >= 100 ? v.toFixed(0) : Math.abs(v) >= 1 ? v.toFixed(2) : v.toPrecision(3));

export function rowsTable(rows: readonly Row[]): string {
  return [
    '| bench | what | value | unit | ratio | target | result |',
    '|---|---|---|---|---|---|---|',
    ...rows.map(
      (r) =>
        `| ${r.bench} | ${r.what} | ${fmt(r.value)} | ${r.unit} | ${r.ratio ?? ''} | ${r.target ?? ''} | ${r.pass === undefined ? '' : r.pass ? 'pass' : 'FAIL'} |`,
    ),
  ].join('\n');
}

export function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) >> 1]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
}

export function percentile(xs: number[], p: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))]!;
}

/** A patterned buffer (no runs of equal bytes), what the throughput benchmarks echo. */
export function payload(bytes: number): Buffer {
  const data = Buffer.alloc(bytes);
  for (let i = 0; i < bytes; i += 4) data.writeUInt32LE((i * 2654435761) >>> 0, i);
  return data;
}

/** Writes `data` through a duplex to an echo server in `chunk`-byte writes and reads it all back; verifies the bytes; returns MiB/s. */
export async function echoThroughput(stream: Duplex, data: Buffer, label: string, chunk = 256 * 1024): Promise<number> {
  // Byte-exact without hashing: each chunk is compared with what was sent at its offset (memcmp is ~20× cheaper
  // than SHA-256, which would otherwise be a third of the client process's CPU and tilt the comparison towards
  // kubectl, whose tunnel runs in another process than this check).
  let received = 0;
  let mismatchAt = -1;
  const t0 = performance.now();
  const done = new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new BenchFailure(`${label}: stalled at ${received} of ${data.length} bytes`)), 120_000);
    stream.on('data', (c: Buffer) => {
      if (mismatchAt < 0 && (received + c.length > data.length || !c.equals(data.subarray(received, received + c.length)))) mismatchAt = received;
      received += c.length;
      if (received >= data.length) {
        clearTimeout(timer);
        resolve();
      }
    });
    stream.on('error', (e) => (clearTimeout(timer), reject(e)));
  });
  for (let off = 0; off < data.length; off += chunk) {
    if (!stream.write(data.subarray(off, off + chunk))) await new Promise((r) => stream.once('drain', r));
  }
  await done;
  const seconds = (performance.now() - t0) / 1000;
  if (received !== data.length || mismatchAt >= 0)
    throw new BenchFailure(`${label}: echoed bytes differ (${received} bytes of ${data.length}, first difference in the chunk at ${mismatchAt})`);
  return data.length / (1024 * 1024) / seconds;
}
