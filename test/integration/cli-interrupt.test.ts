/**
 * Ctrl-C (SIGINT) and SIGTERM during a long hold, on the real CLI process:
 * the sessions are closed (the emulator sees every streaming connection end),
 * what was measured is printed with the unfinished sessions marked
 * interrupted and how long they had held, and the process exits 130 / 143
 * within 2 s, leaving nothing running.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import { emulatorKubeconfig, startEmulatorWithKubeconfig, type EmulatorWithKubeconfig } from '../../lab/emulator/kubeconfig.js';
import { startNginx } from '../../lab/real-hops/reverse-proxies.js';
import type { RealHop } from '../../lab/real-hops/process-hop.js';
import { requireHop } from '../helpers/hops.js';

let lab: EmulatorWithKubeconfig;
beforeAll(async () => {
  lab = await startEmulatorWithKubeconfig({ tls: true });
});
afterAll(async () => {
  await lab?.stop();
});

interface Exit {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
  /** ms from the signal to the exit. */
  afterSignalMs: number;
}

/** Starts `run` holding 120 s, waits until every session is holding, sends `signal`. */
async function interrupt(signal: NodeJS.Signals, args: string[]): Promise<Exit> {
  const child: ChildProcess = spawn(
    process.execPath,
    ['--import', 'tsx', 'src/cli/main.ts', 'run', '--kubeconfig', lab.kubeconfig, '--hold', '0s,120s', '--keepalive', 'kubectl', ...args],
    {
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { PATH: process.env.PATH, HOME: '/nonexistent' },
    },
  );
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (d) => (stdout += d));
  child.stderr!.on('data', (d) => (stderr += d));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.on('exit', (code, sig) => resolve({ code, signal: sig })),
  );
  // 2 operations × 2 transports held 120 s: wait until all four are upgraded and holding.
  const from = lab.emulator.upgrades.length;
  const t0 = Date.now();
  while (lab.since(from).length < 8 && Date.now() - t0 < 20_000) await new Promise((r) => setTimeout(r, 100));
  expect(lab.since(from).length).toBe(8); // 2 operations × 2 transports × holds 0 s and 120 s
  await new Promise((r) => setTimeout(r, 1500));
  const sentAt = Date.now();
  child.kill(signal);
  const result = await exited;
  return { ...result, stdout, stderr, afterSignalMs: Date.now() - sentAt };
}

describe('interrupting a run mid-hold', () => {
  it('SIGINT: the table of what was measured, unfinished sessions interrupted, exit 130 within 2 s, every connection closed', async () => {
    const r = await interrupt('SIGINT', []);
    expect(r.code, r.stderr).toBe(130);
    expect(r.afterSignalMs).toBeLessThan(2000);
    // The 0 s holds finished and keep their verdicts; the 120 s ones are interrupted.
    expect(r.stdout).toMatch(/exec\s+kubectl\s+0s\s+ok\s+ok\s+clean/);
    expect(r.stdout).toMatch(/exec\s+kubectl\s+120s\s+interrupted\s+interrupted\s+interrupted/);
    expect(r.stdout).toMatch(/\[interrupted\] Run again and let the 120 s holds finish/);
    expect(r.stdout).toMatch(/interrupted \(SIGINT\) after holding \d+(\.\d)? s of its 120 s hold/);
    expect(r.stderr).toContain('interrupted (SIGINT)');
    // Nothing left: the emulator's streaming connections are all gone.
    const t0 = Date.now();
    while ((lab.emulator.openConnections.api > 0 || lab.emulator.openConnections.pod > 0) && Date.now() - t0 < 2000)
      await new Promise((res) => setTimeout(res, 50));
    expect(lab.emulator.openConnections).toEqual({ api: 0, pod: 0 });
  }, 60_000);

  it('SIGTERM with -o json: the JSON document, sessions with how long they had held, exit 143 within 2 s', async () => {
    const r = await interrupt('SIGTERM', ['-o', 'json']);
    expect(r.code, r.stderr).toBe(143);
    expect(r.afterSignalMs).toBeLessThan(2000);
    const doc = JSON.parse(r.stdout);
    const held = doc.results.filter((s: { holdSeconds: number }) => s.holdSeconds === 120);
    expect(held).toHaveLength(4);
    for (const s of held) {
      expect(s).toMatchObject({ errorCode: 'INTERRUPTED', ok: false, hold: { survived: null, cause: 'interrupted' } });
      expect(s.hold.heldSeconds).toBeGreaterThan(1);
      expect(s.hold.heldSeconds).toBeLessThan(30);
    }
    expect(
      doc.verdicts
        .filter((v: { verdict: string }) => v.verdict === 'interrupted')
        .map((v: { operation: string }) => v.operation)
        .sort(),
    ).toEqual(['exec', 'portforward']);
    expect(doc.verdicts.filter((v: { holdSeconds: number }) => v.holdSeconds === 0).every((v: { verdict: string }) => v.verdict === 'clean')).toBe(true);
  }, 60_000);
});

describe('an interrupted run concludes nothing it did not measure', () => {
  let plain: EmulatorWithKubeconfig;
  let nginx: RealHop | undefined;
  beforeAll(async () => {
    plain = await startEmulatorWithKubeconfig({});
    nginx = await requireHop(() => startNginx({ kind: 'refuse-websocket' }, Number(plain.emulator.url.port)));
  });
  afterAll(async () => Promise.all([nginx?.stop(), plain?.stop()]));

  it("Ctrl-C during a hold behind nginx refusing WebSocket: the 0 s rows say what a finished run says (nginx's rule on the Upgrade), never a verb-acl the plain GET was not run to show", async () => {
    const kubeconfig = join(tmpdir(), `ksp-interrupt-nginx-${process.pid}.yaml`);
    writeFileSync(kubeconfig, emulatorKubeconfig(plain.emulator, { server: `http://127.0.0.1:${nginx!.port}` }));
    const args = ['--import', 'tsx', 'src/cli/main.ts', 'run', '--kubeconfig', kubeconfig, '--keepalive', 'kubectl', '-o', 'json'];
    const codes = (doc: any) =>
      Object.fromEntries(doc.verdicts.filter((v: any) => v.holdSeconds === 0).map((v: any) => [v.operation, v.diagnosis.map((d: any) => d.code)]));
    const finished = await new Promise<string>((resolve) => {
      let out = '';
      const c = spawn(process.execPath, [...args, '--hold', '0s'], { stdio: ['ignore', 'pipe', 'ignore'] });
      c.stdout!.on('data', (d) => (out += d));
      c.on('exit', () => resolve(out));
    });
    const whole = codes(JSON.parse(finished));
    expect(whole.exec).toContain('hop-refused-upgrade');
    // Interrupted 2 s into a 120 s hold: the 0 s rows finished before.
    const child = spawn(process.execPath, [...args, '--hold', '0s,120s'], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout!.on('data', (d) => (out += d));
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    const from = plain.emulator.upgrades.length;
    const t0 = Date.now();
    // The SPDY sessions reach the emulator (nginx refuses the WebSocket ones): 2 operations × 2 holds.
    while (plain.since(from).length < 4 && Date.now() - t0 < 20_000) await new Promise((r) => setTimeout(r, 100));
    await new Promise((r) => setTimeout(r, 2000));
    child.kill('SIGINT');
    expect(await exited).toBe(130);
    const interrupted = codes(JSON.parse(out));
    expect(interrupted.exec).not.toContain('verb-acl');
    expect(interrupted.portforward).not.toContain('verb-acl');
    expect(interrupted.exec).toContain('hop-refused-upgrade');
  }, 90_000);
});
