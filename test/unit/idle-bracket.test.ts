/**
 * The rules that date a device that forgets idle flows, each on its own: how a loss is read against our own packets
 * (hold-activity.ts, on an injected clock and wire), how the run's quiet gaps bracket the timeout (idle-bracket.ts),
 * where the ladder's rungs go (idle-ladder.ts), which documented devices a bracket names (idle-devices.ts), what
 * proves idleness is what the device times (activity-check.ts), and what is published (datums.ts). The same rules
 * meet the kernel's own connection tracking in test/lab/kernel-forget.test.ts.
 */
import { describe, expect, it } from 'vitest';
import { reportDatums } from '../../src/metrics/datums.js';
import { idleCheckSpec, withIdleProof } from '../../src/probe/activity-check.js';
import { crossFindings } from '../../src/probe/cross-findings.js';
import { HoldActivity } from '../../src/probe/hold-activity.js';
import { bracketText, idleBracket, resolved } from '../../src/probe/idle-bracket.js';
import { devicesAt, devicesWithin, IDLE_DEVICES } from '../../src/probe/idle-devices.js';
import { LADDER_RUNGS, rungGaps, runLadder } from '../../src/probe/idle-ladder.js';
import { explainFailure } from '../../src/probe/diagnosis.js';
import type { Lost } from '../../src/probe/session-channel.js';
import type { HoldOutcome, IdleBracket, QuietEvidence, SessionResult, SessionSpec } from '../../src/probe/types.js';
import type { Clock } from '../../src/timers.js';
import { probeReport, session } from '../helpers/sessions.js';

/** A clock moved by hand, and a wire whose counters the test moves. */
function rig() {
  let now = 0;
  const timers: Array<{ at: number; fn: () => void }> = [];
  const clock: Clock = {
    now: () => now,
    after: (ms, fn) => {
      const t = { at: now + ms, fn };
      timers.push(t);
      return () => timers.splice(timers.indexOf(t), 1);
    },
  };
  const wire = { readBytes: 0, writtenBytes: 0 };
  const advance = (ms: number) => {
    const end = now + ms;
    for (;;) {
      timers.sort((a, b) => a.at - b.at);
      const next = timers[0];
      if (!next || next.at > end) break;
      timers.shift();
      now = next.at;
      next.fn();
    }
    now = end;
  };
  const activity = new HoldActivity(clock);
  return {
    activity,
    start: (quiet = true) => activity.start({ wire: () => ({ ...wire }) }, (at) => Math.round(at / 100) / 10, quiet),
    advance,
    send: () => (wire.writtenBytes += 6),
    receive: () => (wire.readBytes += 2),
    lost: (cause: Lost['cause']): HoldOutcome => activity.lostAt({ cause, atMs: now, sessionAtMs: now }, now / 1000),
  };
}

describe('a loss read against our own packets (hold-activity.ts)', () => {
  it('a reset right after a packet that crossed a longer quiet gap than any answered one: reset-reply, dated by that gap', () => {
    const r = rig();
    r.start();
    r.advance(5000);
    r.send(); // a ping after 5 s of quiet...
    r.advance(100);
    r.receive(); // ...answered
    r.advance(8000);
    r.send(); // the echo after 8 s of quiet
    r.advance(50);
    const h = r.lost('rst');
    // Sampled every 100 ms: each figure is within a sample of the truth.
    expect(h.quiet).toEqual({
      answeredQuietSeconds: expect.closeTo(5, 0),
      unanswered: { quietSeconds: expect.closeTo(8, 0), atSeconds: expect.closeTo(13.1, 0) },
      cut: 'reset-reply',
    });
    // The idle time before the loss does not count our own unanswered packet as movement.
    expect(h.idleSeconds).toBeGreaterThanOrEqual(8);
  });

  it('a reset right after a ping when a ping after as long a gap was answered before: the hop, not a forgotten flow', () => {
    const r = rig();
    r.start();
    for (let i = 0; i < 3; i++) {
      r.advance(5000);
      r.send();
      r.advance(100);
      r.receive();
    }
    r.advance(4900);
    r.send();
    r.advance(50);
    expect(r.lost('rst').quiet!.cut).toBe('hop');
  });

  it('a loss long after a packet that was never answered: no-reply (the flow vanished; our deadline or the kernel ended it)', () => {
    const r = rig();
    r.start();
    r.advance(5000);
    r.send();
    r.advance(56000);
    expect(r.lost('no-pong').quiet).toEqual({
      answeredQuietSeconds: null,
      unanswered: { quietSeconds: expect.closeTo(5, 0), atSeconds: expect.closeTo(5, 0) },
      cut: 'no-reply',
    });
  });

  it('a FIN right after our packet is the hop ending it (devices that forget flows reset, they never FIN)', () => {
    const r = rig();
    r.start();
    r.advance(7000);
    r.send();
    r.advance(50);
    expect(r.lost('fin').quiet!.cut).toBe('hop');
  });

  it('a cut with nothing of ours outstanding is the hop at its timer, dated since the last byte', () => {
    const r = rig();
    r.start();
    r.advance(6000);
    const h = r.lost('fin');
    expect(h.quiet!.cut).toBe('hop');
    expect(h.idleSeconds).toBe(6);
  });

  it('a shaped hold (data moving by design) gets no quiet evidence, and its idle time counts every byte', () => {
    const r = rig();
    r.start(false);
    r.advance(2000);
    r.send();
    r.advance(3000);
    const h = r.lost('fin');
    expect(h.quiet).toBeUndefined();
    expect(h.idleSeconds).toBeCloseTo(3, 0);
  });
});

