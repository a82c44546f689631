/**
 * Each verdict and diagnosis the demo does not show, produced from a real
 * loopback setup (emulator + simulated hop or raw server), never from
 * hand-made results.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { Hop } from '../../lab/hops/common.js';
import { upstreamOf } from '../../lab/hops/common.js';
import { startL7Hop } from '../../lab/hops/l7-hop.js';
import { startTcpHop } from '../../lab/hops/tcp-hop.js';
import type { EmulatorOptions } from '../../lab/emulator/options.js';
import { runPlan } from '../../src/probe/runner.js';
import { labPlan } from '../helpers/plan.js';
import type { ProbePlan, ProbeReport } from '../../src/probe/types.js';
import { startEmulatorWithKubeconfig, type EmulatorWithKubeconfig } from '../../lab/emulator/kubeconfig.js';
import { rawServer, spdy101, ws101, type RawServer } from '../helpers/raw-server.js';

let lab: EmulatorWithKubeconfig | undefined;
let hop: Hop | undefined;
let raw: RawServer | undefined;
afterEach(async () => {
  await hop?.close();
  await lab?.stop();
  await raw?.close();
  lab = undefined;
  hop = undefined;
  raw = undefined;
});

/** The lab plan with a shorter echo timeout: the black-hole cases wait it out. */
const plan = (server: URL, over: Partial<ProbePlan> = {}): ProbePlan => labPlan(server, { echoTimeoutMs: 2000, ...over });

async function probeEmulator(options: EmulatorOptions, over: Partial<ProbePlan> = {}, via?: (api: URL) => Promise<Hop>): Promise<ProbeReport> {
  lab = await startEmulatorWithKubeconfig(options);
  hop = via ? await via(lab.emulator.url) : undefined;
  return runPlan(plan(hop?.url ?? lab.emulator.url, over));
}

const allCodes = (r: ProbeReport) => [...new Set([...r.verdicts.flatMap((v) => v.diagnosis), ...r.findings].map((d) => d.code))].sort();

