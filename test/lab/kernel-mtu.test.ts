/**
 * The kernel's other ways to break a path, for real (lab/kernel-hops): a link narrower than the endpoints' whose ICMP
 * "fragmentation needed" a firewall drops (an MTU black hole: small exchanges pass, full-size segments vanish), and
 * a lossy, rate-limited link (random drops and a token bucket). Real kubectl 1.29, 1.33 and 1.36 move the same bytes
 * as the probe's transfer, and the probe's verdicts and diagnosis must say what kubectl met; with the fix applied (MSS
 * clamped on the device), both must work.
 */
import { describe, expect, it } from 'vitest';
import { applyFault, qdiscStats } from '../../lab/kernel-hops/faults.js';
import net from 'node:net';
import { kubectlBytes, kubectlExecHolding, withKubectlPortForward, type KubectlPlace } from '../../lab/kubectl.js';
import type { ProbeReport } from '../../src/probe/types.js';
import type { Transport } from '../../src/vocabulary.js';
import { requireHop } from '../helpers/hops.js';
import { startKernelLab, type KernelLab } from '../helpers/kernel-lab.js';

const BULK = Buffer.alloc(256 * 1024, 0x61);
const FORCE_SPDY = { KUBECTL_REMOTE_COMMAND_WEBSOCKETS: 'false', KUBECTL_PORT_FORWARD_WEBSOCKETS: 'false' };
const TRANSFER = 1024 * 1024;

/** `kubectl exec -i probe-target -- cat` with BULK on stdin: what `kubectl cp` into a pod moves. */
function bulkExec(lab: KernelLab, version: string, transport: Transport, place: KubectlPlace, timeoutMs: number) {
  const env = transport === 'spdy' && version !== '1.29' ? FORCE_SPDY : {};
  return kubectlBytes(version, ['--kubeconfig', lab.kubeconfig, 'exec', '-i', 'probe-target', '--', 'cat'], BULK, { env, place, timeoutMs }).then((r) => ({
    version,
    transport,
    ...r,
    complete: r.code === 0 && r.stdout.equals(BULK),
  }));
}

/** `kubectl port-forward` with BULK written through one forwarded connection: what came back, and kubectl's words and when. */
async function bulkPortForward(lab: KernelLab, version: string, place: KubectlPlace) {
  const t0 = performance.now();
  const { value } = await withKubectlPortForward(
    version,
    ['--kubeconfig', lab.kubeconfig, 'pod/probe-target', '0:8080'],
    {},
    async (port, _pid, view) => {
      const s = net.connect(port, view.host);
      s.on('error', () => undefined);
      let echoed = 0;
      s.on('data', (c: Buffer) => (echoed += c.length));
      await new Promise((r) => s.once('connect', r));
      s.write(BULK);
      for (let i = 0; i < 400 && echoed < BULK.length && !/lost connection to pod/.test(view.output()); i++) await new Promise((r) => setTimeout(r, 100));
      s.destroy();
      return { echoed, output: view.output(), lostAfterSeconds: (performance.now() - t0) / 1000 };
    },
    place,
  );
  return value;
}

const transferRow = (r: ProbeReport, operation: 'exec' | 'portforward') => r.verdicts.find((v) => v.operation === operation && v.transferBytes === TRANSFER)!;
const codes = (r: ProbeReport) => [...new Set([...r.verdicts.flatMap((v) => v.diagnosis), ...r.findings].map((d) => d.code))].sort();