const held = (over: Partial<SessionResult>, quiet: QuietEvidence, hold: Partial<HoldOutcome> = {}): SessionResult =>
  session('websocket', {
    keepalive: 'none',
    holdSeconds: 12,
    ok: !quiet.cut,
    hold: { survived: !quiet.cut, disconnectSeconds: quiet.cut ? 12 : null, cause: quiet.cut ? 'rst' : null, quiet, ...hold },
    ...over,
  });

describe('the bracket (idle-bracket.ts)', () => {
  it('is (longest answered gap, shortest unanswered gap], never the hold', () => {
    const results = [
      held({ keepalive: 'kubectl' }, { answeredQuietSeconds: 5 }),
      held({}, { answeredQuietSeconds: null, unanswered: { quietSeconds: 12, atSeconds: 12 }, cut: 'reset-reply' }),
      held(
        { keepalive: 'kubectl', operation: 'portforward' },
        { answeredQuietSeconds: null, unanswered: { quietSeconds: 10, atSeconds: 10 }, cut: 'reset-reply' },
      ),
    ];
    const b = idleBracket(results)!;
    expect(b).toMatchObject({
      atExpiry: 'reset',
      aboveSeconds: 5,
      atMostSeconds: 10,
      seenOn: { operation: 'portforward', transport: 'websocket', packet: 'ping' },
    });
    expect(bracketText(b)).toBe('between 5.0 and 10.0 s');
    expect(b.method).toMatch(/a packet after 5 s of quiet was answered, one after 10 s was reset/);
    expect(resolved(b)).toBe(false);
    expect(resolved({ aboveSeconds: 3.6, atMostSeconds: 4.3 })).toBe(true);
    expect(resolved({ aboveSeconds: 339.5, atMostSeconds: 365 })).toBe(true);
  });

  it('silent when nothing was ever reset; none when no flow was forgotten; none when the gaps contradict an idle timer', () => {
    const silent = held({}, { answeredQuietSeconds: null, unanswered: { quietSeconds: 12, atSeconds: 12 }, cut: 'no-reply' }, { cause: 'echo-timeout' });
    expect(idleBracket([silent])!.atExpiry).toBe('drop');
    expect(idleBracket([held({}, { answeredQuietSeconds: 12 })])).toBeUndefined();
    // A packet after 6 s answered, one after 5 s never: not an idle timer.
    const contradiction = held({}, { answeredQuietSeconds: 6, unanswered: { quietSeconds: 5, atSeconds: 30 }, cut: 'no-reply' });
    expect(idleBracket([contradiction])).toBeUndefined();
  });
});

describe("the ladder's rungs (idle-ladder.ts)", () => {
  it('go just below each documented timeout inside the bracket, then evenly, all inside it and apart', () => {
    expect(rungGaps(65, 360)).toEqual([124, 183, 232.8, 242, 301, 339.5]);
    const small = rungGaps(0, 5);
    expect(small).toEqual([0.7, 1.4, 2.1, 2.9, 3.6, 4.3]);
    for (const [lo, hi] of [
      [3.6, 4.3],
      [5, 10],
      [0, 1],
      [589, 621],
    ] as const) {
      const g = rungGaps(lo, hi);
      for (const x of g) expect(x > lo && x < hi).toBe(true);
      for (let i = 1; i < g.length; i++) expect(g[i]! - g[i - 1]!).toBeGreaterThanOrEqual(0.2 - 1e-9);
    }
  });
});

