/**
 * A kubeconfig's PEM (certificate authority, client certificate and key, and the pair an exec credential plugin
 * returns) refused when it is read, as real kubectl 1.33 refuses it before any connection, with kubectl's words
 * (src/kube/pem-check.ts). Before, OpenSSL refused it inside every dial: DIAL_FAILED "PEM routines::no start line",
 * a kubeconfig's fault reported as the path's. The server is never dialled: a closed loopback port.
 */
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import YAML from 'yaml';
import { afterAll, describe, expect, it } from 'vitest';
import { emulatorTls, selfSignedCertificate } from '../../lab/emulator/tls.js';
import { runKubectl } from '../../lab/kubectl.js';
import { connectionFor } from '../../src/kube/credentials.js';
import { parseKubeconfig } from '../../src/kube/kubeconfig.js';
import { SecretRedactor } from '../../src/kube/secrets.js';
import { errorCodeOf } from '../../src/errors.js';

const dir = mkdtempSync(join(tmpdir(), 'ksp-kubeconfig-pem-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const lab = emulatorTls();
const other = selfSignedCertificate(['DNS:other'], 'other');
const b64 = (text: string) => Buffer.from(text).toString('base64');
const GARBAGE = 'not a PEM block';

let n = 0;
function kubeconfig(cluster: Record<string, unknown>, user: Record<string, unknown>): string {
  const path = join(dir, `kubeconfig-${++n}`);
  const doc = {
    apiVersion: 'v1',
    kind: 'Config',
    'current-context': 'c',
    clusters: [{ name: 'c', cluster: { server: 'https://127.0.0.1:1', ...cluster } }],
    users: [{ name: 'u', user }],
    contexts: [{ name: 'c', context: { cluster: 'c', user: 'u' } }],
  };
  writeFileSync(path, YAML.stringify(doc), { mode: 0o600 });
  return path;
}

/** kubectl's refusal: its first error line. */
async function kubectlSays(path: string): Promise<string> {
  const k = await runKubectl('1.33', ['--kubeconfig', path, '--request-timeout', '3s', 'get', '--raw', '/version']);
  expect(k.code).not.toBe(0);
  return k.stderr
    .trim()
    .split('\n')[0]!
    .replace(/^error: /i, '');
}

/** Ours: the error thrown on reading the kubeconfig (and fetching its credentials), or undefined. */
async function oursSays(path: string): Promise<{ code: string | undefined; message: string } | undefined> {
  try {
    const { readFileSync } = await import('node:fs');
    const ctx = parseKubeconfig(readFileSync(path, 'utf8'), path);
    await connectionFor(ctx, { env: {}, redactor: new SecretRedactor() });
    return undefined;
  } catch (err) {
    return { code: errorCodeOf(err), message: (err as Error).message };
  }
}

describe("a kubeconfig's PEM, refused when read, as kubectl 1.33 refuses it", () => {
  const cases: Array<[string, Record<string, unknown>, Record<string, unknown>, string]> = [
    [
      'a certificate authority that is not PEM',
      { 'certificate-authority-data': b64(GARBAGE) },
      { token: 't' },
      'clusters[c].cluster.certificate-authority-data',
    ],
    [
      'a client certificate that is not PEM',
      { 'certificate-authority-data': b64(lab.caPem) },
      { 'client-certificate-data': b64(GARBAGE), 'client-key-data': b64(lab.clientKeyPem) },
      'users[u].user.client-certificate-data',
    ],
    [
      'a client key that is not PEM',
      { 'certificate-authority-data': b64(lab.caPem) },
      { 'client-certificate-data': b64(lab.clientCertPem), 'client-key-data': b64(GARBAGE) },
      'users[u].user.client-key-data',
    ],
    [
      "a client key that is another certificate's",
      { 'certificate-authority-data': b64(lab.caPem) },
      { 'client-certificate-data': b64(lab.clientCertPem), 'client-key-data': b64(other.keyPem) },
      'users[u].user.client-key-data',
    ],
  ];
  for (const [name, cluster, user, field] of cases) {
    it(`${name}: KUBECONFIG_INVALID naming ${field}, quoting what kubectl says`, async () => {
      const path = kubeconfig(cluster, user);
      const theirs = await kubectlSays(path);
      const ours = await oursSays(path);
      expect(ours?.code).toBe('KUBECONFIG_INVALID');
      expect(ours?.message).toContain(`${field} `);
      expect(ours?.message).toContain(`(kubectl: "${theirs}")`);
      // The key is a secret: never in the message.
      expect(ours?.message).not.toContain('PRIVATE KEY');
    });
  }

  it("a credential plugin's certificate and key that are not a pair: CREDENTIAL_PLUGIN, quoting what kubectl says", async () => {
    const plugin = join(dir, 'plugin.sh');
    const status = JSON.stringify({ clientCertificateData: lab.clientCertPem, clientKeyData: other.keyPem });
    writeFileSync(plugin, `#!/bin/sh\nprintf '%s' '{"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential","status":${status}}'\n`);
    chmodSync(plugin, 0o755);
    const path = kubeconfig(
      { 'certificate-authority-data': b64(lab.caPem) },
      { exec: { apiVersion: 'client.authentication.k8s.io/v1', command: plugin, interactiveMode: 'Never' } },
    );
    const theirs = await kubectlSays(path);
    const ours = await oursSays(path);
    expect(ours?.code).toBe('CREDENTIAL_PLUGIN');
    expect(ours?.message).toContain('status.clientKeyData');
    expect(theirs).toContain('tls: private key does not match public key');
    expect(ours?.message).toContain('(kubectl: "tls: private key does not match public key")');
    expect(ours?.message).not.toContain('PRIVATE KEY');
  });

  it("the lab's own certificate authority, client certificate and key: accepted by both (kubectl gets as far as dialling)", async () => {
    const path = kubeconfig(
      { 'certificate-authority-data': b64(lab.caPem) },
      { 'client-certificate-data': b64(lab.clientCertPem), 'client-key-data': b64(lab.clientKeyPem) },
    );
    expect(await kubectlSays(path)).toMatch(/connection refused|127\.0\.0\.1:1/);
    expect(await oursSays(path)).toBeUndefined();
  });
});
