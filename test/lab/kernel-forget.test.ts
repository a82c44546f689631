/**
 * Devices that forget idle flows, for real: Linux connection tracking in a network namespace between the clients and
 * the emulator (lab/kernel-hops), with a short established timeout and no pick-up of mid-stream packets, so the next
 * packet of a forgotten flow is `ct state invalid` and is answered with a reset (AWS NAT Gateway and NLB do so) or
 * dropped (Azure Load Balancer, GCP connection tracking). Real kubectl 1.29 (SPDY), 1.33 and 1.36 (WebSocket, and
 * SPDY with KUBECTL_*_WEBSOCKETS=false) hold exec and port-forward through it as users do, and the probe's own CLI
 * runs the same holds: its verdicts and forecasts must equal what kubectl did, its bracket must hold the configured
 * timeout (never the hold), and what its diagnosis says kubectl shows must be what kubectl showed.
 */
import net from 'node:net';
import { describe, expect, it } from 'vitest';
import { kubectlExecHolding, kubectlPortForwardHolding, withKubectlPortForward, type HeldSession, type KubectlPlace } from '../../lab/kubectl.js';
import type { KubectlClient } from '../../src/probe/kubectl-model.js';
import type { Diagnosis, ProbeReport, Verdict } from '../../src/probe/types.js';
import type { Operation, Transport } from '../../src/vocabulary.js';
import { requireHop } from '../helpers/hops.js';
import { startKernelLab, type KernelLab } from '../helpers/kernel-lab.js';

const VERSIONS = ['1.29', '1.33', '1.36'] as const;
type Version = (typeof VERSIONS)[number];
const CLIENT_OF: Readonly<Record<Version, KubectlClient>> = { '1.29': '1.29', '1.33': '1.31-1.37', '1.36': '1.31-1.37' };
const HOLD = 12;
const FORCE_SPDY = { KUBECTL_REMOTE_COMMAND_WEBSOCKETS: 'false', KUBECTL_PORT_FORWARD_WEBSOCKETS: 'false' };

interface KubectlRun {
  readonly version: Version;
  readonly operation: Operation;
  readonly transport: Transport;
  readonly held: HeldSession;
}

/** Every version × operation × transport it speaks, holding HOLD s, all at once. */
function kubectlMatrix(
  lab: KernelLab,
  place: KubectlPlace,
  waitSeconds: number,
  only?: (v: Version, t: Transport, o: Operation) => boolean,
): Promise<KubectlRun[]> {
  const runs: Promise<KubectlRun>[] = [];
  for (const version of VERSIONS)
    for (const operation of ['exec', 'portforward'] as const)
      for (const transport of version === '1.29' ? (['spdy'] as const) : (['websocket', 'spdy'] as const)) {
        if (only && !only(version, transport, operation)) continue;
        const env = transport === 'spdy' && version !== '1.29' ? FORCE_SPDY : {};
        const args = ['--kubeconfig', lab.kubeconfig];
        const held =
          operation === 'exec'
            ? kubectlExecHolding(version, args, env, HOLD, { place, waitSeconds })
            : kubectlPortForwardHolding(version, args, env, HOLD, { place, waitForEndSeconds: waitSeconds });
        runs.push(held.then((h) => ({ version, operation, transport, held: h })));
      }
  return Promise.all(runs);
}

const row = (r: ProbeReport, operation: Operation, keepalive: 'kubectl' | 'none' = 'kubectl'): Verdict =>
  r.verdicts.find((v) => v.operation === operation && v.keepalive === keepalive && v.holdSeconds === HOLD)!;
const codes = (r: ProbeReport): string[] => [...new Set([...r.verdicts.flatMap((v) => v.diagnosis), ...r.findings].map((d) => d.code))].sort();
const all = (r: ProbeReport): Diagnosis[] => [...r.verdicts.flatMap((v) => v.diagnosis), ...r.findings];

