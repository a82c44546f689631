/**
 * The CLI in a process of its own, for the hostile-server suite (test/integration/hostile-cli.test.ts): runs
 * `kube-stream-probe` (src/cli/main.ts's main) once per medium — the table with -v (the terminal and the wire log),
 * `-o json` and `-o html` — each writing its stdout and stderr to files, and reports each run's exit code, wall time and
 * peak RSS as JSON in the result file. One after the other, each run's peak is the kernel's high-water mark (VmHWM),
 * reset before it (`5 > /proc/self/clear_refs`, Linux ≥ 4.0) after a full GC; with KSP_MEDIA_AT_ONCE=1 the three run at
 * once (for attacks that cost time, not memory) and share one peak.
 *
 *   node --expose-gc --import tsx test/helpers/cli-child.ts RESULT.json OUTDIR ARG...
 */
import { createWriteStream, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { main } from '../../src/cli/main.js';

export const MEDIA = ['table', 'json', 'html'] as const;
export type Medium = (typeof MEDIA)[number];

export interface ChildRun {
  readonly medium: Medium;
  readonly code: number;
  readonly seconds: number;
  /** VmHWM, MiB: this run's peak resident memory (with KSP_MEDIA_AT_ONCE, the three runs' together). */
  readonly peakRssMiB: number;
  readonly stdout: string;
  readonly stderr: string;
}
export interface ChildResult {
  readonly runs: ChildRun[];
}

const peakMiB = () => Number(/^VmHWM:\s+(\d+) kB$/m.exec(readFileSync('/proc/self/status', 'utf8'))?.[1] ?? Number.NaN) / 1024;
function resetPeak(): void {
  (globalThis as { gc?: () => void }).gc?.();
  writeFileSync('/proc/self/clear_refs', '5');
}

const [resultFile, outDir, ...args] = process.argv.slice(2);
if (!resultFile || !outDir) throw new Error('usage: cli-child.ts RESULT.json OUTDIR ARG...');

async function run(medium: Medium): Promise<Omit<ChildRun, 'peakRssMiB'>> {
  const stdout = join(outDir!, `${medium}.stdout`);
  const stderr = join(outDir!, `${medium}.stderr`);
  const out = createWriteStream(stdout);
  const err = createWriteStream(stderr);
  const argv = medium === 'table' ? [...args, '-v'] : [...args, '-o', medium];
  const t0 = performance.now();
  // A connection's last wire-log line may come after main() returned (a peer's late FIN): kept out, not a crash.
  const code = await main(argv, {
    out: (t) => void (out.writableEnded || out.write(t)),
    err: (t) => void (err.writableEnded || err.write(t)),
    interactive: false,
    env: { PATH: process.env.PATH, HOME: '/nonexistent' },
  }).catch(() => -1);
  const seconds = (performance.now() - t0) / 1000;
  await Promise.all([new Promise((r) => out.end(r)), new Promise((r) => err.end(r))]);
  return { medium, code, seconds, stdout, stderr };
}

const runs: ChildRun[] = [];
if (process.env.KSP_MEDIA_AT_ONCE === '1') {
  resetPeak();
  const done = await Promise.all(MEDIA.map(run));
  const peak = peakMiB();
  for (const r of done) runs.push({ ...r, peakRssMiB: peak });
} else {
  for (const medium of MEDIA) {
    resetPeak();
    const r = await run(medium);
    runs.push({ ...r, peakRssMiB: peakMiB() });
  }
}
writeFileSync(resultFile, JSON.stringify({ runs } satisfies ChildResult));
// Sockets a hostile server holds open must not keep this process alive.
process.exit(0);
