/**
 * Terminal sessions (`--tty`, `--hold-shape tty`; issue 41): exec and attach with a terminal, sized as kubectl sizes
 * it and resized after the hold, the size checked through the terminal. Compared with real kubectl 1.29 (SPDY),
 * 1.33 and 1.36 (WebSocket) running `exec -it` and `attach -it` on a pty of their own (lab/pty.ts): the resize
 * messages they send, and what the pod's process reads, on the emulator directly, through real nginx (WebSocket
 * refused: the fallback) and haproxy, and behind a runtime that drops resizes (`tty-resize-lost`).
 */
import { writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { emulatorKubeconfig, startEmulatorWithKubeconfig, type EmulatorWithKubeconfig } from '../../lab/emulator/kubeconfig.js';
import { kubectlInTerminal, runKubectl } from '../../lab/kubectl.js';
import type { RealHop } from '../../lab/real-hops/process-hop.js';
import { startHaproxy, startNginx } from '../../lab/real-hops/reverse-proxies.js';
import { startMitmproxy } from '../../lab/real-hops/proxies.js';
import YAML from 'yaml';
import { TTY_SIZE_SCRIPT } from '../../src/probe/hold-shape.js';
import { TERMINAL_SIZES, TTY_EOF } from '../../src/probe/terminal.js';
import { cli } from '../helpers/cli.js';
import { requireHop } from '../helpers/hops.js';

type Json = any;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const WINDOW = { cols: 100, rows: 40 };
const RESIZED = { cols: 120, rows: 50 };

let lab: EmulatorWithKubeconfig;
let dropping: EmulatorWithKubeconfig;
const hops: RealHop[] = [];
const paths: Record<string, string> = {};
const kubeconfigVia = (e: EmulatorWithKubeconfig, port: number, name: string) => {
  const file = join(tmpdir(), `ksp-tty-${name}-${process.pid}.yaml`);
  writeFileSync(file, emulatorKubeconfig(e.emulator, { server: `http://127.0.0.1:${port}` }));
  return file;
};
beforeAll(async () => {
  lab = await startEmulatorWithKubeconfig({});
  dropping = await startEmulatorWithKubeconfig({ faults: { dropResize: true } });
  const upstream = Number(lab.emulator.url.port);
  const nginxOk = (await requireHop(() => startNginx({ kind: 'upgrade-ok', readTimeoutSeconds: 60 }, upstream)))!;
  const nginxNoWs = (await requireHop(() => startNginx({ kind: 'refuse-websocket' }, upstream)))!;
  const haproxy = (await requireHop(() => startHaproxy({ kind: 'tcp', timeoutSeconds: 60 }, upstream)))!;
  hops.push(nginxOk, nginxNoWs, haproxy);
  paths.direct = lab.kubeconfig;
  paths.nginx = kubeconfigVia(lab, nginxOk.port, 'nginx');
  paths['nginx refusing WebSocket'] = kubeconfigVia(lab, nginxNoWs.port, 'nginx-no-ws');
  paths.haproxy = kubeconfigVia(lab, haproxy.port, 'haproxy');
}, 60_000);
afterAll(async () => Promise.all([...hops.map((h) => h.stop()), lab?.stop(), dropping?.stop()]));

const probe = async (kubeconfig: string) => {
  const r = await cli(['run', '--kubeconfig', kubeconfig, '--ops', 'exec,attach', '--hold', '0s,2s', '--tty', '--no-preflight', '-o', 'json']);
  return JSON.parse(r.stdout) as Json;
};

/** The resize messages of a session: the first size (attach: one more column and row before it), then the change. */
const sizes = (w: number, h: number, w2: number, h2: number, attaching: boolean) =>
  [...(attaching ? [{ Width: w + 1, Height: h + 1 }] : []), { Width: w, Height: h }, { Width: w2, Height: h2 }].map((x) => JSON.stringify(x));

/** Real kubectl -it on a pty: type a line, resize the window, type another, end; what the terminal showed. */
async function kubectlTerminal(version: string, kubeconfig: string, e: EmulatorWithKubeconfig, args: readonly string[]) {
  const before = e.emulator.upgrades.length;
  const k = kubectlInTerminal(version, ['--kubeconfig', kubeconfig, ...args], WINDOW, 20_000);
  // Type once kubectl streams (before, the pty's own line discipline would take the input).
  for (let i = 0; i < 200 && !e.emulator.upgrades.slice(before).some((u) => u.status === 101); i++) await sleep(50);
  await sleep(300);
  k.type('one\r');
  await sleep(300);
  k.resize(RESIZED);
  await sleep(500);
  k.type('two\r');
  await sleep(300);
  // exec: Ctrl-D ends the loop and kubectl exits 0; attach: the container's process goes on, so kubectl is closed.
  if (args[0] === 'exec') k.type(TTY_EOF);
  else k.stop();
  const shown = await k.done;
  const upgrade = e.emulator.upgrades.slice(before).find((u) => u.status === 101);
  return { shown: shown?.stdout, resizes: upgrade?.resizes, transport: upgrade?.transport };
}

describe.each(['direct', 'nginx', 'nginx refusing WebSocket', 'haproxy'])('terminal sessions on the %s path', (path) => {
  it('the probe sizes and resizes exec and attach terminals as kubectl does, and its verdicts agree with real kubectl -it', async () => {
    const doc = await probe(paths[path]!);
    const rows = doc.verdicts.map((v: Json) => `${v.operation} ${v.holdSeconds}s ${v.holdShape} ${v.verdict}`);
    const verdict = path === 'nginx refusing WebSocket' ? 'websocket-broken' : 'clean';
    expect(rows).toEqual([`exec 0s tty ${verdict}`, `exec 2s tty ${verdict}`, `attach 0s tty ${verdict}`, `attach 2s tty ${verdict}`]);
    const start = { width: TERMINAL_SIZES.start.width, height: TERMINAL_SIZES.start.height };
    const resized = { width: TERMINAL_SIZES.resized.width, height: TERMINAL_SIZES.resized.height };
    for (const r of doc.results.filter((x: Json) => x.upgrade.ok))
      expect(r.terminal).toEqual({ start: { sent: start, seen: start }, resized: { sent: resized, seen: resized } });
    // Our resize messages as the emulator received them, per session: kubectl's sequence with our sizes.
    const ours = lab.emulator.upgrades.filter((u) => u.status === 101 && u.resizes?.length).slice(-doc.results.filter((x: Json) => x.upgrade.ok).length);
    for (const u of ours)
      expect(u.resizes!.map((x) => JSON.stringify(x))).toEqual(sizes(start.width, start.height, resized.width, resized.height, u.operation === 'attach'));
    for (const version of ['1.29', '1.33', '1.36']) {
      const exec = await kubectlTerminal(version, paths[path]!, lab, ['exec', '-it', 'probe-target', '--', 'sh', '-c', TTY_SIZE_SCRIPT]);
      const attach = await kubectlTerminal(version, paths[path]!, lab, ['attach', '-it', 'probe-target', '-c', 'tty']);
      // kubectl sends its window's size first (attach: one more column and row first, to force a redraw) and then
      // each change; the probe's sessions send the same sequence with its own sizes (above).
      const distinct = (list: readonly object[] | undefined) => [...new Set((list ?? []).map((x) => JSON.stringify(x)))];
      for (const [k, attaching] of [
        [exec, false],
        [attach, true],
      ] as const) {
        expect([version, k.transport]).toEqual([version, version === '1.29' || path === 'nginx refusing WebSocket' ? 'spdy' : 'websocket']);
        // (stty sets columns and rows one after the other: kubectl may see a window change between them too.)
        const want = sizes(WINDOW.cols, WINDOW.rows, RESIZED.cols, RESIZED.rows, attaching);
        const got = distinct(k.resizes);
        expect([...got.slice(0, want.length - 1), got.at(-1)]).toEqual(want);
        expect(k.shown).toContain(`one\r\n${WINDOW.rows} ${WINDOW.cols}\r\n`);
        expect(k.shown).toContain(`two\r\n${RESIZED.rows} ${RESIZED.cols}\r\n`);
      }
    }
  }, 120_000);
});

describe('a runtime that drops terminal resizes', () => {
  it('each terminal session is tty-resize-lost, over both transports, exec and attach; real kubectl exec -it reads 0×0 there', async () => {
    const doc = await probe(dropping.kubeconfig);
    for (const v of doc.verdicts) {
      expect(v.verdict).toBe('both-broken');
      expect(v.diagnosis.map((d: Json) => d.code)).toEqual(['tty-resize-lost', 'tty-resize-lost']);
    }
    const d = doc.verdicts[0].diagnosis[0];
    expect(d.summary).toMatch(/terminal session echoed, but its process reads 0×0 where 80×24 was sent with the upgrade/);
    expect(d.check).toMatch(/^kubectl exec -it connects and runs commands here, but its terminal keeps the wrong size/);
    const k = await kubectlTerminal('1.36', dropping.kubeconfig, dropping, ['exec', '-it', 'probe-target', '--', 'sh', '-c', TTY_SIZE_SCRIPT]);
    expect(k.shown).toContain('one\r\n0 0\r\n');
    expect(k.shown).toContain('two\r\n0 0\r\n');
  }, 60_000);

  it('without a terminal, the same runtime gives no finding', async () => {
    const r = await cli(['run', '--kubeconfig', dropping.kubeconfig, '--ops', 'exec,attach', '--hold', '0s', '--no-preflight', '-o', 'json']);
    const doc = JSON.parse(r.stdout) as Json;
    expect(doc.verdicts.map((v: Json) => v.verdict)).toEqual(['clean', 'clean']);
  }, 60_000);
});

describe('a target deployed before the manifest had its tty container', () => {
  it("terminal attach rows are not measured, saying to re-apply the manifest; exec terminal rows still are; the API server's 400 as real kubectl 1.36 sees it", async () => {
    const old = await startEmulatorWithKubeconfig({ ttyContainer: false });
    try {
      const r = await cli(['run', '--kubeconfig', old.kubeconfig, '--ops', 'exec,attach', '--hold', '0s', '--tty', '--no-preflight', '-o', 'json']);
      const doc = JSON.parse(r.stdout) as Json;
      expect(doc.verdicts.map((v: Json) => `${v.operation} ${v.verdict}`)).toEqual(['exec clean', 'attach not-measured']);
      const why = doc.verdicts[1].diagnosis[0];
      expect(why.code).toBe('target-missing');
      expect(why.summary).toMatch(/lacks the container this row needs: .*container tty is not valid for pod probe-target/);
      expect(why.check).toMatch(/re-apply `kube-stream-probe manifest` \(it adds the container\)/);
      expect(r.code).toBe(3);
      const k = await runKubectl('1.36', ['--kubeconfig', old.kubeconfig, 'attach', '-i', 'probe-target', '-c', 'tty'], { stdin: 'x\n', timeoutMs: 20_000 });
      expect([k.code === 0, k.stderr]).toEqual([false, expect.stringMatching(/container tty is not valid for pod probe-target/)]);
    } finally {
      await old.stop();
    }
  }, 60_000);
});

describe('a WebSocket-inspecting proxy that drops the resize channel (mitmproxy with an addon)', () => {
  it('terminal rows are websocket-broken with tty-resize-lost on WebSocket only; real kubectl 1.33 exec -it reads 0×0 through it, 1.29 (SPDY) its size', async () => {
    // A token in the kubeconfig: with none, kubectl on a terminal prompts for a username.
    const e = await startEmulatorWithKubeconfig({ tls: true, token: 'tty-hop-token-123456' });
    const hop = await requireHop(() => startMitmproxy(e.emulator.tls!.caPem, { dropResize: true }));
    try {
      const d = YAML.parse(emulatorKubeconfig(e.emulator, { proxyUrl: `http://127.0.0.1:${hop!.port}` }));
      d.clusters[0].cluster['certificate-authority-data'] = Buffer.from((hop as RealHop & { caPem(): string }).caPem()).toString('base64');
      const kubeconfig = join(hop!.dir, 'kubeconfig');
      writeFileSync(kubeconfig, YAML.stringify(d));
      const doc = JSON.parse(
        (await cli(['run', '--kubeconfig', kubeconfig, '--ops', 'exec,attach', '--hold', '0s', '--tty', '--no-preflight', '-o', 'json'])).stdout,
      ) as Json;
      for (const v of doc.verdicts) {
        expect([v.operation, v.verdict]).toEqual([v.operation, 'websocket-broken']);
        expect(v.diagnosis.map((x: Json) => x.code)).toContain('tty-resize-lost');
        expect(v.kubectl.find((k: Json) => k.client === '1.31-1.37').outcome).toBe('breaks');
      }
      const ws = doc.results.find((r: Json) => r.operation === 'exec' && r.transport === 'websocket');
      expect(ws.error).toBe("the terminal's size was sent as 80×24 with the upgrade, but the process reads 0×0");
      const shown = async (version: string) =>
        (await kubectlTerminal(version, kubeconfig, e, ['exec', '-it', 'probe-target', '--', 'sh', '-c', TTY_SIZE_SCRIPT])).shown;
      expect(await shown('1.33')).toContain('one\r\n0 0\r\n');
      expect(await shown('1.29')).toContain(`one\r\n${WINDOW.rows} ${WINDOW.cols}\r\n`);
    } finally {
      await hop?.stop();
      await e.stop();
    }
  }, 90_000);
});
