/**
 * `run -v` (--wire-log): the requests and replies as kubectl -v=7/-v=8 shows
 * them, and SPDY control frames, on stderr — and no secret in it: the bearer
 * token, the client key, and a proxy password (through a real tinyproxy that
 * requires Basic auth, so Proxy-Authorization is really sent).
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import YAML from 'yaml';
import { emulatorKubeconfig, startEmulatorWithKubeconfig, type EmulatorWithKubeconfig } from '../../lab/emulator/kubeconfig.js';
import { Emulator } from '../../lab/emulator/server.js';
import type { RealHop } from '../../lab/real-hops/process-hop.js';
import { startTinyproxy } from '../../lab/real-hops/proxies.js';
import { cli } from '../helpers/cli.js';
import { requireHop } from '../helpers/hops.js';

const TOKEN = 'kspWIREtoken-1a2b3c4d5e6f7a8b';
const PROXY_PASSWORD = 'kspProxyPass-77aa88bb';
let dir: string;
let lab: EmulatorWithKubeconfig;
let certLab: EmulatorWithKubeconfig;
let plain: Emulator;
let tinyproxy: RealHop | undefined;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'ksp-wire-log-'));
  lab = await startEmulatorWithKubeconfig({ tls: true, token: TOKEN });
  certLab = await startEmulatorWithKubeconfig({ tls: true, clientCertAuth: true });
  plain = await Emulator.start({});
  tinyproxy = await requireHop(() => startTinyproxy({ basicAuth: { user: 'probe', password: PROXY_PASSWORD } }));
});
afterAll(async () => {
  await tinyproxy?.stop();
  await Promise.all([lab?.stop(), certLab?.stop(), plain?.stop()]);
  rmSync(dir, { recursive: true, force: true });
});

const lines = (stderr: string) => stderr.split('\n').filter((l) => /^\d\d:\d\d:\d\d\.\d{3} #\d+ /.test(l));

describe('run -v', () => {
  it('shows each upgrade request and reply with headers, the API requests, SPDY stream headers and pings; the token is masked', async () => {
    const r = await cli(['run', '--kubeconfig', lab.kubeconfig, '-v', '--hold', '6s', '--ops', 'exec', '-o', 'json']);
    expect(r.code, r.stderr).toBe(0);
    const log = lines(r.stderr);
    const text = log.join('\n');
    // The WebSocket exec upgrade, as kubectl sends it, and its 101.
    expect(text).toMatch(
      /#\d+ WebSocket exec: > GET https:\/\/127\.0\.0\.1:\d+\/api\/v1\/namespaces\/default\/pods\/probe-target\/exec\?command=cat&container=main&stderr=true&stdin=true&stdout=true/,
    );
    expect(text).toMatch(/#\d+     > Sec-WebSocket-Protocol: v5\.channel\.k8s\.io/i);
    expect(text).toMatch(/#\d+ WebSocket exec: < HTTP\/1\.1 101 Switching Protocols/);
    // SPDY: the POST upgrade, X-Stream-Protocol-Version offered, the 101, the streams kubectl opens and the pings.
    expect(text).toMatch(/#\d+ SPDY exec: > POST https:\/\/127\.0\.0\.1:\d+\/api\/v1\/namespaces\/default\/pods\/probe-target\/exec/);
    expect(text).toMatch(/> X-Stream-Protocol-Version: v5\.channel\.k8s\.io/);
    expect(text).toMatch(/SPDY exec: > SYN_STREAM 1 streamtype=error/);
    expect(text).toMatch(/SPDY exec: < SYN_REPLY 1/);
    expect(text).toMatch(/SPDY exec: > SYN_STREAM 3 streamtype=stdin/);
    expect(text).toMatch(/SPDY exec: > PING 1/);
    expect(text).toMatch(/SPDY exec: < PING 1/);
    // Plain API requests too (the target lookup, /version, the access review).
    expect(text).toMatch(/API request: > GET https:\/\/127\.0\.0\.1:\d+\/version/);
    expect(text).toMatch(/API request: < HTTP\/1\.1 200 OK/);
    // Credentials: masked by header name, and nowhere in any form.
    expect(text).toMatch(/> Authorization: Bearer <masked>/);
    expect(r.stderr).not.toContain(TOKEN);
    expect(r.stdout).not.toContain(TOKEN);
    // The JSON stays on stdout, the log on stderr.
    expect(JSON.parse(r.stdout).verdicts.map((v: { verdict: string }) => v.verdict)).toEqual(['clean']);
  });

  it('with a client certificate: the key never appears', async () => {
    const key = certLab.emulator.tls!.clientKeyPem;
    const doc = YAML.parse(readFileSync(certLab.kubeconfig, 'utf8'));
    doc.users[0].user = {
      'client-certificate-data': Buffer.from(certLab.emulator.tls!.clientCertPem).toString('base64'),
      'client-key-data': Buffer.from(key).toString('base64'),
    };
    const path = join(dir, 'kubeconfig-cert');
    writeFileSync(path, YAML.stringify(doc));
    const r = await cli(['run', '--kubeconfig', path, '-v', '--hold', '0s', '--ops', 'exec']);
    expect(r.code, r.stderr).toBe(0);
    expect(lines(r.stderr).length).toBeGreaterThan(10);
    const body = key.split('\n').filter((l) => l && !l.startsWith('-----'));
    for (const chunk of body) expect(r.stderr).not.toContain(chunk);
  });

  it('through a proxy that requires Basic auth (real tinyproxy): Proxy-Authorization masked, the password nowhere', async ({ skip }) => {
    if (!tinyproxy) return skip('tinyproxy missing');
    const path = join(dir, 'kubeconfig-proxy');
    writeFileSync(path, emulatorKubeconfig(plain, { proxyUrl: `http://probe:${PROXY_PASSWORD}@127.0.0.1:${tinyproxy.port}` }));
    const r = await cli(['run', '--kubeconfig', path, '-v', '--hold', '0s', '-o', 'json']);
    expect(r.code, r.stderr).toBe(0);
    const text = lines(r.stderr).join('\n');
    // An http:// server through an HTTP proxy: plain API requests go as absolute URIs with the proxy's credentials.
    expect(text).toMatch(/API request: > GET http:\/\/127\.0\.0\.1:\d+\/version/);
    expect(text).toMatch(/> proxy-authorization: Basic <masked>/i);
    for (const secret of [PROXY_PASSWORD, Buffer.from(`probe:${PROXY_PASSWORD}`).toString('base64')]) {
      expect(r.stderr).not.toContain(secret);
      expect(r.stdout).not.toContain(secret);
    }
  });
});
