/**
 * One idle timer per direction, through real HAProxy (mode tcp, `option independent-streams`, timeout
 * client/server 7 s), against a plain two-way timer (the same without the option): shaped holds name the
 * direction, and real kubectl (1.29 over SPDY, 1.33 over WebSocket) is the ground truth for the rows that model
 * it. Measured here: kubectl's pings (every 5 s) count as client bytes, so kubectl's own `tail -f`-like exec
 * survives a 7 s one-direction timer; without pings the same output-only session is cut although bytes keep
 * moving, where a two-way timer keeps it open.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { emulatorKubeconfig } from '../../lab/emulator/kubeconfig.js';
import { Emulator } from '../../lab/emulator/server.js';
import { kubectlExecHolding, kubectlExecOutputFor } from '../../lab/kubectl.js';
import type { RealHop } from '../../lab/real-hops/process-hop.js';
import { startHaproxy } from '../../lab/real-hops/reverse-proxies.js';
import { runPlan } from '../../src/probe/runner.js';
import type { ProbeReport, Verdict } from '../../src/probe/types.js';
import { requireHop } from '../helpers/hops.js';

const TIMER = 7;
const HOLD = 11;
const HOPS = [
  ['one-way', (p: number) => startHaproxy({ kind: 'independent-streams', timeoutSeconds: TIMER }, p)],
  ['two-way', (p: number) => startHaproxy({ kind: 'tcp', timeoutSeconds: TIMER }, p)],
] as const;

let emulator: Emulator;
const labs = new Map<string, { hop: RealHop; kubeconfig: string; report: ProbeReport }>();
beforeAll(async () => {
  emulator = await Emulator.start({});
  await Promise.all(
    HOPS.map(async ([name, start]) => {
      const hop = await requireHop(() => start(Number(emulator.url.port)));
      if (!hop) return;
      const server = new URL(`http://127.0.0.1:${hop.port}`);
      const kubeconfig = join(hop.dir, 'kubeconfig');
      writeFileSync(kubeconfig, emulatorKubeconfig(emulator, { server: server.toString().replace(/\/$/, '') }));
      const report = await runPlan(
        {
          location: 'one-direction',
          cluster: { name, connection: { server }, namespace: 'default', pod: 'probe-target', port: 8080 },
          operations: ['exec'],
          transports: ['websocket', 'spdy'],
          keepalives: ['kubectl', 'none'],
          holdsSeconds: [HOLD],
          holdShapes: ['silent', 'output', 'input'],
          echoTimeoutMs: 3000,
        },
        { skipPreflight: true },
      );
      labs.set(name, { hop, kubeconfig, report });
    }),
  );
}, 90_000);
afterAll(async () => {
  for (const l of labs.values()) await l.hop.stop();
  await emulator.stop();
});

const row = (r: ProbeReport, keepalive: string, shape: string): Verdict =>
  r.verdicts.find((v) => v.keepalive === keepalive && (v.holdShape ?? 'silent') === shape && v.holdSeconds === HOLD)!;
const codes = (v: Verdict) => [...new Set(v.diagnosis.map((d) => d.code))];

describe('HAProxy option independent-streams (timeout client/server 7 s)', () => {
  it('without pings: output and input are cut although bytes kept moving, and the quiet direction is named', ({ skip }) => {
    const r = labs.get('one-way')?.report ?? skip('haproxy missing');
    expect(row(r, 'none', 'silent').verdict).toBe('both-broken');
    expect(codes(row(r, 'none', 'silent'))).toEqual(['idle-timeout']);
    for (const shape of ['output', 'input'] as const) {
      const v = row(r, 'none', shape);
      expect(v.verdict, shape).toBe('both-broken');
      expect(codes(v), shape).toEqual(['one-direction-timeout']);
      expect(v.diagnosis[0]!.summary).toContain(shape === 'output' ? 'only the client → server' : 'only the server → client');
      expect(v.diagnosis[0]!.check).toContain(shape === 'output' ? '`timeout client`' : '`timeout server`');
    }
    for (const s of r.results.filter((x) => x.keepalive === 'none' && x.holdShape)) {
      // Cut by the 7 s timer of the quiet side, with bytes moving less than a tick period before.
      expect(s.hold.disconnectSeconds!).toBeGreaterThan(TIMER - 1);
      expect(s.hold.disconnectSeconds!).toBeLessThan(TIMER + 3);
      expect(s.hold.idleSeconds!).toBeLessThanOrEqual(3);
    }
  });

  it("with kubectl's pings every shape survives: the pings count as client bytes and the pongs as server bytes", ({ skip }) => {
    const r = labs.get('one-way')?.report ?? skip('haproxy missing');
    for (const shape of ['silent', 'output', 'input']) expect(row(r, 'kubectl', shape).verdict, shape).toBe('clean');
  });

  it('real kubectl agrees: its output-only exec and its idle exec both survive 11 s (1.29 SPDY, 1.33 WebSocket)', async ({ skip }) => {
    const lab = labs.get('one-way') ?? skip('haproxy missing');
    const args = ['--kubeconfig', lab.kubeconfig];
    const results = await Promise.all(
      ['1.29', '1.33'].flatMap((k) => [
        kubectlExecOutputFor(k, args, {}, HOLD).then((x) => [`${k} output`, x.works] as const),
        kubectlExecHolding(k, args, {}, HOLD).then((x) => [`${k} silent`, x.works] as const),
      ]),
    );
    expect(Object.fromEntries(results)).toEqual({ '1.29 output': true, '1.29 silent': true, '1.33 output': true, '1.33 silent': true });
  }, 60_000);
});

describe('the same timers counted both ways (no independent-streams)', () => {
  it("without pings, the pod's ticks and the client's ticks keep the session open; only silence is cut", ({ skip }) => {
    const r = labs.get('two-way')?.report ?? skip('haproxy missing');
    expect(row(r, 'none', 'silent').verdict).toBe('both-broken');
    expect(row(r, 'none', 'output').verdict).toBe('clean');
    expect(row(r, 'none', 'input').verdict).toBe('clean');
  });
});
