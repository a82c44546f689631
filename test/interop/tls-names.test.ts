/**
 * Certificates checked exactly as kubectl (Go's crypto/tls) checks them, with
 * real certificates and real kubectl 1.33 as the judge: an IP-addressed
 * server is verified against its IP SANs (no SNI), a name against its DNS
 * SANs, tls-server-name replaces the dialled host, the Common Name never
 * counts. Regressions for the probe accepting DNS:localhost on 127.0.0.1 and
 * refusing an IP-only certificate.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { emulatorKubeconfig } from '../../lab/emulator/kubeconfig.js';
import { Emulator } from '../../lab/emulator/server.js';
import { runKubectl } from '../../lab/kubectl.js';
import { cli } from '../helpers/cli.js';

const TOKEN = 'tls-names-token-123456';
let dir: string;
const running: Emulator[] = [];

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'ksp-tls-names-'));
});
afterAll(async () => {
  await Promise.all(running.map((e) => e.stop()));
  rmSync(dir, { recursive: true, force: true });
});

async function serving(sans: readonly string[]): Promise<Emulator> {
  const e = await Emulator.start({ tls: true, token: TOKEN, serverCertificateSans: sans });
  running.push(e);
  return e;
}

let n = 0;
function kubeconfig(e: Emulator, opts: { tlsServerName?: string; caPem?: string | null } = {}): string {
  const path = join(dir, `kubeconfig-${++n}`);
  writeFileSync(path, emulatorKubeconfig(e, opts), { mode: 0o600 });
  return path;
}

const probe = async (path: string) => {
  const r = await cli(['run', '--kubeconfig', path, '--ops', 'exec', '--no-preflight', '-o', 'json', '--upgrade-timeout', '3000']);
  return { code: r.code, report: JSON.parse(r.stdout) };
};
const kubectlExec = (path: string) => runKubectl('1.33', ['--kubeconfig', path, 'exec', 'probe-target', '--', 'echo', 'hello']);

describe('TLS names, as kubectl checks them', () => {
  it('an IP-SAN-only certificate (kubeadm style) on https://127.0.0.1 is accepted, by kubectl and by the probe', async () => {
    const e = await serving(['IP:127.0.0.1']);
    const path = kubeconfig(e);
    const k = await kubectlExec(path);
    expect(k.code, k.stderr).toBe(0);
    const { code, report } = await probe(path);
    expect(report.verdicts.map((v: { verdict: string }) => v.verdict)).toEqual(['clean']);
    expect(code).toBe(0);
  });

  it('a certificate valid only for DNS:localhost is refused on https://127.0.0.1, by kubectl and by the probe, saying what was checked and what it holds', async () => {
    const e = await serving(['DNS:localhost']);
    const path = kubeconfig(e);
    const k = await kubectlExec(path);
    expect(k.code).not.toBe(0);
    expect(k.stderr).toMatch(/x509|certificate/i);
    const { code, report } = await probe(path);
    expect(code).toBe(1);
    for (const r of report.results) {
      expect(r.upgrade.errorCode).toBe('DIAL_TLS');
      expect(r.upgrade.tls).toMatchObject({ checkedName: '127.0.0.1', untrusted: false, peer: 'server' });
      expect(r.upgrade.tls.certificateNames).toContain('DNS:localhost');
    }
    const d = report.verdicts[0].diagnosis[0];
    expect(d.code).toBe('tls-certificate');
    expect(d.summary).toContain('checked against 127.0.0.1');
    expect(d.summary).toContain('DNS:localhost');
  });

  it('tls-server-name: the name checked (and sent as SNI) instead of the dialled IP; a wrong one is refused by both', async () => {
    const e = await serving(['DNS:api.lab.internal']);
    const good = kubeconfig(e, { tlsServerName: 'api.lab.internal' });
    expect((await kubectlExec(good)).code).toBe(0);
    expect((await probe(good)).code).toBe(0);
    const without = kubeconfig(e);
    expect((await kubectlExec(without)).code).not.toBe(0);
    const refused = await probe(without);
    expect(refused.report.results[0].upgrade.tls.checkedName).toBe('127.0.0.1');
  });

  it('a certificate whose name is only in its Common Name is refused (Go ignores the CN; Node would not)', async () => {
    const e = await serving([]);
    const path = kubeconfig(e, { tlsServerName: 'kube-apiserver' });
    expect((await kubectlExec(path)).code).not.toBe(0);
    const { report } = await probe(path);
    expect(report.results[0].upgrade.errorCode).toBe('DIAL_TLS');
    expect(report.results[0].upgrade.error).toMatch(/no DNS subjectAltName/);
  });

  it('a certificate from a CA the kubeconfig does not trust: tls-certificate (not "unreachable"), naming the issuer and a TLS-intercepting proxy as one cause', async () => {
    const e = await serving(['IP:127.0.0.1']);
    const path = kubeconfig(e, { caPem: null });
    expect((await kubectlExec(path)).code).not.toBe(0);
    const { report } = await probe(path);
    expect(report.results[0].upgrade.tls).toMatchObject({ untrusted: true, issuer: 'CN=kube-stream-probe lab CA' });
    const d = report.verdicts[0].diagnosis[0];
    expect(d.code).toBe('tls-certificate');
    expect(d.check).toMatch(/TLS-intercepting proxy/);
  });
});
