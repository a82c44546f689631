/**
 * TLS material for the emulator, made with the openssl CLI (Debian's openssl
 * package): one lab CA per process, a server certificate for 127.0.0.1 / ::1 /
 * localhost / kubernetes.default.svc, a client certificate, and on request a
 * server certificate with exactly the subjectAltNames a test needs (an
 * IP-only certificate like kubeadm's, a DNS:localhost-only one…).
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface TlsMaterial {
  readonly caPem: string;
  readonly certPem: string;
  readonly keyPem: string;
  /** A client certificate signed by the same CA (CN=lab-user), for client-certificate auth. */
  readonly clientCertPem: string;
  readonly clientKeyPem: string;
}

/** The lab's default server names: what kubeadm puts on an API server certificate, on loopback. */
export const DEFAULT_SERVER_SANS = ['IP:127.0.0.1', 'IP:::1', 'DNS:localhost', 'DNS:kubernetes.default.svc'] as const;

let cached: (TlsMaterial & { readonly caKeyPem: string }) | undefined;

function inTempDir<T>(work: (dir: string, run: (...args: string[]) => void) => T): T {
  const dir = mkdtempSync(join(tmpdir(), 'ksp-tls-'));
  try {
    return work(dir, (...args) => void execFileSync('openssl', args, { cwd: dir, stdio: ['ignore', 'ignore', 'pipe'] }));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** A server certificate signed by the lab CA for exactly `sans` (openssl subjectAltName syntax: IP:…, DNS:…). */
export function issueServerCertificate(sans: readonly string[], commonName = 'kube-apiserver'): { certPem: string; keyPem: string } {
  const ca = emulatorTls();
  return inTempDir((dir, run) => {
    writeFileSync(join(dir, 'ca.crt'), ca.caPem);
    writeFileSync(join(dir, 'ca.key'), ca.caKeyPem);
    run(
      'req',
      '-newkey',
      'ec',
      '-pkeyopt',
      'ec_paramgen_curve:prime256v1',
      '-nodes',
      '-keyout',
      'server.key',
      '-out',
      'server.csr',
      '-subj',
      `/CN=${commonName}`,
    );
    writeFileSync(join(dir, 'ext.cnf'), `${sans.length ? `subjectAltName=${sans.join(',')}\n` : ''}extendedKeyUsage=serverAuth\n`);
    run(
      'x509',
      '-req',
      '-in',
      'server.csr',
      '-CA',
      'ca.crt',
      '-CAkey',
      'ca.key',
      '-CAcreateserial',
      '-out',
      'server.crt',
      '-days',
      '3650',
      '-extfile',
      'ext.cnf',
    );
    return { certPem: readFileSync(join(dir, 'server.crt'), 'utf8'), keyPem: readFileSync(join(dir, 'server.key'), 'utf8') };
  });
}

/** A self-signed certificate for `sans`, from no CA the lab trusts: a corporate proxy's, as the kubeconfig sees it. */
export function selfSignedCertificate(sans: readonly string[], commonName: string): { certPem: string; keyPem: string } {
  return inTempDir((dir, run) => {
    run(
      'req',
      '-x509',
      '-newkey',
      'ec',
      '-pkeyopt',
      'ec_paramgen_curve:prime256v1',
      '-nodes',
      '-keyout',
      'self.key',
      '-out',
      'self.crt',
      '-days',
      '3650',
      '-subj',
      `/CN=${commonName}`,
      '-addext',
      `subjectAltName=${sans.join(',')}`,
    );
    return { certPem: readFileSync(join(dir, 'self.crt'), 'utf8'), keyPem: readFileSync(join(dir, 'self.key'), 'utf8') };
  });
}

export function emulatorTls(): TlsMaterial & { readonly caKeyPem: string } {
  if (cached) return cached;
  cached = inTempDir((dir, run) => {
    run(
      'req',
      '-x509',
      '-newkey',
      'ec',
      '-pkeyopt',
      'ec_paramgen_curve:prime256v1',
      '-nodes',
      '-keyout',
      'ca.key',
      '-out',
      'ca.crt',
      '-days',
      '3650',
      '-subj',
      '/CN=kube-stream-probe lab CA',
    );
    run(
      'req',
      '-newkey',
      'ec',
      '-pkeyopt',
      'ec_paramgen_curve:prime256v1',
      '-nodes',
      '-keyout',
      'server.key',
      '-out',
      'server.csr',
      '-subj',
      '/CN=kube-apiserver',
    );
    writeFileSync(join(dir, 'ext.cnf'), `subjectAltName=${DEFAULT_SERVER_SANS.join(',')}\nextendedKeyUsage=serverAuth\n`);
    run(
      'x509',
      '-req',
      '-in',
      'server.csr',
      '-CA',
      'ca.crt',
      '-CAkey',
      'ca.key',
      '-CAcreateserial',
      '-out',
      'server.crt',
      '-days',
      '3650',
      '-extfile',
      'ext.cnf',
    );
    run(
      'req',
      '-newkey',
      'ec',
      '-pkeyopt',
      'ec_paramgen_curve:prime256v1',
      '-nodes',
      '-keyout',
      'client.key',
      '-out',
      'client.csr',
      '-subj',
      '/O=kube-stream-probe/CN=lab-user',
    );
    writeFileSync(join(dir, 'client.cnf'), 'extendedKeyUsage=clientAuth\n');
    run(
      'x509',
      '-req',
      '-in',
      'client.csr',
      '-CA',
      'ca.crt',
      '-CAkey',
      'ca.key',
      '-CAcreateserial',
      '-out',
      'client.crt',
      '-days',
      '3650',
      '-extfile',
      'client.cnf',
    );
    return {
      clientCertPem: readFileSync(join(dir, 'client.crt'), 'utf8'),
      clientKeyPem: readFileSync(join(dir, 'client.key'), 'utf8'),
      caPem: readFileSync(join(dir, 'ca.crt'), 'utf8'),
      caKeyPem: readFileSync(join(dir, 'ca.key'), 'utf8'),
      certPem: readFileSync(join(dir, 'server.crt'), 'utf8'),
      keyPem: readFileSync(join(dir, 'server.key'), 'utf8'),
    };
  });
  return cached;
}
