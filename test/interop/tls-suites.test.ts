/**
 * The TLS 1.3 cipher suite, chosen as Go chooses it (src/net/tls-ciphers.ts), judged by Go programs: real kubectl
 * 1.33 as the client, Debian's caddy (Go's crypto/tls, whose TLS 1.3 suites are not configurable) as the server.
 * Our client offers what kubectl offers, so a server that takes the client's order (OpenSSL's default, as nginx
 * has it unless ssl_prefer_server_ciphers is on) gives both the same suite; and the emulator picks the suite a Go
 * API server picks, where a Node server left to itself picks by Node's order.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import tls from 'node:tls';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Emulator } from '../../lab/emulator/server.js';
import { emulatorTls } from '../../lab/emulator/tls.js';
import { runKubectl } from '../../lab/kubectl.js';
import { startRealHop, type RealHop } from '../../lab/real-hops/process-hop.js';
import { tlsWrap } from '../../src/net/dial.js';

const material = emulatorTls();

/** Our client's handshake (the probe's dialer, as an upgrade uses it): the suite it got. */
async function oursGets(port: number): Promise<string> {
  const socket = net.connect(port, '127.0.0.1');
  await new Promise((resolve, reject) => socket.once('connect', resolve).once('error', reject));
  const s = await tlsWrap(socket, '127.0.0.1', { ca: [material.caPem] });
  const suite = s.getCipher().standardName;
  s.destroy();
  return suite;
}

/** A client with Node's own offer (TLS_AES_256_GCM_SHA384 first): the suite it got. */
function nodeDefaultGets(port: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const s = tls.connect({ host: '127.0.0.1', port, ca: material.caPem, ALPNProtocols: ['http/1.1'] }, () => {
      resolve(s.getCipher().standardName);
      s.destroy();
    });
    s.once('error', reject);
  });
}

describe("our client's TLS 1.3 offer is kubectl's", () => {
  // A server taking the client's order (OpenSSL's default; a Node server must be told): each client gets what it
  // offers first.
  const seen: string[] = [];
  let server: tls.Server;
  let port: number;
  beforeAll(async () => {
    server = tls.createServer({ cert: material.certPem, key: material.keyPem, ALPNProtocols: ['http/1.1'], honorCipherOrder: false }, (c) => {
      seen.push(c.getCipher().standardName);
      c.on('error', () => {});
      c.once('data', () => c.end('HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 2\r\nconnection: close\r\n\r\n{}'));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as net.AddressInfo).port;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  it("a server that takes the client's order gives ours the suite it gives kubectl 1.33 (AES-128-GCM), and Node's own offer AES-256", async () => {
    seen.length = 0;
    const k = await runKubectl('1.33', ['--server', `https://127.0.0.1:${port}`, '--insecure-skip-tls-verify', '--token', 'x', 'get', '--raw', '/']);
    expect(k.code, k.stderr).toBe(0);
    expect(seen.length).toBeGreaterThan(0);
    const kubectlGot = seen[0]!;
    expect(kubectlGot).toBe('TLS_AES_128_GCM_SHA256');
    expect(await oursGets(port)).toBe(kubectlGot);
    // The server does follow the client: Node's own offer gets Node's first suite, so the equality above is ours.
    expect(await nodeDefaultGets(port)).toBe('TLS_AES_256_GCM_SHA384');
  });
});

describe('the emulator picks the TLS 1.3 suite a Go server picks', () => {
  let caddy: RealHop;
  let emulator: Emulator;
  // caddy saves its running configuration under $XDG_CONFIG_HOME/caddy: ours, not the user's.
  const home = mkdtempSync(join(tmpdir(), 'ksp-caddy-home-'));
  beforeAll(async () => {
    caddy = await startRealHop({
      name: 'caddy-tls',
      binary: 'caddy',
      debianPackage: 'caddy',
      files: (dir, [p]) => ({
        'cert.pem': material.certPem,
        'key.pem': material.keyPem,
        Caddyfile: `{\n\tadmin off\n\tauto_https off\n\tstorage file_system ${join(dir, 'data')}\n}\nhttps://127.0.0.1:${p} {\n\ttls cert.pem key.pem\n\trespond "ok"\n}\n`,
      }),
      args: (dir) => ['run', '--config', join(dir, 'Caddyfile'), '--adapter', 'caddyfile'],
      env: { HOME: home, XDG_CONFIG_HOME: join(home, 'config'), XDG_DATA_HOME: join(home, 'data') },
    });
    emulator = await Emulator.start({ tls: true });
  });
  afterAll(async () => {
    await caddy?.stop();
    await emulator?.stop();
    rmSync(home, { recursive: true, force: true });
  });

  it('for a client offering AES-256-GCM first (Node, Python) and for ours: AES-128-GCM from caddy and from the emulator', async () => {
    const emulatorPort = Number(emulator.url.port);
    const goPicks = await nodeDefaultGets(caddy.port);
    expect(goPicks).toBe('TLS_AES_128_GCM_SHA256');
    expect(await nodeDefaultGets(emulatorPort)).toBe(goPicks);
    expect(await oursGets(caddy.port)).toBe(goPicks);
    expect(await oursGets(emulatorPort)).toBe(goPicks);
  });
});
