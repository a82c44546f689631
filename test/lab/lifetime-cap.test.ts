/**
 * A hop that ends every connection a fixed time after it began, whatever moves (GCP's external Application Load
 * Balancer does this to WebSockets at its backend service timeout): real kubectl 1.29, 1.33 and 1.36 are cut there
 * although they ping, and the probe must name the cap (its activity check, echoing every 2 s, is cut at the same time)
 * rather than an idle timeout or a hop that ignores pings.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmulatorWithKubeconfig, type EmulatorWithKubeconfig } from '../../lab/emulator/kubeconfig.js';
import { upstreamOf, type Hop } from '../../lab/hops/common.js';
import { startTcpHop } from '../../lab/hops/tcp-hop.js';
import { kubectlExecHolding, kubectlPortForwardHolding } from '../../lab/kubectl.js';
import { runPlan } from '../../src/probe/runner.js';
import type { ProbeReport } from '../../src/probe/types.js';
import { labPlan } from '../helpers/plan.js';
import { emulatorKubeconfig } from '../../lab/emulator/kubeconfig.js';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';

const CAP = 8;
const HOLD = 10;
const FORCE_SPDY = { KUBECTL_REMOTE_COMMAND_WEBSOCKETS: 'false', KUBECTL_PORT_FORWARD_WEBSOCKETS: 'false' };

let lab: EmulatorWithKubeconfig;
let hop: Hop;
let report: ProbeReport;
let kubeconfig: string;
beforeAll(async () => {
  lab = await startEmulatorWithKubeconfig({});
  hop = await startTcpHop('lifetime', { upstream: upstreamOf(lab.emulator.url), lifetimeSeconds: CAP });
  kubeconfig = join(lab.kubeconfig, '..', 'through-hop');
  writeFileSync(kubeconfig, emulatorKubeconfig(lab.emulator, { server: hop.url.toString().replace(/\/$/, '') }));
  report = await runPlan(labPlan(hop.url, { holdsSeconds: [0, HOLD], keepalives: ['kubectl', 'none'] }));
}, 90_000);
afterAll(async () => {
  await hop?.close();
  await lab?.stop();
});

describe(`a hop that caps a connection's life at ${CAP} s`, () => {
  it('real kubectl is cut there with its pings moving: SPDY exec silently, WebSocket exec with 1006, port-forward "lost connection"', async () => {
    const args = ['--kubeconfig', kubeconfig];
    const runs = await Promise.all(
      (['1.29', '1.33', '1.36'] as const).flatMap((v) =>
        (v === '1.29' ? (['spdy'] as const) : (['websocket', 'spdy'] as const)).flatMap((t) => {
          const env = t === 'spdy' && v !== '1.29' ? FORCE_SPDY : {};
          return [
            kubectlExecHolding(v, args, env, HOLD).then((h) => ({ v, t, op: 'exec' as const, h })),
            kubectlPortForwardHolding(v, args, env, HOLD).then((h) => ({ v, t, op: 'portforward' as const, h })),
          ];
        }),
      ),
    );
    for (const r of runs) {
      expect(r.h.works, `${r.v} ${r.op} ${r.t}`).toBe(false);
      if (r.op === 'portforward') expect(r.h.stderr).toMatch(/lost connection to pod/);
      else if (r.t === 'spdy') expect([r.h.code, r.h.stderr]).toEqual([0, '']);
      else {
        expect(r.h.code).toBe(1);
        expect(r.h.stderr).toMatch(/close 1006 \(abnormal closure\)/);
      }
    }
    // The probe forecast every kubectl to break, on both operations.
    for (const v of report.verdicts.filter((x) => x.keepalive === 'kubectl' && x.holdSeconds === HOLD)) {
      expect(v.verdict).toBe('both-broken');
      for (const k of v.kubectl!) expect(k.outcome).toBe('breaks');
    }
  });

  it('the probe names the cap: its activity check was cut at the same time; no idle timeout, no "pings ignored"', () => {
    expect(report.lifetimeCheck).toMatchObject({ outcome: 'lifetime-cap', everySeconds: 2 });
    expect(Math.abs(report.lifetimeCheck!.cutSeconds - CAP)).toBeLessThan(0.5);
    expect(Math.abs(report.lifetimeCheck!.checkCutSeconds! - CAP)).toBeLessThan(0.5);
    const all = [...report.verdicts.flatMap((v) => v.diagnosis), ...report.findings];
    const codes = new Set(all.map((d) => d.code));
    expect([...codes]).toEqual(['lifetime-cap']);
    const d = all[0]!;
    expect(d.check).toMatch(/caps how long an upgraded connection may live \(about 8\.0 s\), whatever moves/);
    expect(d.check).toMatch(/kubectl exec \(SPDY\) exits 0 with nothing on stderr/);
    expect(d.check).toMatch(/kubectl exec \(WebSocket\) exits 1 \("close 1006 \(abnormal closure\)"\)/);
    expect(report.idleBracket).toBeUndefined();
  });
});
