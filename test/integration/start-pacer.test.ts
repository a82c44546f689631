/**
 * The start pacer in the engine (src/probe/start-pacer.ts): at Lambda's 512 MB share one session's start (dial,
 * upgrade, first echo) runs at a time, so no handshake is timed while another session's TLS and zlib hold our
 * event loop; without the pacer (the behaviour before it) the starts overlap. The emulator runs in a process of its
 * own, as the API server does; the progress events say when each session began and when its start was over.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { lambdaVcpus } from '../../src/probe/cpu-share.js';
import { runPlan } from '../../src/probe/runner.js';
import type { SessionProgress } from '../../src/probe/session.js';
import { SLOT_MS, StartPacer, WINDOW_MS } from '../../src/probe/start-pacer.js';
import { rowKey } from '../../src/probe/types.js';
import { startEmulatorProcess, type EmulatorProcess } from '../helpers/emulator-process.js';
import { labPlan } from '../helpers/plan.js';

let lab: EmulatorProcess;
beforeAll(async () => {
  lab = await startEmulatorProcess();
}, 30_000);
afterAll(() => lab?.stop());

/** Runs the plan and returns each session's start as [began, over] (ms), from its progress events. */
async function starts(pacer: StartPacer | null) {
  const began = new Map<string, number>();
  const windows: Array<[number, number]> = [];
  const onProgress = (e: SessionProgress) => {
    const key = `${rowKey(e.spec)}/${e.spec.transport}`;
    if (e.state === 'connecting') began.set(key, performance.now());
    else if (began.has(key)) {
      windows.push([began.get(key)!, performance.now()]);
      began.delete(key);
    }
  };
  const plan = labPlan(lab.url, { keepalives: ['kubectl', 'none'], holdsSeconds: [0, 1], echoTimeoutMs: 5_000 });
  const report = await runPlan(plan, { skipPreflight: true, pacer, onProgress });
  return { report, windows: windows.sort((a, b) => a[0] - b[0]) };
}

/** Pairs of starts that ran at the same time, leaving out a start that outlived its slot (it was waiting on the network). */
const overlaps = (w: Array<[number, number]>, slotMs = SLOT_MS) =>
  w.flatMap(([b, e], i) =>
    w
      .slice(i + 1)
      .filter(([b2]) => b2 < e && e - b <= slotMs)
      .map((x) => [[b, e], x]),
  );

describe('the start pacer in a run', () => {
  it("at 512 MB's share: one start at a time, each session's wait recorded, every session ok", async () => {
    await starts(null); // warm-up: a fresh process compiles its code in its first sessions
    const pacer = new StartPacer({ share: { vcpus: lambdaVcpus(512), source: 'lambda-memory' } });
    const { report, windows } = await starts(pacer);
    expect(report.results).toHaveLength(12);
    expect(report.results.every((r) => r.ok)).toBe(true);
    expect(windows).toHaveLength(12);
    expect(overlaps(windows)).toEqual([]);
    expect(pacer.stats()).toMatchObject({ maxInFlight: 1, started: 12, forcedByWindow: 0 });
    expect(pacer.stats().longestWaitMs).toBeLessThan(WINDOW_MS);
    // Every session but the first waited for its turn, and says how long.
    expect(report.results.filter((r) => (r.startWaitMs ?? 0) > 0).length).toBeGreaterThanOrEqual(11);
  }, 60_000);

  it('without a pacer (as before it) the starts overlap: the check above can fail', async () => {
    const { report, windows } = await starts(null);
    expect(report.results.every((r) => r.ok)).toBe(true);
    expect(overlaps(windows, Number.POSITIVE_INFINITY).length).toBeGreaterThan(0);
    expect(report.results.some((r) => r.startWaitMs !== undefined)).toBe(false);
  }, 60_000);
});
