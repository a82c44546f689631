/**
 * A handshake whose time is our own CPU's, not the path's (src/probe/own-cpu.ts): the emulator runs in a process
 * of its own (`kube-stream-probe emulator`), so the only thing that can delay reading its 101 here is this process.
 * Our event loop is kept busy for 150 ms right after the dial starts: the handshake is marked, shown with a `*`,
 * and not published as HandshakeLatency; an undisturbed one on the same path is published.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { reportDatums } from '../../src/metrics/datums.js';
import { resultsTable } from '../../src/cli/format.js';
import { runSession } from '../../src/probe/session.js';
import type { ClusterTarget, SessionResult } from '../../src/probe/types.js';
import { probeReport } from '../helpers/sessions.js';
import { startEmulatorProcess, type EmulatorProcess } from '../helpers/emulator-process.js';

let lab: EmulatorProcess;
let target: ClusterTarget;
beforeAll(async () => {
  lab = await startEmulatorProcess();
  target = lab.target('own-cpu');
}, 30_000);
afterAll(() => lab?.stop());

const busy = (ms: number) => {
  const end = performance.now() + ms;
  while (performance.now() < end);
};

async function session(blockMs: number): Promise<SessionResult> {
  const run = runSession({ operation: 'exec', transport: 'spdy', keepalive: 'kubectl', holdSeconds: 0 }, target, { echoTimeoutMs: 3000 });
  if (blockMs) setImmediate(() => busy(blockMs));
  return run;
}

describe('handshakes our own CPU distorted', () => {
  it('150 ms of our own busy loop during the handshake: marked, starred, not published; an undisturbed one is', async () => {
    await session(0); // warm-up: the first handshake of a process compiles code
    const calm = await session(0);
    const blocked = await session(150);
    expect(calm.ok && blocked.ok).toBe(true);
    // On a shared runner even a calm handshake can be slowed by the machine; it is always far less ours than the blocked one.
    expect(calm.upgrade.ownCpu!.busyMs).toBeLessThan(blocked.upgrade.ownCpu!.busyMs / 2);
    expect(blocked.upgrade.handshakeMs!).toBeGreaterThanOrEqual(150);
    expect(blocked.upgrade.ownCpu!.loopBusy).toBeGreaterThanOrEqual(0.5);
    expect(blocked.upgrade.ownCpu).toMatchObject({ distorted: true });
    expect(blocked.upgrade.ownCpu!.busyMs).toBeGreaterThanOrEqual(100);
    const published = (r: SessionResult) => reportDatums(probeReport([r], 'l', 'c')).filter((d) => d.name === 'HandshakeLatency');
    expect(published(calm)).toHaveLength(calm.upgrade.ownCpu!.distorted ? 0 : 1);
    expect(published(blocked)).toHaveLength(0);
    const text = resultsTable([{ report: probeReport([blocked], 'l', 'c') }]);
    expect(text).toMatch(/\d\*\s/);
    expect(text).toMatch(/^\* this process's own event loop was busy for half or more of that handshake/m);
  }, 30_000);
});