describe('the ladder run (idle-ladder.ts), with sessions standing in for a path', () => {
  /** A rung's session on a path where data after a gap of `answeredUpTo` s or less is answered, and later data reset. */
  const path = (answeredUpTo: number) => async (spec: SessionSpec) =>
    held(
      { ...spec, holdSeconds: spec.holdSeconds },
      spec.holdSeconds <= answeredUpTo
        ? { answeredQuietSeconds: spec.holdSeconds }
        : { answeredQuietSeconds: null, unanswered: { quietSeconds: spec.holdSeconds, atSeconds: spec.holdSeconds }, cut: 'reset-reply' },
    );
  const pingLost = held(
    { keepalive: 'kubectl', holdSeconds: 90 },
    { answeredQuietSeconds: null, unanswered: { quietSeconds: 5, atSeconds: 5 }, cut: 'no-reply' },
    { cause: 'no-pong', disconnectSeconds: 66 },
  );
  const options = { untilMs: Number.POSITIVE_INFINITY, echoTimeoutMs: 1000 };

  it('narrows a forgotten flow to within a second or a tenth, in rounds of concurrent rungs', async () => {
    const resetAt12 = held({}, { answeredQuietSeconds: null, unanswered: { quietSeconds: 12, atSeconds: 12 }, cut: 'reset-reply' });
    const rungs = await runLadder([resetAt12], path(4), options);
    const b = idleBracket([resetAt12], rungs)!;
    expect(b.aboveSeconds).toBeLessThanOrEqual(4);
    expect(b.atMostSeconds).toBeGreaterThan(4);
    expect(resolved(b)).toBe(true);
    expect(rungs.length).toBeLessThanOrEqual(2 * LADDER_RUNGS);
  });

  it('an unanswered ping where data after a longer gap is answered is no forgotten flow: no bracket (a hop dropping control frames)', async () => {
    const rungs = await runLadder([pingLost], path(1000), options);
    expect(rungs.map((r) => r.holdSeconds)).toContain(5.5);
    expect(idleBracket([pingLost], rungs)).toBeUndefined();
    // ...and the session keeps its no-pong diagnosis.
    expect(explainFailure(pingLost, { idle: idleBracket([pingLost], rungs) })!.code).toBe('no-pong');
  });

  it('starts no round that would end after `untilMs`', async () => {
    const resetAt12 = held({}, { answeredQuietSeconds: null, unanswered: { quietSeconds: 12, atSeconds: 12 }, cut: 'reset-reply' });
    expect(await runLadder([resetAt12], path(4), { ...options, untilMs: performance.now() + 5_000 })).toEqual([]);
  });
});

describe('the documented devices a measurement names (idle-devices.ts)', () => {
  it('a reset after 340–365 s is the AWS NAT Gateway or NLB; dropped silently, Network Firewall or EC2 tracking', () => {
    expect(devicesWithin('forgets-reset', 339.5, 365).map((d) => d.product)).toEqual([
      'AWS NAT Gateway',
      'AWS Network Load Balancer (TCP listener; TLS listeners: 350 s fixed)',
    ]);
    expect(devicesWithin('forgets-silent', 339.5, 365).map((d) => d.product)).toEqual([
      'AWS Network Firewall',
      'EC2 security-group connection tracking on Nitro v6 instances (5 days on earlier ones)',
    ]);
    expect(devicesWithin('forgets-reset', 232.8, 250).map((d) => d.product)).toEqual(['Azure NAT Gateway']);
    expect(devicesWithin('forgets-silent', 590, 620).map((d) => d.product)).toEqual(['GCP VPC firewall connection tracking']);
    expect(devicesWithin('forgets-reset', 3.6, 4.3)).toEqual([]);
  });

  it("timers that close and caps on a connection's life are matched exactly (3 %, at least 1 s)", () => {
    expect(devicesAt('closes', 60).map((d) => d.product)).toEqual(['AWS Application Load Balancer', "nginx (proxy_read_timeout's default)"]);
    expect(devicesAt('lifetime', 30).map((d) => d.product)).toEqual(['GCP external Application Load Balancer (backend service timeout)']);
    expect(devicesAt('closes', 350)).toEqual([]);
  });

  it('every device says where its figure comes from, and how to raise it or live with it', () => {
    for (const d of IDLE_DEVICES) {
      expect(d.source, d.product).toMatch(/https?:\/\/|reported/);
      expect(d.fix.length, d.product).toBeGreaterThan(10);
    }
  });
});

