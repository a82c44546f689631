import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmulatorWithKubeconfig, type EmulatorWithKubeconfig } from '../../lab/emulator/kubeconfig.js';
import { runSession, sessionDeadlineMs } from '../../src/probe/session.js';
import type { ClusterTarget } from '../../src/probe/types.js';
import { withTimeout, type Clock } from '../../src/timers.js';

/** A real clock, except that waits of exactly `skipMs` are over at the next turn of the event loop. */
function skipping(skipMs: number): Clock & { asked: number[] } {
  const asked: number[] = [];
  let skipped = 0;
  return {
    asked,
    now: () => performance.now() + skipped,
    after: (ms, fn) => {
      asked.push(ms);
      if (ms !== skipMs) {
        const t = setTimeout(fn, ms);
        return () => clearTimeout(t);
      }
      const t = setImmediate(() => {
        skipped += ms;
        fn();
      });
      return () => clearImmediate(t);
    },
  };
}

const timers = () => process.getActiveResourcesInfo().filter((r) => r === 'Timeout').length;

describe('timers', () => {
  it('withTimeout clears its timer when the promise wins, and resolves undefined when time wins', async () => {
    const before = timers();
    expect(await withTimeout(Promise.resolve('won'), 60_000)).toBe('won');
    expect(timers()).toBe(before);
    expect(await withTimeout(new Promise(() => undefined), 5)).toBeUndefined();
    expect(timers()).toBe(before);
  });
});

describe('a session on an injected clock', () => {
  let lab: EmulatorWithKubeconfig;
  beforeAll(async () => (lab = await startEmulatorWithKubeconfig({})));
  afterAll(() => lab.stop());

  const target = (): ClusterTarget => ({
    name: 'lab',
    connection: { server: lab.emulator.url },
    namespace: 'default',
    pod: 'probe-target',
    container: 'main',
    port: 8080,
  });

  it('holds "an hour" without waiting one: the hold waits on the injected clock', async () => {
    const clock = skipping(3_600_000);
    const t0 = performance.now();
    for (const operation of ['exec', 'portforward'] as const) {
      const r = await runSession({ operation, transport: 'websocket', keepalive: 'none', holdSeconds: 3600 }, target(), { echoTimeoutMs: 5_000, clock });
      expect(r.ok, `${operation}: ${r.error}`).toBe(true);
      expect(r.hold).toMatchObject({ survived: true, disconnectSeconds: null, cause: null });
      // The echo after the hold crossed an hour of quiet and was answered: the quiet gap is on the injected clock.
      expect(r.hold.quiet?.answeredQuietSeconds).toBeGreaterThanOrEqual(3600);
    }
    expect(clock.asked).toContain(3_600_000); // the hold
    expect(performance.now() - t0).toBeLessThan(60_000); // and it was not waited for
    expect(lab.emulator.upgrades.at(-1)!.pingsReceived).toBe(0); // keepalive none: nothing sent while "holding"
  });

  it('the deadline runs on the same clock: when it passes first, the result is classified, not lost', async () => {
    const holdSeconds = 3600;
    const clock = skipping(sessionDeadlineMs(holdSeconds, {}, { echoTimeoutMs: 5_000 }));
    const r = await runSession({ operation: 'exec', transport: 'spdy', keepalive: 'kubectl', holdSeconds }, target(), { echoTimeoutMs: 5_000, clock });
    expect(r).toMatchObject({ ok: false, errorCode: 'DEADLINE' });
    expect(r.error).toMatch(/did not finish within its deadline of 3650 s/);
  });
});
