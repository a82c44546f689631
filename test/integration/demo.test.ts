/**
 * The demo, run for real (emulator + simulated hops on loopback): each path
 * must produce the verdicts and diagnoses that its hop causes, with the
 * measured disconnect times.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { DEMO_HOLD_SECONDS, DEMO_IDLE_CUT_SECONDS } from '../../lab/demo.js';
import type { ProbeReport, Verdict } from '../../src/probe/types.js';
import { runDemo, type DemoRun } from '../../src/cli/demo-command.js';

let run: DemoRun;
const report = (path: string): ProbeReport => run.reports.find((r) => r.path === path)!.report;
const verdictOf = (r: ProbeReport, op: string, keepalive: string, hold: number): Verdict =>
  r.verdicts.find((v) => v.operation === op && v.keepalive === keepalive && v.holdSeconds === hold)!;
const codes = (v: Verdict) => v.diagnosis.map((d) => d.code).sort();

beforeAll(async () => {
  run = await runDemo();
}, 60_000);

describe('demo paths', () => {
  it('runs every path with the full matrix', () => {
    expect(run.reports.map((r) => r.path)).toEqual(['direct', 'l7-refuses-websocket', 'l7-refuses-spdy', 'buffering-l7', 'l4-idle-6s', 'l4-idle-6s-data-only']);
    // kubectl and none: 2 operations × 2 transports × holds 0 s (one keepalive) and 8 s (both) = 12; an SDK client's
    // exec and port-forward (WebSocket only) at both holds = 4.
    for (const r of run.reports) expect(r.report.results).toHaveLength(16);
  });

  it('every path names the container as kubectl does: the target pod has three, the annotation names main', () => {
    for (const r of run.reports) expect(r.report.target).toMatchObject({ container: 'main', containerSource: 'annotation' });
  });

  it('direct: everything clean, with real handshake and echo numbers', () => {
    const r = report('direct');
    expect(r.verdicts.map((v) => v.verdict)).toEqual(Array(6).fill('clean'));
    for (const s of r.results) {
      expect(s.upgrade.handshakeMs).toBeGreaterThan(0);
      expect(s.firstEchoMs).toBeGreaterThan(0);
      if (s.holdSeconds > 0) expect(s.hold.survived).toBe(true);
      if (s.operation === 'exec') expect(s.exitCode).toBe(0);
    }
    expect(r.results.filter((s) => s.transport === 'websocket' && s.operation === 'exec').every((s) => s.subprotocol === 'v5.channel.k8s.io')).toBe(true);
  });

  it('an L7 hop refusing WebSocket: websocket-broken, a non-Status 403 from a hop, and the silent fallback', () => {
    const r = report('l7-refuses-websocket');
    for (const v of r.verdicts) {
      expect(v.verdict).toBe('websocket-broken');
      // The fallback is kubectl's: rows that model kubectl say so; holds without pings measure only the path.
      const modelled = v.keepalive === 'kubectl' || v.holdSeconds === 0;
      expect(codes(v)).toEqual(modelled ? ['hop-refused-upgrade', 'silent-fallback'] : ['hop-refused-upgrade']);
      if (modelled)
        expect(v.kubectl!.map((k) => k.outcome)).toEqual([
          'works',
          v.operation === 'exec' ? 'works-via-fallback' : 'works',
          'works-via-fallback',
          'works-via-fallback',
          'breaks',
        ]);
      else expect(v.kubectl).toBeNull();
    }
    const ws = r.results.find((s) => s.transport === 'websocket')!;
    expect(ws.upgrade).toMatchObject({ ok: false, status: 403, kubernetesStatus: false });
  });

  it('an L7 hop refusing SPDY: spdy-broken', () => {
    for (const v of report('l7-refuses-spdy').verdicts) {
      expect(v.verdict).toBe('spdy-broken');
      expect(codes(v)).toEqual(['hop-refused-upgrade']);
    }
  });

  it('a buffering hop: both-broken, upgrades never answered', () => {
    for (const v of report('buffering-l7').verdicts) {
      expect(v.verdict).toBe('both-broken');
      expect(codes(v)).toEqual(['upgrade-no-answer', 'upgrade-no-answer']);
    }
  });

  it(`an L4 idle cut at ${DEMO_IDLE_CUT_SECONDS} s: kubectl's 5 s pings survive, none does not, and the 10 s tunnel pings do not`, () => {
    const r = report(`l4-idle-${DEMO_IDLE_CUT_SECONDS}s`);
    expect(verdictOf(r, 'exec', 'kubectl', DEMO_HOLD_SECONDS).verdict).toBe('clean');
    expect(verdictOf(r, 'exec', 'none', DEMO_HOLD_SECONDS).verdict).toBe('both-broken');
    expect(verdictOf(r, 'portforward', 'kubectl', DEMO_HOLD_SECONDS).verdict).toBe('websocket-broken');
    expect(verdictOf(r, 'portforward', 'none', DEMO_HOLD_SECONDS).verdict).toBe('both-broken');
    for (const s of r.results.filter((x) => x.hold.survived === false)) {
      expect(s.hold.cause).toBe('fin');
      expect(Math.abs(s.hold.disconnectSeconds! - DEMO_IDLE_CUT_SECONDS)).toBeLessThan(0.5);
    }
    const findings = r.findings.map((d) => d.code);
    expect(findings).toContain('keepalive-dependent');
    expect(findings).toContain('exec-portforward-disagree');
    expect(r.findings.find((d) => d.code === 'exec-portforward-disagree')!.summary).toContain('WebSocket exec works but port-forward does not');
  });

  it('a hop counting only application data: even kubectl keepalive is cut, and the report says pings were ignored', () => {
    const r = report(`l4-idle-${DEMO_IDLE_CUT_SECONDS}s-data-only`);
    for (const v of r.verdicts.filter((x) => x.holdSeconds === DEMO_HOLD_SECONDS)) expect(v.verdict).toBe('both-broken');
    // Pings moved bytes about a second before each cut, 6 s after the last data: the hop ignores them.
    const withPings = r.results.filter((s) => s.keepalive === 'kubectl' && s.holdSeconds === DEMO_HOLD_SECONDS);
    const byDiagnosis = (code: string) =>
      r.verdicts
        .filter((v) => v.keepalive === 'kubectl' && v.holdSeconds === DEMO_HOLD_SECONDS)
        .flatMap((v) => v.diagnosis)
        .filter((d) => d.code === code);
    // The no-ping sessions were cut at 6 s, longer than the 5 s ping interval, and the ones with pings as late; a session
    // echoing every 2 s survived (the activity check): the hop counts only data, not a cap on the connection's life.
    expect(r.lifetimeCheck).toMatchObject({ outcome: 'data-only-timer', everySeconds: 2 });
    const ignored = r.findings.filter((d) => d.code === 'pings-ignored');
    expect(ignored).toHaveLength(3);
    for (const d of ignored) expect(d.check).toMatch(/about 6 s, measured without pings/);
    for (const s of withPings.filter((x) => !(x.operation === 'portforward' && x.transport === 'websocket'))) {
      expect(s.hold.idleSeconds!).toBeLessThan(s.hold.sinceDataSeconds! - 2);
    }
    // The WebSocket tunnel pings every 10 s: nothing moved before the 6 s cut, so its timeout is just shorter than the ping interval.
    expect(
      byDiagnosis('idle-timeout')
        .filter((d) => /shorter than kubectl's ping interval/.test(d.check))
        .map((d) => d.summary),
    ).toEqual([expect.stringContaining('sends its first ping after 10 s')]);
    expect(ignored.some((d) => /WebSocket port-forward/.test(d.summary))).toBe(false);
    expect(r.findings.some((d) => d.code === 'keepalive-dependent')).toBe(false);
  });

  it('one cause, one conclusion: what kubectl’s pings did is said as measured, never its opposite (issue 53)', () => {
    const texts = (r: ProbeReport) => [...r.verdicts.flatMap((v) => v.diagnosis), ...r.findings].map((d) => `${d.summary} ${d.check}`);
    // Any byte counts: the no-ping rows say kubectl's pings kept exec open, as the kubectl row and keepalive-dependent do.
    const anyByte = texts(report(`l4-idle-${DEMO_IDLE_CUT_SECONDS}s`));
    expect(anyByte.some((t) => /kubectl's pings \(every 5 s on this session\) kept its session open through the same hold/.test(t))).toBe(true);
    expect(anyByte.some((t) => /do(es)? not count (them|kubectl's pings)|ignores keepalive/.test(t))).toBe(false);
    // Data only: pings-ignored is concluded, and no text says the pings keep it open or may.
    const dataOnly = report(`l4-idle-${DEMO_IDLE_CUT_SECONDS}s-data-only`);
    expect(dataOnly.findings.map((d) => d.code)).toContain('pings-ignored');
    const said = texts(dataOnly);
    expect(said.filter((t) => /(?<!cannot )keeps? it open|kept its session open/.test(t))).toEqual([]);
    expect(said.some((t) => /kubectl's session was cut as early, although its pings \(every 5 s\) came more often: the hop does not count them/.test(t))).toBe(
      true,
    );
  });

  it('shows all four verdicts and at least three distinct diagnoses', () => {
    const verdicts = new Set(run.reports.flatMap((r) => r.report.verdicts.map((v) => v.verdict)));
    expect([...verdicts].sort()).toEqual(['both-broken', 'clean', 'spdy-broken', 'websocket-broken']);
    const diagnoses = new Set(run.reports.flatMap((r) => [...r.report.verdicts.flatMap((v) => v.diagnosis), ...r.report.findings].map((d) => d.code)));
    expect(diagnoses.size).toBeGreaterThanOrEqual(3);
  });
});