const bracket = (over: Partial<IdleBracket> = {}): IdleBracket => ({
  proof: 'unchecked',
  atExpiry: 'reset',
  aboveSeconds: 3.6,
  atMostSeconds: 4.3,
  method: 'm',
  rungs: [],
  seenOn: { operation: 'exec', transport: 'websocket', packet: 'data' },
  ...over,
});

describe('what proves a device times idleness (activity-check.ts)', () => {
  it('a session of the run that kept its flow known past the bracket by moving bytes more often', () => {
    const kubectl = held({ keepalive: 'kubectl' }, { answeredQuietSeconds: 5 });
    expect(withIdleProof(bracket({ aboveSeconds: 7.9, atMostSeconds: 8.6 }), [kubectl], undefined).proof).toBe('sessions');
    expect(withIdleProof(bracket(), [], undefined).proof).toBe('unchecked');
  });

  it('else the check: an echo more often than the lower end, past the upper end; survived = idle, lost = a cap', () => {
    const spec = idleCheckSpec(bracket())!;
    expect(spec).toMatchObject({ keepalive: 'none', echoEverySeconds: 2.9, holdSeconds: 12 });
    expect(idleCheckSpec(bracket({ aboveSeconds: 0 }))).toBeUndefined();
    const ran = session('websocket', { ...spec, ok: true });
    expect(withIdleProof(bracket(), [], ran)).toMatchObject({ proof: 'check', check: { everySeconds: 2.9, lostAtSeconds: null } });
    const lost = session('websocket', { ...spec, ok: false, hold: { survived: false, disconnectSeconds: 4.1, cause: 'rst' } });
    expect(withIdleProof(bracket(), [], lost)).toMatchObject({ proof: 'not-idle', check: { lostAtSeconds: 4.1 } });
  });
});

describe('"pings ignored" only where a session moving data proved it (cross-findings.ts)', () => {
  const cut = (keepalive: 'kubectl' | 'none', idleSeconds: number) =>
    session('websocket', {
      keepalive,
      holdSeconds: 8,
      ok: false,
      hold: {
        survived: false,
        disconnectSeconds: 6,
        cause: 'fin',
        idleSeconds,
        sinceDataSeconds: 6,
        quiet: { answeredQuietSeconds: keepalive === 'kubectl' ? 5 : null, cut: 'hop' },
      },
    });
  const pair = [cut('kubectl', 1), cut('none', 6)];
  const codes = (l?: NonNullable<Parameters<typeof crossFindings>[1]>['lifetime']) => crossFindings(pair, { lifetime: l }).map((d) => d.code);
  const check = { cutSeconds: 6, transport: 'websocket' as const, holdSeconds: 13, everySeconds: 2 };
  it('no check: "cut despite pings", never pings-ignored', () => expect(codes()).toEqual(['cut-despite-pings']));
  it('the check survived: pings-ignored', () => expect(codes({ ...check, outcome: 'data-only-timer', checkCutSeconds: null })).toEqual(['pings-ignored']));
  it('the check was cut at the same time: a lifetime cap (said per session), no cross finding', () =>
    expect(codes({ ...check, outcome: 'lifetime-cap', checkCutSeconds: 6 })).toEqual([]));
});

describe('IdleTimeout (datums.ts): a measurement, never the moment our own packet met a forgotten flow', () => {
  const forgottenAt12 = held({}, { answeredQuietSeconds: null, unanswered: { quietSeconds: 12, atSeconds: 12 }, cut: 'reset-reply' }, { idleSeconds: 12 });
  const idleTimeouts = (b?: IdleBracket) =>
    reportDatums({ ...probeReport([forgottenAt12], 'l', 'c'), ...(b ? { idleBracket: b } : {}) })
      .filter((d) => d.name === 'IdleTimeout')
      .map((d) => d.value);
  it('nothing without a resolved bracket; the upper end with one', () => {
    expect(idleTimeouts()).toEqual([]);
    expect(idleTimeouts(bracket({ aboveSeconds: 0, atMostSeconds: 12 }))).toEqual([]);
    expect(idleTimeouts(bracket())).toEqual([4.3]);
  });
  it("a hop's own cut still publishes its idle time", () => {
    const hop = held({}, { answeredQuietSeconds: null, cut: 'hop' }, { cause: 'fin', idleSeconds: 60.1 });
    expect(reportDatums(probeReport([hop], 'l', 'c')).find((d) => d.name === 'IdleTimeout')!.value).toBe(60.1);
  });
});
