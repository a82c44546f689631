/**
 * A plain http:// API server behind real forward proxies (proxy-url): the
 * probe and real kubectl take the same route. Through an HTTP proxy Go sends
 * plain API requests to an http:// server as absolute-URI requests and
 * tunnels only the upgrades with CONNECT; through SOCKS5 everything is a
 * tunnel. Regression: the CONNECT reader left the socket paused, every
 * upgrade to an http:// server timed out, and the diagnosis blamed a
 * buffering hop.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { emulatorKubeconfig } from '../../lab/emulator/kubeconfig.js';
import { Emulator } from '../../lab/emulator/server.js';
import { runKubectl } from '../../lab/kubectl.js';
import type { RealHop } from '../../lab/real-hops/process-hop.js';
import { startDante, startSquid, startTinyproxy } from '../../lab/real-hops/proxies.js';
import { cli } from '../helpers/cli.js';
import { requireHop } from '../helpers/hops.js';

let emulator: Emulator;
let dir: string;
const hops = new Map<string, RealHop | undefined>();

beforeAll(async () => {
  emulator = await Emulator.start({});
  dir = mkdtempSync(join(tmpdir(), 'ksp-fwd-'));
  const [tiny, squid, dante] = await Promise.all([requireHop(() => startTinyproxy()), requireHop(() => startSquid()), requireHop(() => startDante())]);
  hops.set('tinyproxy', tiny).set('squid', squid).set('dante', dante);
});
afterAll(async () => {
  await Promise.all([...hops.values()].map((h) => h?.stop()));
  await emulator.stop();
  rmSync(dir, { recursive: true, force: true });
});

function kubeconfigThrough(name: string): string {
  const scheme = name === 'dante' ? 'socks5' : 'http';
  const path = join(dir, `kubeconfig-${name}`);
  writeFileSync(path, emulatorKubeconfig(emulator, { proxyUrl: `${scheme}://127.0.0.1:${hops.get(name)!.port}` }));
  return path;
}

describe('an http:// API server through a forward proxy', () => {
  for (const name of ['tinyproxy', 'squid', 'dante']) {
    it(`${name}: exec and port-forward over both transports are clean, and kubectl agrees`, async ({ skip }) => {
      if (!hops.get(name)) skip(`${name} missing`);
      const path = kubeconfigThrough(name);
      const r = await cli(['run', '--kubeconfig', path, '-o', 'json', '--upgrade-timeout', '5000']);
      const report = JSON.parse(r.stdout);
      type Res = { operation: string; transport: string; keepalive: string; upgrade: { errorCode: string | null } };
      // kubectl's sessions on both transports, and an SDK client's WebSocket session per operation (run's default).
      expect(report.results.map((x: Res) => `${x.operation}/${x.transport}/${x.keepalive}:${x.upgrade.errorCode}`).sort()).toEqual(
        [
          'exec/spdy/kubectl',
          'exec/websocket/kubectl',
          'exec/websocket/sdk',
          'portforward/spdy/kubectl',
          'portforward/websocket/kubectl',
          'portforward/websocket/sdk',
        ].map((k) => `${k}:null`),
      );
      expect(report.verdicts.map((v: { verdict: string }) => v.verdict)).toEqual(['clean', 'clean']);
      expect(report.server.version).toBe('v1.33.1'); // the plain GET went through too
      expect(report.results.every((x: { upgrade: { phases: { proxyMs?: number } } }) => x.upgrade.phases.proxyMs !== undefined)).toBe(true);
      expect(r.code).toBe(0);
      const k = await runKubectl('1.33', ['--kubeconfig', path, 'exec', '-i', 'probe-target', '--', 'cat'], { stdin: 'through the proxy\n' });
      expect(k.stdout).toBe('through the proxy\n');
      expect(k.code).toBe(0);
    });
  }

  it('squid sees what it sees from kubectl: plain requests as absolute URIs, upgrades as CONNECT', async ({ skip }) => {
    const squid = hops.get('squid') ?? skip('squid missing');
    const path = kubeconfigThrough('squid');
    const methods = () =>
      squid
        .log()
        .split('\n')
        .map((l) => /\s(GET|POST|CONNECT) (\S+)/.exec(l))
        .filter((m): m is RegExpExecArray => m !== null)
        .map((m) => `${m[1]} ${m[2]!.startsWith('http://') ? 'absolute-uri' : 'authority'}`);
    const before = methods().length;
    await runKubectl('1.33', ['--kubeconfig', path, 'exec', 'probe-target', '--', 'echo', 'x']);
    const kubectl = new Set(methods().slice(before));
    const mid = methods().length;
    await cli(['run', '--kubeconfig', path, '--ops', 'exec', '-o', 'json']);
    const ours = new Set(methods().slice(mid));
    expect(kubectl).toEqual(new Set(['GET absolute-uri', 'CONNECT authority']));
    // Ours adds the RBAC preflight (POST selfsubjectaccessreviews), also as an absolute URI.
    expect(ours).toEqual(new Set(['GET absolute-uri', 'POST absolute-uri', 'CONNECT authority']));
  });
});
