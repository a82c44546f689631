/**
 * `kubectl cp` as the ground truth for `--transfer` (issue 24), with real kubectl 1.29 (SPDY) and 1.33 / 1.36
 * (WebSocket):
 * - the emulator's `truncate-tail 4096` (the exit status overtakes the last 4096 bytes of stdout): what kubectl
 *   prints and exits with, which the probe's lost-tail diagnosis quotes (KUBECTL_ON_LOST_TAIL);
 * - a real bandwidth-limited relay (nginx `stream` with proxy_download_rate / proxy_upload_rate at 1 MiB/s): the
 *   probe's MiB/s is the path's, as `kubectl cp` of a file measures it, and many small files copy through it.
 */
import { mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { emulatorKubeconfig } from '../../lab/emulator/kubeconfig.js';
import { Emulator } from '../../lab/emulator/server.js';
import { kubectlBytes, runKubectl } from '../../lab/kubectl.js';
import type { RealHop } from '../../lab/real-hops/process-hop.js';
import { startNginxThrottle } from '../../lab/real-hops/reverse-proxies.js';
import { runPlan } from '../../src/probe/runner.js';
import { KUBECTL_ON_LOST_TAIL } from '../../src/probe/transfer-diagnosis.js';
import type { ProbePlan, ProbeReport } from '../../src/probe/types.js';
import { requireHop } from '../helpers/hops.js';
import { labPlan } from '../helpers/plan.js';

const MiB = 1024 * 1024;
const KUBECTLS: [string, string][] = [
  ['1.29', 'SPDY'],
  ['1.33', 'WebSocket'],
  ['1.36', 'WebSocket'],
];
const work = mkdtempSync(join(tmpdir(), 'ksp-cp-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

/** Bytes no two runs share, so a stale copy never passes. */
const payload = (bytes: number) => {
  const b = Buffer.alloc(bytes);
  let x = (Date.now() & 0xffff) | 1;
  for (let i = 0; i < bytes; i++) {
    x = (x * 1103515245 + 12345) & 0x7fffffff;
    b[i] = x >>> 16;
  }
  return b;
};

const plan = (server: URL, bytes: number, operations: ProbePlan['operations'], transferShapes?: ProbePlan['transferShapes']): ProbePlan =>
  labPlan(server, {
    operations,
    transferBytes: bytes,
    ...(transferShapes ? { transferShapes } : {}),
    cluster: { ...labPlan(server).cluster, connection: { server } },
  });

describe('a lost tail (emulator truncate-tail 4096): what kubectl does is what the probe says', () => {
  let emulator: Emulator;
  let kubeconfig: string;
  let report: ProbeReport;
  const file = payload(8 * MiB);
  beforeAll(async () => {
    emulator = await Emulator.start({ faults: { truncateTailBytes: 4096 } });
    kubeconfig = join(work, 'truncate.kubeconfig');
    writeFileSync(kubeconfig, emulatorKubeconfig(emulator));
    writeFileSync(join(work, 'dump.bin'), file);
    report = await runPlan(plan(emulator.url, 8 * MiB, ['exec'], ['echo', 'upload', 'download']), { skipPreflight: true });
  }, 60_000);
  afterAll(() => emulator.stop());

  it.each(KUBECTLS)('kubectl %s (%s): exec -i … cat exits 0 with the last 4096 bytes missing and nothing on stderr', async (k) => {
    const r = await kubectlBytes(k, ['--kubeconfig', kubeconfig, 'exec', '-i', 'probe-target', '--', 'cat'], file);
    expect({ code: r.code, stderr: r.stderr, bytes: r.stdout.length }).toEqual({ code: 0, stderr: '', bytes: 8 * MiB - 4096 });
    expect(r.stdout.equals(file.subarray(0, 8 * MiB - 4096))).toBe(true);
  });

  it.each(KUBECTLS)('kubectl %s (%s): cp from the pod exits 1 with "unexpected EOF"', async (k) => {
    const up = await runKubectl(k, ['--kubeconfig', kubeconfig, 'cp', join(work, 'dump.bin'), `probe-target:/tmp/dump-${k}.bin`]);
    expect(up.code, up.stderr).toBe(0);
    const down = await runKubectl(k, ['--kubeconfig', kubeconfig, 'cp', `probe-target:/tmp/dump-${k}.bin`, join(work, `back-${k}.bin`)]);
    expect(down.code).toBe(1);
    expect(down.stderr).toMatch(/error: unexpected EOF/);
  });

  it('the probe reports the lost tail on both transports, quoting exactly that; the upload (kubectl cp into the pod: exit 0 above) is clean', () => {
    const rows = report.verdicts
      .filter((x) => x.transferBytes)
      .map((v) => `${v.transferShape ?? 'echo'} ${v.verdict} ${v.diagnosis.map((d) => d.code).join(',')}`);
    expect(rows).toEqual([
      'echo both-broken transfer-tail-lost,transfer-tail-lost',
      'upload clean ',
      'download both-broken transfer-tail-lost,transfer-tail-lost',
    ]);
    for (const s of report.results.filter((x) => x.transferBytes && x.transferShape !== 'upload')) {
      // The echo loses the fault's 4096 bytes; the download (the pod's 64 KiB writes) what was in flight at the exit.
      expect(s.transfer).toMatchObject({ end: 'truncated' });
      if (!s.transferShape) expect(s.transfer!.lostTailBytes).toBe(4096);
      else expect(s.transfer!.lostTailBytes).toBeGreaterThan(0);
      expect(s.exitCode).toBe(0);
    }
    const v = report.verdicts.find((x) => x.transferBytes)!;
    const d = v.diagnosis.find((x) => x.code === 'transfer-tail-lost')!;
    expect(d.check).toContain(KUBECTL_ON_LOST_TAIL);
    // The words the diagnosis quotes are the ones measured above.
    expect(KUBECTL_ON_LOST_TAIL).toMatch(/exits 0 with the output short and nothing on stderr/);
    expect(KUBECTL_ON_LOST_TAIL).toMatch(/exits 1 with "error: unexpected EOF"/);
    // And every kubectl row of the model says it breaks there, with no fallback (it upgraded).
    expect(v.kubectl!.filter((e) => e.client !== 'websocket-only').every((e) => e.outcome === 'breaks' && /unexpected EOF/.test(e.reason))).toBe(true);
  });
});

describe('output that stops after 256 KiB (emulator stall-after): kubectl cp out of the pod hangs, into it works, and the probe says which', () => {
  let emulator: Emulator;
  let kubeconfig: string;
  let report: ProbeReport;
  const file = payload(MiB);
  beforeAll(async () => {
    emulator = await Emulator.start({ faults: { stallAfterBytes: 256 * 1024 } });
    kubeconfig = join(work, 'stall.kubeconfig');
    writeFileSync(kubeconfig, emulatorKubeconfig(emulator));
    writeFileSync(join(work, 'one.bin'), file);
    report = await runPlan(plan(emulator.url, MiB, ['exec'], ['upload', 'download', 'small']), { skipPreflight: true });
  }, 60_000);
  afterAll(() => emulator.stop());

  it.each([KUBECTLS[0]!, KUBECTLS[2]!])('kubectl %s (%s): cp into the pod exits 0; cp out of it never ends (killed after 8 s)', async (k) => {
    const up = await runKubectl(k, ['--kubeconfig', kubeconfig, 'cp', join(work, 'one.bin'), `probe-target:/tmp/one-${k}.bin`], { timeoutMs: 20_000 });
    expect(up.code, up.stderr).toBe(0);
    const down = await runKubectl(k, ['--kubeconfig', kubeconfig, 'cp', `probe-target:/tmp/one-${k}.bin`, join(work, `one-back-${k}.bin`)], {
      timeoutMs: 8_000,
    });
    expect(down.code).toBeNull();
  });

  it('the probe: the upload clean, the download and the small writes stalled (kubectl cp hangs), on both transports', () => {
    const rows = report.verdicts.filter((x) => x.transferBytes).map((v) => `${v.transferShape} ${v.verdict} ${v.diagnosis.map((d) => d.code).join(',')}`);
    expect(rows).toEqual(['upload clean ', 'download both-broken transfer-stalled,transfer-stalled', 'small both-broken transfer-stalled,transfer-stalled']);
    expect(report.verdicts.find((v) => v.transferShape === 'download')!.diagnosis[0]!.check).toMatch(/a `kubectl cp` hangs/);
  });
});

describe('a bandwidth-limited relay (nginx stream, 1 MiB/s each way per connection)', () => {
  const RATE = MiB;
  let emulator: Emulator;
  let hop: RealHop | undefined;
  let kubeconfig: string;
  let report: ProbeReport;
  const file = payload(4 * MiB);
  beforeAll(async () => {
    emulator = await Emulator.start({});
    hop = await requireHop(() => startNginxThrottle(RATE, Number(emulator.url.port)));
    if (!hop) return;
    const server = new URL(`http://127.0.0.1:${hop.port}`);
    kubeconfig = join(work, 'throttle.kubeconfig');
    writeFileSync(kubeconfig, emulatorKubeconfig(emulator, { server: server.toString().replace(/\/$/, '') }));
    writeFileSync(join(work, 'four.bin'), file);
    const many = join(work, 'many');
    mkdirSync(many, { recursive: true });
    for (let i = 0; i < 200; i++) writeFileSync(join(many, `f${i}.txt`), `${i}:${'x'.repeat(1000 + i)}\n`);
    report = await runPlan(plan(server, 4 * MiB, ['exec', 'portforward']), { skipPreflight: true });
  }, 90_000);
  afterAll(async () => {
    await hop?.stop();
    await emulator.stop();
  });

  it("the probe: complete on both operations and transports, at the relay's rate (MiB/s), not the client's", ({ skip }) => {
    if (!hop) skip('nginx stream module missing');
    for (const s of report.results.filter((x) => x.transferBytes)) {
      expect(s.transfer?.end, `${s.operation} ${s.transport}`).toBe('complete');
      expect(s.transfer!.mibPerSecond).toBeGreaterThan(0.5);
      expect(s.transfer!.mibPerSecond).toBeLessThan(1.2);
    }
    expect(report.verdicts.filter((v) => v.transferBytes).every((v) => v.verdict === 'clean')).toBe(true);
  });

  it.for(KUBECTLS)('kubectl %s (%s): cp of a 4 MiB file from the pod takes what the probe measured, byte-exact', { timeout: 90_000 }, async ([k], { skip }) => {
    if (!hop) skip('nginx stream module missing');
    const up = await runKubectl(k, ['--kubeconfig', kubeconfig, 'cp', join(work, 'four.bin'), `probe-target:/tmp/four-${k}.bin`], { timeoutMs: 60_000 });
    expect(up.code, up.stderr).toBe(0);
    const t0 = performance.now();
    const down = await runKubectl(k, ['--kubeconfig', kubeconfig, 'cp', `probe-target:/tmp/four-${k}.bin`, join(work, `four-back-${k}.bin`)], {
      timeoutMs: 60_000,
    });
    const seconds = (performance.now() - t0) / 1000;
    expect(down.code, down.stderr).toBe(0);
    expect(readFileSync(join(work, `four-back-${k}.bin`)).equals(file)).toBe(true);
    // kubectl's rate through the relay, against the probe's exec transfer on the same transport family.
    const probe = report.results.find((x) => x.transferBytes && x.operation === 'exec' && x.transport === (k === '1.29' ? 'spdy' : 'websocket'))!;
    const kubectlMiBs = 4 / seconds;
    expect(kubectlMiBs / probe.transfer!.mibPerSecond).toBeGreaterThan(0.5);
    expect(kubectlMiBs / probe.transfer!.mibPerSecond).toBeLessThan(1.6);
  });

  it.for(KUBECTLS)('kubectl %s (%s): cp of 200 small files into the pod and back, every one intact', { timeout: 90_000 }, async ([k], { skip }) => {
    if (!hop) skip('nginx stream module missing');
    const up = await runKubectl(k, ['--kubeconfig', kubeconfig, 'cp', join(work, 'many'), `probe-target:/tmp/many-${k}`], { timeoutMs: 60_000 });
    expect(up.code, up.stderr).toBe(0);
    const back = join(work, `many-back-${k}`);
    const down = await runKubectl(k, ['--kubeconfig', kubeconfig, 'cp', `probe-target:/tmp/many-${k}`, back], { timeoutMs: 60_000 });
    expect(down.code, down.stderr).toBe(0);
    const names = readdirSync(back).sort();
    expect(names).toHaveLength(200);
    for (const n of names) expect(readFileSync(join(back, n)).equals(readFileSync(join(work, 'many', n)))).toBe(true);
  });
});
