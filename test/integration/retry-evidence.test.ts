/**
 * Retry before it counts, and the evidence of every failed session, from real loopback setups: the emulated API
 * server behind a hop that resets the first WebSocket upgrade (a one-off), refuses WebSocket every time, or cuts idle
 * connections; through the real runner, the metric contract and the Lambda's evidence lines.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { startEmulatorWithKubeconfig, type EmulatorWithKubeconfig } from '../../lab/emulator/kubeconfig.js';
import { upstreamOf, type Hop } from '../../lab/hops/common.js';
import { startL7Hop } from '../../lab/hops/l7-hop.js';
import { startTcpHop } from '../../lab/hops/tcp-hop.js';
import { evidenceLogLines } from '../../src/lambda/evidence-log.js';
import { reportDatums } from '../../src/metrics/datums.js';
import { EVIDENCE_LIMITS } from '../../src/probe/evidence.js';
import { EVIDENCE_MAX_CHARS, evidenceRecords } from '../../src/probe/evidence-records.js';
import { RETRY_PAUSE_MS } from '../../src/probe/retry.js';
import { runPlan } from '../../src/probe/runner.js';
import type { ProbePlan } from '../../src/probe/types.js';
import { labPlan } from '../helpers/plan.js';

let lab: EmulatorWithKubeconfig | undefined;
let hop: Hop | undefined;
afterEach(async () => {
  await hop?.close();
  await lab?.stop();
  lab = hop = undefined;
});

const TOKEN = 'sekrit-token-4b1d9c';

async function through(via: (api: URL) => Promise<Hop>, over: Partial<ProbePlan> = {}) {
  lab = await startEmulatorWithKubeconfig({});
  hop = await via(lab.emulator.url);
  const plan = labPlan(hop.url, over);
  return runPlan({ ...plan, cluster: { ...plan.cluster, connection: { ...plan.cluster.connection, headers: { Authorization: `Bearer ${TOKEN}` } } } });
}

const values = (r: Parameters<typeof reportDatums>[0], name: string) =>
  reportDatums(r)
    .filter((d) => d.name === name)
    .map((d) => d.value);

describe('retry before it counts', () => {
  it('a hop that resets one WebSocket upgrade: that session is tried again and works; a flapping finding and Flapping 1, nothing fails', async () => {
    const t0 = performance.now();
    const r = await through((api) => startL7Hop('resets-once', { upstream: upstreamOf(api), resetFirst: { kind: 'websocket', count: 1 } }));
    for (const v of r.verdicts) expect(v.verdict).toBe('clean');
    const retried = r.results.filter((s) => s.retry);
    expect(retried).toHaveLength(1);
    const [s] = retried;
    expect(s!.transport).toBe('websocket');
    expect(s!.ok).toBe(true);
    expect(s!.retry).toMatchObject({ outcome: 'passed', pauseMs: RETRY_PAUSE_MS, first: { upgrade: { ok: false, status: null }, firstEchoMs: null } });
    // The first attempt's wire: the GET with its upgrade headers went out; nothing answered it.
    expect(s!.retry!.first.wire?.request).toMatchObject({ method: 'GET' });
    expect(s!.retry!.first.wire?.reply).toBeUndefined();
    expect(performance.now() - t0).toBeGreaterThanOrEqual(RETRY_PAUSE_MS);
    expect(r.findings.map((f) => f.code)).toEqual(['flapping']);
    expect(r.findings[0]!.summary).toMatch(/WebSocket: a session failed before the hold — its upgrade failed .* and worked on a fresh connection 1 s later/);
    expect(values(r, 'Flapping')).toEqual([1]);
    expect(values(r, 'UpgradeSuccess').every((v) => v === 1)).toBe(true);
    expect(values(r, 'KubectlUpgrade')).toEqual([1, 1]);
    // Both attempts are in the evidence: the failed one, and the retry that worked.
    const ev = evidenceRecords(r);
    expect(ev.map((e) => [e.session, e.attempt, e.ok])).toEqual([
      [s!.operation === 'exec' ? 'WebSocket exec' : 'WebSocket port-forward', 'first', false],
      [s!.operation === 'exec' ? 'WebSocket exec' : 'WebSocket port-forward', 'retry', true],
    ]);
  });

  it('a hop that refuses WebSocket every time: retried, failed the same way, counted as failed; both attempts in the evidence with the hop reply', async () => {
    const r = await through((api) => startL7Hop('corp-proxy', { upstream: upstreamOf(api), refuse: ['websocket'] }));
    for (const v of r.verdicts) expect(v.verdict).toBe('websocket-broken');
    const ws = r.results.filter((s) => s.transport === 'websocket');
    for (const s of ws) expect(s.retry).toMatchObject({ outcome: 'failed-same', first: { upgrade: { status: 403 } } });
    expect(r.results.filter((s) => s.transport === 'spdy' && s.retry)).toEqual([]);
    expect(values(r, 'Flapping')).toEqual([0]);
    // kubectl falls back: it gets its stream (the SLI), though WebSocket did not.
    expect(values(r, 'KubectlUpgrade')).toEqual([1, 1]);
    const ev = evidenceRecords(r);
    expect(ev).toHaveLength(4);
    for (const e of ev) {
      expect(e).toMatchObject({ verdict: 'websocket-broken', ok: false, upgrade: { status: 403, server: 'corp-proxy' } });
      expect(e.diagnosis).toMatch(/^hop-refused-upgrade: /);
      expect(e.wire?.reply).toMatchObject({ status: 403, statusText: 'Forbidden' });
      expect(e.wire?.reply?.headers).toContainEqual(['Server', 'corp-proxy']);
      expect(e.wire?.request?.headers).toContainEqual(['Authorization', 'Bearer <masked>']);
      expect(e.upgrade.bodyPrefix).toMatch(/websocket upgrades are not allowed by policy/);
    }
    // Nothing secret in the evidence, the Lambda's lines or the report.
    const lines = evidenceLogLines(r, { id: 'run-1', location: 'test', schedule: 'short' });
    expect(lines.every((l) => l.run === 'run-1' && l.msg === 'evidence')).toBe(true);
    for (const text of [JSON.stringify(ev), JSON.stringify(lines), JSON.stringify(r)]) expect(text).not.toContain(TOKEN);
  });

  it('a session cut during its hold is not retried (the cut is the measurement): its evidence dates the end on the wire', async () => {
    const r = await through((api) => startTcpHop('idle-cutter', { upstream: upstreamOf(api), idleCutSeconds: 1 }), {
      keepalives: ['none'],
      holdsSeconds: [2],
      operations: ['exec'],
    });
    expect(r.results.every((s) => !s.ok && !s.retry && s.hold.survived === false)).toBe(true);
    const ev = evidenceRecords(r);
    expect(ev.map((e) => e.attempt)).toEqual(['only', 'only']);
    const ws = ev.find((e) => e.transport === 'websocket')!;
    const spdy = ev.find((e) => e.transport === 'spdy')!;
    expect(ws.wire?.reply?.status).toBe(101);
    expect(ws.wire?.frames.map((f) => f.frame)).toContainEqual(expect.stringMatching(/^WebSocket (TCP FIN|CLOSE 1006)/));
    expect(spdy.wire?.frames.map((f) => f.frame)).toContainEqual('SPDY end of stream (FIN)');
    // The end is dated after the hold began (a second of idle), in ms since the session started.
    const end = ws.wire!.frames.find((f) => /FIN|CLOSE/.test(f.frame))!;
    expect(end.atMs).toBeGreaterThan(900);
    expect(ws.hold).toMatchObject({ survived: false, cause: 'fin' });
  });

  it('evidence of a cut despite pings: the pings and their answers before the end, and every record within its bound', async () => {
    // Pings every few seconds over an 8 s hold through a hop that cuts at 6 s even with pings (a lifetime cap).
    const r = await through((api) => startTcpHop('lifetime', { upstream: upstreamOf(api), lifetimeSeconds: 6 }), {
      keepalives: ['kubectl'],
      holdsSeconds: [8],
      operations: ['portforward'],
      transports: ['spdy'],
    });
    const ev = evidenceRecords(r);
    expect(ev).toHaveLength(1);
    expect(ev[0]!.wire!.frames.map((f) => `${f.direction} ${f.frame}`).slice(-3)).toEqual(['> SPDY PING 1', '< SPDY PING 1', '< SPDY end of stream (FIN)']);
    for (const e of ev) {
      expect(JSON.stringify(e).length).toBeLessThanOrEqual(EVIDENCE_MAX_CHARS);
      expect(e.wire!.frames.length).toBeLessThanOrEqual(EVIDENCE_LIMITS.frames);
    }
  }, 30_000);
});