/** The probe's verdict row and forecasts say what kubectl did, version by version and transport by transport. */
function expectAgreement(report: ProbeReport, runs: readonly KubectlRun[]): void {
  for (const run of runs) {
    const v = row(report, run.operation);
    const what = `kubectl ${run.version} ${run.operation} over ${run.transport}: ${run.held.stderr.slice(-300)}`;
    // The transport cell: the probe's session over that transport against kubectl forced (or born) onto it.
    expect(v[run.transport] === 'ok', what).toBe(run.held.works);
    // The version's own default transport is what its forecast is about (≤1.29 SPDY; 1.33 and 1.36 WebSocket first).
    const usesDefault = run.version === '1.29' ? run.transport === 'spdy' : run.transport === 'websocket';
    if (!usesDefault) continue;
    const forecast = v.kubectl!.find((k) => k.client === CLIENT_OF[run.version])!;
    expect(forecast.outcome === 'breaks', `${what}; forecast: ${forecast.outcome} (${forecast.reason})`).toBe(!run.held.works);
  }
}

function expectBracketAround(report: ProbeReport, seconds: number, atExpiry: 'reset' | 'drop'): void {
  const b = report.idleBracket!;
  expect(b, JSON.stringify(report.findings)).toBeDefined();
  expect(b.atExpiry).toBe(atExpiry);
  // The configured timeout lies in (above, atMost], measured to 0.1 s by sampling and a loaded machine's timers.
  expect(b.aboveSeconds).toBeLessThan(seconds + 0.3);
  expect(b.atMostSeconds).toBeGreaterThan(seconds - 0.3);
  expect(b.atMostSeconds - b.aboveSeconds, b.method).toBeLessThanOrEqual(1.5);
  // Never the hold: no text says the timeout is "about 12 s".
  for (const d of all(report)) expect(`${d.summary} ${d.check}`).not.toMatch(/idle timeout (of )?(is )?about 12 s|about 12 s\b/);
}

/** No probe run may outlast its holds and its follow-ups by more than a session's own overheads. */
function expectBounded(seconds: number): void {
  expect(seconds).toBeLessThan(HOLD + 30 + 20);
}

