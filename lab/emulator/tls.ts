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

interface Openssl {
  /** A new P-256 key `<name>.key` with `<name>.csr` for `subject`, or with `selfSigned` a certificate `<name>.crt` (extra args: -addext…). */
  readonly newKey: (name: string, subject: string, options?: { readonly selfSigned?: boolean; readonly extra?: readonly string[] }) => void;
  /** `<name>.crt` from `<name>.csr`, signed by ca.crt/ca.key, with the extensions `ext` (openssl x509 -extfile syntax). */
  readonly signByCa: (name: string, ext: string) => void;
  /** The PEM text of a file made here. */
  readonly read: (file: string) => string;
}

function inTempDir<T>(work: (openssl: Openssl, dir: string) => T): T {
  const dir = mkdtempSync(join(tmpdir(), 'ksp-tls-'));
  const run = (...args: string[]) => void execFileSync('openssl', args, { cwd: dir, stdio: ['ignore', 'ignore', 'pipe'] });
  const openssl: Openssl = {
    newKey: (name, subject, { selfSigned = false, extra = [] } = {}) =>
      run(
        'req',
        ...(selfSigned ? ['-x509', '-days', '3650'] : []),
        ...['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'],
        ...['-keyout', `${name}.key`, '-out', selfSigned ? `${name}.crt` : `${name}.csr`, '-subj', subject, ...extra],
      ),
    signByCa: (name, ext) => {
      writeFileSync(join(dir, `${name}.cnf`), ext);
      run(
        'x509',
        '-req',
        '-in',
        `${name}.csr`,
        '-CA',
        'ca.crt',
        '-CAkey',
        'ca.key',
        '-CAcreateserial',
        '-out',
        `${name}.crt`,
        '-days',
        '3650',
        '-extfile',
        `${name}.cnf`,
      );
    },
    read: (file) => readFileSync(join(dir, file), 'utf8'),
  };
  try {
    return work(openssl, dir);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const serverExtensions = (sans: readonly string[]) => `${sans.length ? `subjectAltName=${sans.join(',')}\n` : ''}extendedKeyUsage=serverAuth\n`;

/** A server certificate signed by the lab CA for exactly `sans` (openssl subjectAltName syntax: IP:…, DNS:…). */
export function issueServerCertificate(sans: readonly string[], commonName = 'kube-apiserver'): { certPem: string; keyPem: string } {
  const ca = emulatorTls();
  return inTempDir((openssl, dir) => {
    writeFileSync(join(dir, 'ca.crt'), ca.caPem);
    writeFileSync(join(dir, 'ca.key'), ca.caKeyPem);
    openssl.newKey('server', `/CN=${commonName}`);
    openssl.signByCa('server', serverExtensions(sans));
    return { certPem: openssl.read('server.crt'), keyPem: openssl.read('server.key') };
  });
}

/** A self-signed certificate for `sans`, from no CA the lab trusts: a corporate proxy's, as the kubeconfig sees it. */
export function selfSignedCertificate(sans: readonly string[], commonName: string): { certPem: string; keyPem: string } {
  return inTempDir((openssl) => {
    openssl.newKey('self', `/CN=${commonName}`, { selfSigned: true, extra: ['-addext', `subjectAltName=${sans.join(',')}`] });
    return { certPem: openssl.read('self.crt'), keyPem: openssl.read('self.key') };
  });
}

export function emulatorTls(): TlsMaterial & { readonly caKeyPem: string } {
  cached ??= inTempDir((openssl) => {
    openssl.newKey('ca', '/CN=kube-stream-probe lab CA', { selfSigned: true });
    openssl.newKey('server', '/CN=kube-apiserver');
    openssl.signByCa('server', serverExtensions(DEFAULT_SERVER_SANS));
    openssl.newKey('client', '/O=kube-stream-probe/CN=lab-user');
    openssl.signByCa('client', 'extendedKeyUsage=clientAuth\n');
    return {
      clientCertPem: openssl.read('client.crt'),
      clientKeyPem: openssl.read('client.key'),
      caPem: openssl.read('ca.crt'),
      caKeyPem: openssl.read('ca.key'),
      certPem: openssl.read('server.crt'),
      keyPem: openssl.read('server.key'),
    };
  });
  return cached;
}