describe('diagnoses from real loopback setups', () => {
  it('RBAC on a 1.35 server with only create: WebSocket gets 403 from the API server, the preflight says why', async () => {
    const r = await probeEmulator({ serverVersion: 'v1.35.0', rbac: { model: '1.35', verbs: ['create'] } });
    expect(r.server.version).toBe('v1.35.0');
    for (const v of r.verdicts) expect(v.verdict).toBe('websocket-broken');
    expect(allCodes(r)).toEqual(['rbac-preflight', 'rbac-websocket-create', 'silent-fallback'].sort());
    expect(r.rbac).toContainEqual({ subresource: 'exec', verb: 'get', allowed: false });
    expect(r.rbac).toContainEqual({ subresource: 'exec', verb: 'create', allowed: true });
    const ws = r.results.find((s) => s.transport === 'websocket')!;
    expect(ws.upgrade).toMatchObject({ status: 403, kubernetesStatus: true, statusReason: 'Forbidden' });
  });

  it('a proxy that drops the upgrade headers: the API server answers 400, diagnosed as a stripped upgrade', async () => {
    const r = await probeEmulator({}, {}, (api) => startL7Hop('strips-upgrade', { upstream: upstreamOf(api), stripUpgrade: true }));
    for (const v of r.verdicts) expect(v.verdict).toBe('both-broken');
    expect(allCodes(r)).toEqual(['hop-stripped-upgrade']);
  });

  it('the API server refusing SPDY with a Status: spdy-broken, api-server-refused', async () => {
    const r = await probeEmulator({ faults: { rejectSpdy: 400 } });
    for (const v of r.verdicts) expect(v.verdict).toBe('spdy-broken');
    expect(allCodes(r)).toEqual(['api-server-refused']);
  });

  it('a hop that goes silent 1 s after each connection began: the ladder dates it, the activity check shows it is no idle timer', async () => {
    const r = await probeEmulator({}, { holdsSeconds: [2], keepalives: ['none'], echoTimeoutMs: 1000 }, (api) =>
      startTcpHop('black-hole', { upstream: upstreamOf(api), blackHoleAfterSeconds: 1 }),
    );
    for (const s of r.results) {
      expect(s.hold).toMatchObject({ survived: false, disconnectSeconds: null, cause: 'echo-timeout' });
      expect(s.hold.quiet).toMatchObject({ cut: 'no-reply', unanswered: { quietSeconds: 2 } });
    }
    for (const v of r.verdicts) expect(v.verdict).toBe('both-broken');
    // Quiet gaps below 1 s were answered, above it not; a session echoing every 0.7 s was lost too, about 1 s in.
    expect(r.idleBracket).toMatchObject({ atExpiry: 'drop', proof: 'not-idle' });
    expect(r.idleBracket!.aboveSeconds).toBeLessThan(1);
    expect(r.idleBracket!.atMostSeconds).toBeGreaterThanOrEqual(1);
    expect(r.idleBracket!.check!.lostAtSeconds).toBeLessThan(2);
    expect(allCodes(r)).toEqual(['lifetime-cap']);
    expect(r.verdicts[0]!.diagnosis[0]!.check).toMatch(/Not an idle timeout/);
  });

  it('an idle cut with RST: cause rst and the measured time', async () => {
    const r = await probeEmulator({ faults: { idleCutSeconds: 1, idleCutMode: 'rst' } }, { holdsSeconds: [2], keepalives: ['none'] });
    for (const s of r.results) {
      expect(s.hold.cause).toBe('rst');
      expect(Math.abs(s.hold.disconnectSeconds! - 1)).toBeLessThan(0.5);
    }
    expect(allCodes(r)).toEqual(['idle-timeout']);
  });

  it("a slow first exchange (1.5 s) behind a 4 s idle hop: no pings-ignored; every stated timeout is the 4 s measured without pings, each with its own session's ping interval", async () => {
    const r = await probeEmulator({}, { operations: ['exec', 'portforward'], holdsSeconds: [8], keepalives: ['kubectl', 'none'], echoTimeoutMs: 5000 }, (api) =>
      startTcpHop('slow-idle-4s', { upstream: upstreamOf(api), idleCutSeconds: 4, upstreamDelayMs: 1500 }),
    );
    const all = [...r.verdicts.flatMap((v) => v.diagnosis), ...r.findings];
    expect(all.map((d) => d.code)).not.toContain('pings-ignored');
    const idle = all.filter((d) => d.code === 'idle-timeout');
    expect(idle.length).toBeGreaterThan(0);
    for (const d of idle) expect(`${d.summary} ${d.check}`).not.toMatch(/about (?:[5-9]|1\d) s/);
    const shorter = idle.filter((d) => /shorter than kubectl's ping interval/.test(d.check));
    expect(shorter.length).toBeGreaterThan(0);
    for (const d of shorter) {
      expect(d.check).toMatch(/measured without pings: about 4 s/);
      // Only the interval of the session that died (5 s for exec and SPDY, 10 s in the WebSocket port-forward tunnel), never both.
      expect(d.check).toMatch(/on this session \((5|10) s\)/);
      expect(d.check).not.toMatch(/5 s on SPDY and WebSocket exec; 10 s/);
    }
    // kubectl's pings survive nothing here: nothing says "kubectl itself is fine".
    expect(all.map((d) => d.check).join(' ')).not.toMatch(/kubectl itself is fine/);
  }, 60_000);

  it('a server whose 101s lack the negotiated protocol: bad-upgrade-response on both transports', async () => {
    raw = await rawServer((s, req) => s.write(req.method === 'GET' ? ws101(req) : spdy101('bogus.k8s.io')));
    const r = await runPlan(plan(raw.url), { skipPreflight: true });
    for (const v of r.verdicts) expect(v.verdict).toBe('both-broken');
    expect(allCodes(r)).toEqual(['bad-upgrade-response']);
  });

  it('nothing listening: unreachable, with the phase that failed', async () => {
    raw = await rawServer(() => undefined);
    const url = raw.url;
    await raw.close();
    raw = undefined;
    const r = await runPlan(plan(url), { skipPreflight: true });
    expect(allCodes(r)).toEqual(['unreachable']);
    expect(r.results[0]!.upgrade.errorCode).toBe('DIAL_REFUSED');
    expect(r.server.version).toBeNull();
  });

  it('every session ends inside its deadline even when the server never answers', async () => {
    const t0 = performance.now();
    const r = await probeEmulator({ faults: { noUpgradeAnswer: true } }, { holdsSeconds: [0, 30] });
    expect(performance.now() - t0).toBeLessThan(10_000);
    expect(r.results).toHaveLength(8);
    for (const s of r.results) expect(s.upgrade.errorCode).toBe('UPGRADE_TIMEOUT');
  });
});
