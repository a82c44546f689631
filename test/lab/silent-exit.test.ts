/**
 * What kubectl itself says when a hop cuts an idle exec session, with real
 * kubectl through real nginx (proxy_read_timeout) and HAProxy (mode tcp
 * timeouts): the diagnosis says "exits 0 with no message" exactly for the
 * session kinds where kubectl does (SPDY exec), and a cut is classified the
 * same way (fin) on both transports.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { emulatorKubeconfig } from '../../lab/emulator/kubeconfig.js';
import { Emulator } from '../../lab/emulator/server.js';
import { kubectlExecHolding } from '../../lab/kubectl.js';
import type { RealHop } from '../../lab/real-hops/process-hop.js';
import { startHaproxy, startNginx } from '../../lab/real-hops/reverse-proxies.js';
import { runPlan } from '../../src/probe/runner.js';
import type { ProbeReport } from '../../src/probe/types.js';
import { requireHop } from '../helpers/hops.js';

const IDLE = 4;
const HOLD = 6;
const HOPS = [
  ['nginx', (p: number) => startNginx({ kind: 'upgrade-ok', readTimeoutSeconds: IDLE }, p)],
  ['haproxy tcp', (p: number) => startHaproxy({ kind: 'tcp', timeoutSeconds: IDLE }, p)],
] as const;

let emulator: Emulator;
const labs = new Map<string, { hop: RealHop; kubeconfig: string; report: ProbeReport }>();
beforeAll(async () => {
  emulator = await Emulator.start({});
  for (const [name, start] of HOPS) {
    const hop = await requireHop(() => start(Number(emulator.url.port)));
    if (!hop) continue;
    const server = new URL(`http://127.0.0.1:${hop.port}`);
    const kubeconfig = join(hop.dir, 'kubeconfig');
    writeFileSync(kubeconfig, emulatorKubeconfig(emulator, { server: server.toString().replace(/\/$/, '') }));
    const report = await runPlan(
      {
        location: 'silent-exit',
        cluster: { name, connection: { server }, namespace: 'default', pod: 'probe-target', port: 8080 },
        operations: ['exec'],
        transports: ['websocket', 'spdy'],
        keepalives: ['kubectl'],
        holdsSeconds: [HOLD],
        echoTimeoutMs: 3000,
      },
      { skipPreflight: true },
    );
    labs.set(name, { hop, kubeconfig, report });
  }
}, 60_000);
afterAll(async () => {
  for (const l of labs.values()) await l.hop.stop();
  await emulator.stop();
});

describe.each(HOPS.map(([name]) => name))('an idle exec cut by %s', (name) => {
  it('kubectl over SPDY (1.29, and 1.33 with KUBECTL_REMOTE_COMMAND_WEBSOCKETS=false) exits 0 with no message; over WebSocket (1.33, 1.36) it exits 1 saying so', async ({
    skip,
  }) => {
    const lab = labs.get(name) ?? skip(`${name} missing`);
    const args = ['--kubeconfig', lab.kubeconfig];
    const [spdy129, spdy133, ws133, ws136] = await Promise.all([
      kubectlExecHolding('1.29', args, {}, HOLD),
      kubectlExecHolding('1.33', args, { KUBECTL_REMOTE_COMMAND_WEBSOCKETS: 'false' }, HOLD),
      kubectlExecHolding('1.33', args, {}, HOLD),
      kubectlExecHolding('1.36', args, {}, HOLD),
    ]);
    for (const r of [spdy129, spdy133]) expect({ works: r.works, code: r.code, stderr: r.stderr }).toEqual({ works: false, code: 0, stderr: '' });
    for (const r of [ws133, ws136]) {
      expect(r.code).toBe(1);
      expect(r.stderr).toMatch(/close 1006 \(abnormal closure\)/);
    }
  }, 60_000);

  it("the probe's diagnosis says it for SPDY exec and not for WebSocket exec; both cuts are fin", ({ skip }) => {
    const { report } = labs.get(name) ?? skip(`${name} missing`);
    const [v] = report.verdicts;
    expect(v!.verdict).toBe('both-broken');
    const byTransport = (t: string) => v!.diagnosis.find((d) => d.code === 'idle-timeout' && d.summary.startsWith(`The ${t} exec`))!;
    expect(byTransport('SPDY').check).toMatch(/exits 0 with nothing on stderr/);
    expect(byTransport('WebSocket').check).not.toMatch(/exits 0/);
    expect(report.results.map((r) => r.hold.cause)).toEqual(['fin', 'fin']);
  });
});