describe('devices that forget idle flows (Linux connection tracking), with real kubectl', () => {
  it.concurrent('reset on the next packet after 4 s (AWS NAT Gateway / NLB style, below every kubectl ping period)', async () => {
    const lab = await requireHop(() => startKernelLab({ kind: 'forget', idleSeconds: 4, atExpiry: 'reset' }));
    if (!lab) return;
    try {
      const [probe, runs] = await Promise.all([
        lab.probe(['--hold', `0s,${HOLD}s`, '--keepalive', 'kubectl,none']),
        kubectlMatrix(lab, lab.place('quick'), 20),
      ]);
      expect(lab.counters().forgotten).toBeGreaterThan(0);
      // What kubectl did: every session with pings lost at its first ping after the device forgot the flow.
      for (const r of runs) expect(r.held.works, `${r.version} ${r.operation} ${r.transport}`).toBe(false);
      for (const r of runs.filter((x) => x.operation === 'exec' && x.transport === 'spdy')) expect([r.held.code, r.held.stderr]).toEqual([0, '']);
      for (const r of runs.filter((x) => x.operation === 'exec' && x.transport === 'websocket')) {
        expect(r.held.code).toBe(1);
        expect(r.held.stderr).toMatch(/connection reset by peer/);
      }
      for (const r of runs.filter((x) => x.operation === 'portforward')) expect(r.held.stderr).toMatch(/lost connection to pod/);
      // What the probe says.
      const report = probe.report;
      expectAgreement(report, runs);
      expectBracketAround(report, 4, 'reset');
      expect(['sessions', 'check']).toContain(report.idleBracket!.proof);
      expect(codes(report)).not.toEqual(expect.arrayContaining(['pings-ignored']));
      for (const c of ['pings-ignored', 'idle-timeout', 'no-pong', 'black-hole', 'cut-despite-pings']) expect(codes(report)).not.toContain(c);
      const forgotten = all(report).filter((d) => d.code === 'flow-forgotten');
      expect(forgotten.length).toBeGreaterThan(0);
      for (const d of forgotten) {
        expect(d.check).toMatch(/answers the next packet with a reset/);
        // The symptoms it names are the ones kubectl showed above.
        expect(d.check).toMatch(/kubectl exec \(SPDY\) exits 0 with nothing on stderr/);
        expect(d.check).toMatch(/kubectl exec \(WebSocket\) exits 1 \("connection reset by peer"\)/);
        expect(d.check).toMatch(/port-forward prints "lost connection to pod"/);
      }
      const exec = row(report, 'exec').kubectl!;
      expect(exec.find((k) => k.client === '1.29')!.reason).toMatch(/reset its next packet .*exits 0 with nothing on stderr/);
      expect(exec.find((k) => k.client === '1.31-1.37')!.reason).toMatch(/connection reset by peer/);
      expectBounded(probe.seconds);
    } finally {
      await lab.stop();
    }
  }, 150_000);

  it.concurrent("reset on the next packet after 8 s: between exec's 5 s pings and the port-forward tunnel's 10 s", async () => {
    const lab = await requireHop(() => startKernelLab({ kind: 'forget', idleSeconds: 8, atExpiry: 'reset' }));
    if (!lab) return;
    try {
      const [probe, runs] = await Promise.all([
        lab.probe(['--hold', `0s,${HOLD}s`, '--keepalive', 'kubectl,none']),
        kubectlMatrix(lab, lab.place('quick'), 20),
      ]);
      for (const r of runs) {
        // Only WebSocket port-forward (pings every 10 s) loses its flow; everything that pings every 5 s keeps it.
        const broken = r.operation === 'portforward' && r.transport === 'websocket';
        expect(r.held.works, `${r.version} ${r.operation} ${r.transport}: ${r.held.stderr}`).toBe(!broken);
        if (broken) expect(r.held.stderr).toMatch(/lost connection to pod/);
      }
      const report = probe.report;
      expectAgreement(report, runs);
      expect(row(report, 'exec').verdict).toBe('clean');
      expect(row(report, 'portforward').verdict).toBe('websocket-broken');
      expectBracketAround(report, 8, 'reset');
      // exec's 5 s pings kept its flows past the bracket: that proves the device times idleness.
      expect(report.idleBracket!.proof).toBe('sessions');
      expect(codes(report)).toEqual(expect.arrayContaining(['flow-forgotten', 'keepalive-dependent', 'kubectl-breaks-today', 'exec-portforward-disagree']));
      for (const c of ['pings-ignored', 'idle-timeout', 'cut-despite-pings']) expect(codes(report)).not.toContain(c);
      expect(all(report).find((d) => d.code === 'flow-forgotten')!.check).toMatch(/WebSocket port-forward tunnel pings only every 10 s, which is too late/);
      expectBounded(probe.seconds);
    } finally {
      await lab.stop();
    }
  }, 150_000);

  it.concurrent('dropped silently after 4 s (Azure Load Balancer / GCP connection tracking style): kubectl hangs until the kernel gives up', async () => {
    const lab = await requireHop(() => startKernelLab({ kind: 'forget', idleSeconds: 4, atExpiry: 'drop' }));
    if (!lab) return;
    try {
      // `quick` gives up retransmitting after about 12.6 s (tcp_retries2 = 5), `slow` after about 205 s (9): in
      // `slow` only client-go's own deadlines can end a session.
      const [probe, quick, slow, secondConnection] = await Promise.all([
        lab.probe(['--hold', `0s,${HOLD}s`, '--keepalive', 'kubectl,none']),
        kubectlMatrix(lab, lab.place('quick'), 40, (_v, t, o) => t === 'spdy' || o === 'portforward'),
        kubectlMatrix(lab, lab.place('slow'), 80, (_v, t, o) => t === 'websocket' && o === 'exec'),
        newConnectionDuringHang(lab),
      ]);
      expect(lab.counters().forgotten).toBeGreaterThan(0);
      for (const r of [...quick, ...slow]) expect(r.held.works, `${r.version} ${r.operation} ${r.transport}`).toBe(false);
      // SPDY exec: hangs after its first ping (5 s) until the kernel gives up (≈ 12.6 s later here), then exits 0, silent.
      for (const r of quick.filter((x) => x.operation === 'exec')) {
        expect(r.transport).toBe('spdy');
        expect([r.held.code, r.held.stderr]).toEqual([0, '']);
        expect(r.held.seconds).toBeGreaterThan(15);
      }
      // Port-forward (SPDY and WebSocket): hangs until the kernel gives up, then "lost connection to pod".
      for (const r of quick.filter((x) => x.operation === 'portforward')) {
        expect(r.held.stderr).toMatch(/lost connection to pod/);
        expect(r.held.seconds).toBeGreaterThan(15);
      }
      // WebSocket exec: client-go's read deadline (61 s without a pong) ends it, long before the kernel would.
      for (const r of slow.filter((x) => x.operation === 'exec')) {
        expect(r.held.code).toBe(1);
        expect(r.held.stderr).toMatch(/i\/o timeout/);
        expect(r.held.seconds).toBeGreaterThan(58);
        expect(r.held.seconds).toBeLessThan(75);
      }
      expect(secondConnection).toMatch(/error creating error stream for port \d+ -> 8080: Timeout occurred/);
      const report = probe.report;
      expectAgreement(report, [...quick, ...slow]);
      expectBracketAround(report, 4, 'drop');
      for (const c of ['pings-ignored', 'idle-timeout', 'no-pong', 'black-hole', 'cut-despite-pings']) expect(codes(report)).not.toContain(c);
      for (const d of all(report).filter((x) => x.code === 'flow-forgotten')) {
        expect(d.check).toMatch(/drops the next packets without a word/);
        expect(d.check).toMatch(/kubectl exec \(SPDY\) hangs until the kernel gives up retransmitting .* then exits 0 with nothing on stderr/);
        expect(d.check).toMatch(/kubectl exec \(WebSocket\) exits 1 after about 61 s/);
        expect(d.check).toMatch(/kubectl port-forward hangs until the kernel gives up retransmitting .* then prints "lost connection to pod"/);
      }
      expectBounded(probe.seconds);
    } finally {
      await lab.stop();
    }
  }, 150_000);
});

/**
 * kubectl 1.36 port-forward (WebSocket) in `slow`, its session's flow forgotten: a new local connection during the
 * hang asks for new streams, which never come (spdystream's 30 s stream creation timeout). Returns kubectl's output.
 */
async function newConnectionDuringHang(lab: KernelLab): Promise<string> {
  const { value } = await withKubectlPortForward(
    '1.36',
    ['--kubeconfig', lab.kubeconfig, 'pod/probe-target', '0:8080'],
    {},
    async (port, _pid, view) => {
      const first = net.connect(port, view.host);
      first.on('error', () => undefined);
      await new Promise((r) => first.once('connect', r));
      first.write('before');
      // Past the device's 4 s and the tunnel's first ping (10 s): the session's flow is gone.
      await new Promise((r) => setTimeout(r, HOLD * 1000));
      const second = net.connect(port, view.host);
      second.on('error', () => undefined);
      second.write('x');
      for (let i = 0; i < 450 && !/Timeout occurred/.test(view.output()); i++) await new Promise((r) => setTimeout(r, 100));
      first.destroy();
      second.destroy();
      return view.output();
    },
    lab.place('slow'),
  );
  return value;
}
