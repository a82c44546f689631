/**
 * `kube-stream-probe emulator` as a process: a startup error (port in use, a
 * kubeconfig path it cannot write) exits 2 with the reason and nothing left
 * running (the process ends by itself); Ctrl-C stops it and removes the temp
 * kubeconfig it wrote. And the demo's table ends with what to do next.
 */
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cli } from '../helpers/cli.js';

function emulator(args: string[]) {
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/cli/main.ts', 'emulator', ...args], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { PATH: process.env.PATH, HOME: '/nonexistent', TMPDIR: process.env.TMPDIR },
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d) => (stdout += d));
  child.stderr.on('data', (d) => (stderr += d));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  return { child, exited, out: () => stdout, err: () => stderr };
}

/** Resolves with the exit code, or "still running" after `ms`. */
const within = <T>(p: Promise<T>, ms: number) => Promise.race([p, new Promise<'still running'>((r) => setTimeout(() => r('still running'), ms))]);

let busy: net.Server;
beforeAll(async () => {
  busy = net.createServer();
  await new Promise<void>((r) => busy.listen(0, '127.0.0.1', r));
});
afterAll(() => busy.close());

describe('the emulator process', () => {
  it('a port in use: exit 2 with the reason, and the process ends (nothing kept running)', async () => {
    const e = emulator(['--port', String((busy.address() as net.AddressInfo).port)]);
    expect(await within(e.exited, 15_000)).toBe(2);
    expect(e.err()).toMatch(/cannot listen on 127\.0\.0\.1:\d+ \(EADDRINUSE\)/);
  }, 30_000);

  it('a kubeconfig path it cannot write: exit 2 with the reason, and the process ends', async () => {
    const e = emulator(['--write-kubeconfig', '/nonexistent-dir/kubeconfig']);
    expect(await within(e.exited, 15_000)).toBe(2);
    expect(e.err()).toMatch(/--write-kubeconfig: \/nonexistent-dir\/kubeconfig cannot be written \(ENOENT\)/);
  }, 30_000);

  it('Ctrl-C: it stops, and the temp kubeconfig it wrote is gone', async () => {
    const e = emulator([]);
    const t0 = Date.now();
    while (!/kubeconfig: /.test(e.out()) && Date.now() - t0 < 15_000) await new Promise((r) => setTimeout(r, 100));
    const path = /kubeconfig: (\S+)/.exec(e.out())![1]!;
    expect(existsSync(path)).toBe(true);
    e.child.kill('SIGINT');
    expect(await within(e.exited, 5_000)).toBe(130);
    expect(existsSync(path)).toBe(false);
  }, 30_000);
});

describe('the demo', () => {
  it('ends with the next steps: the target, a run with a report, the deployment', async () => {
    const r = await cli(['demo']);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(
      /Next steps:\n  1\. .*\n +npm run -s cli -- manifest \| kubectl apply -f -\n  2\. .*\n +npm run -s cli -- run -n \S+ --hold 0s,65s,6m --keepalive kubectl,none -o html --out report\.html\n  3\. /,
    );
    // Step 2 looks where step 1 deployed the target: the namespace step 1's manifest creates.
    const manifest = await cli(['manifest']);
    const namespace = /^kind: Namespace\nmetadata:\n  name: (\S+)/m.exec(manifest.stdout)![1];
    expect(/ run -n (\S+) /.exec(r.stdout)![1]).toBe(namespace);
  }, 60_000);
});