describe('an MTU black hole and a lossy link (the kernel in a network namespace), with real kubectl', () => {
  it.concurrent('a 1280-byte link with ICMP "fragmentation needed" dropped: transfers stall at 0 bytes while small exchanges pass; MSS clamping fixes it', async () => {
    const lab = await requireHop(() => startKernelLab({ kind: 'mtu-black-hole', innerMtu: 1280 }));
    if (!lab) return;
    try {
      const [probe, small, spdy, ws, forwarded] = await Promise.all([
        lab.probe(['--hold', '0s,8s', '--transfer', '1MiB']),
        Promise.all(['1.29', '1.33', '1.36'].map((v) => kubectlExecHolding(v, ['--kubeconfig', lab.kubeconfig], {}, 1, { place: lab.place('quick') }))),
        // SPDY where the kernel gives up after ≈ 12.6 s (tcp_retries2 = 5); WebSocket where it would take ≈ 205 s.
        Promise.all(['1.29', '1.33', '1.36'].map((v) => bulkExec(lab, v, 'spdy', lab.place('quick'), 60_000))),
        Promise.all(['1.33', '1.36'].map((v) => bulkExec(lab, v, 'websocket', lab.place('slow'), 90_000))),
        Promise.all(['1.29', '1.36'].map((v) => bulkPortForward(lab, v, lab.place('quick')))),
      ]);
      expect(lab.counters().frag_needed).toBeGreaterThan(0);
      // Small exchanges pass through the hole.
      for (const s of small) expect(s.works, s.stderr).toBe(true);
      // SPDY: hangs until the kernel gives up retransmitting, then exits 0 although nothing came back.
      for (const r of spdy) {
        expect(r.complete, `${r.version}: ${r.stderr}`).toBe(false);
        expect(r.stdout.length).toBe(0);
        expect(r.code).toBe(0);
        expect(r.seconds).toBeGreaterThan(12);
      }
      // WebSocket: client-go's read deadline ends it after about 61 s.
      for (const r of ws) {
        expect(r.complete).toBe(false);
        expect(r.code).toBe(1);
        expect(r.stderr).toMatch(/i\/o timeout/);
        expect(r.seconds).toBeGreaterThan(58);
        expect(r.seconds).toBeLessThan(75);
      }
      // Port-forward (SPDY for 1.29, WebSocket for 1.36): hangs until the kernel gives up, then "lost connection to pod".
      for (const f of forwarded) {
        expect(f.echoed, f.output).toBe(0);
        expect(f.output).toMatch(/lost connection to pod/);
        expect(f.lostAfterSeconds).toBeGreaterThan(12);
      }
      const report = probe.report;
      // Holds (small echoes, pings) are clean; every transfer stalls, and says why.
      for (const v of report.verdicts.filter((x) => !x.transferBytes)) expect(v.verdict, JSON.stringify(v.diagnosis)).toBe('clean');
      for (const op of ['exec', 'portforward'] as const) {
        const v = transferRow(report, op);
        expect(v.verdict).toBe('both-broken');
        for (const k of v.kubectl!) expect(k.outcome, k.reason).toBe('breaks');
        expect(v.diagnosis.map((d) => d.code)).toEqual(['mtu-black-hole', 'mtu-black-hole']);
      }
      for (const r of report.results.filter((x) => x.transferBytes)) expect(r.transfer).toMatchObject({ end: 'stalled', receivedBytes: 0 });
      const d = transferRow(report, 'exec').diagnosis[0]!;
      expect(d.check).toMatch(/type 3 code 4/);
      expect(d.check).toMatch(/clamp TCP's MSS/);
      expect(d.check).toMatch(/kubectl exec and cp \(SPDY\) hang until the kernel gives up retransmitting .* then exit 0 although the data never arrived/);
      expect(d.check).toMatch(/kubectl exec and cp \(WebSocket\) exit 1 after about 61 s/);
      expect(d.check).toMatch(/kubectl port-forward hangs until the kernel gives up retransmitting .* then prints "lost connection to pod"/);
      expect(probe.seconds).toBeLessThan(8 + 60);

      // The fix named in the diagnosis: clamp the MSS on the device in front of the narrow link.
      applyFault(lab.path, { kind: 'mtu-black-hole', innerMtu: 1280, clampMss: true });
      const [fixed, spdyFixed, wsFixed] = await Promise.all([
        lab.probe(['--hold', '0s', '--transfer', '1MiB']),
        bulkExec(lab, '1.29', 'spdy', lab.place('quick'), 30_000),
        bulkExec(lab, '1.36', 'websocket', lab.place('slow'), 30_000),
      ]);
      for (const v of fixed.report.verdicts) expect(v.verdict, JSON.stringify(v.diagnosis)).toBe('clean');
      expect(spdyFixed.complete, spdyFixed.stderr).toBe(true);
      expect(wsFixed.complete, wsFixed.stderr).toBe(true);
    } finally {
      await lab.stop();
    }
  }, 180_000);

  it.concurrent('2 % loss and an 8 Mbit/s token bucket: slower, never broken, and no false finding', async () => {
    const lab = await requireHop(() => startKernelLab({ kind: 'lossy', lossPercent: 2, rateKbit: 8000 }));
    if (!lab) return;
    try {
      const [probe, bulk] = await Promise.all([
        lab.probe(['--hold', '0s,8s', '--keepalive', 'kubectl,none', '--transfer', '1MiB']),
        bulkExec(lab, '1.36', 'websocket', lab.place('quick'), 60_000),
      ]);
      expect(lab.counters().lost).toBeGreaterThan(0);
      expect(qdiscStats(lab.path).overlimits).toBeGreaterThan(0);
      expect(bulk.complete, bulk.stderr).toBe(true);
      const report = probe.report;
      for (const v of report.verdicts) expect(v.verdict, JSON.stringify(v.diagnosis)).toBe('clean');
      for (const r of report.results.filter((x) => x.transferBytes)) {
        expect(r.transfer!.end).toBe('complete');
        // 8 Mbit/s is 0.95 MiB/s: the bucket, not our client, sets the rate.
        expect(r.transfer!.mibPerSecond).toBeLessThan(1.05);
      }
      expect(codes(report)).toEqual([]);
      expect(report.idleBracket).toBeUndefined();
    } finally {
      await lab.stop();
    }
  }, 120_000);
});
