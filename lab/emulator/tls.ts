/**
 * Self-signed TLS material for the emulator: a CA and a server certificate
 * for 127.0.0.1 / ::1 / localhost, made with the openssl CLI (Debian's
 * openssl package) once per process.
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

let cached: TlsMaterial | undefined;

export function emulatorTls(): TlsMaterial {
  if (cached) return cached;
  const dir = mkdtempSync(join(tmpdir(), 'ksp-tls-'));
  try {
    const run = (...args: string[]) => execFileSync('openssl', args, { cwd: dir, stdio: ['ignore', 'ignore', 'pipe'] });
    run('req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-keyout', 'ca.key', '-out', 'ca.crt', '-days', '3650', '-subj', '/CN=kube-stream-probe lab CA');
    run('req', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-keyout', 'server.key', '-out', 'server.csr', '-subj', '/CN=kube-apiserver');
    writeFileSync(join(dir, 'ext.cnf'), 'subjectAltName=IP:127.0.0.1,IP:::1,DNS:localhost,DNS:kubernetes.default.svc\nextendedKeyUsage=serverAuth\n');
    run('x509', '-req', '-in', 'server.csr', '-CA', 'ca.crt', '-CAkey', 'ca.key', '-CAcreateserial', '-out', 'server.crt', '-days', '3650', '-extfile', 'ext.cnf');
    run('req', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-keyout', 'client.key', '-out', 'client.csr', '-subj', '/O=kube-stream-probe/CN=lab-user');
    writeFileSync(join(dir, 'client.cnf'), 'extendedKeyUsage=clientAuth\n');
    run('x509', '-req', '-in', 'client.csr', '-CA', 'ca.crt', '-CAkey', 'ca.key', '-CAcreateserial', '-out', 'client.crt', '-days', '3650', '-extfile', 'client.cnf');
    cached = {
      clientCertPem: readFileSync(join(dir, 'client.crt'), 'utf8'),
      clientKeyPem: readFileSync(join(dir, 'client.key'), 'utf8'),
      caPem: readFileSync(join(dir, 'ca.crt'), 'utf8'),
      certPem: readFileSync(join(dir, 'server.crt'), 'utf8'),
      keyPem: readFileSync(join(dir, 'server.key'), 'utf8'),
    };
    return cached;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
