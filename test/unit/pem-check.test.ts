/** The kubeconfig's PEM rules (src/kube/pem-check.ts) at their edges; kubectl judges the main cases in test/interop/kubeconfig-pem.test.ts. */
import { describe, expect, it } from 'vitest';
import { emulatorTls, selfSignedCertificate } from '../../lab/emulator/tls.js';
import { caBundleProblem, clientPairProblem } from '../../src/kube/pem-check.js';

const lab = emulatorTls();
const broken = '-----BEGIN CERTIFICATE-----\nbm90IGEgY2VydGlmaWNhdGU=\n-----END CERTIFICATE-----\n';

describe('caBundleProblem', () => {
  it('a bundle is good while one certificate in it parses, as Go skips the blocks that do not', () => {
    expect(caBundleProblem(`${broken}# a comment\n${lab.caPem}`)).toBeUndefined();
    expect(caBundleProblem(lab.caPem + selfSignedCertificate(['DNS:x'], 'x').certPem)).toBeUndefined();
  });

  it('none that parses, or none at all, is a problem; a key is not a certificate', () => {
    expect(caBundleProblem(broken)).toMatch(/holds no PEM certificate that parses/);
    expect(caBundleProblem('')).toMatch(/holds no PEM certificate/);
    expect(caBundleProblem(lab.clientKeyPem)).toMatch(/holds no PEM certificate/);
  });
});

describe('clientPairProblem', () => {
  it('the lab client certificate with its key is a pair', () => {
    expect(clientPairProblem(lab.clientCertPem, lab.clientKeyPem)).toBeUndefined();
  });

  it("the first certificate is the leaf (Go takes the first CERTIFICATE block): a broken first one is the certificate's problem", () => {
    expect(clientPairProblem(broken + lab.clientCertPem, lab.clientKeyPem)?.which).toBe('certificate');
  });

  it("another certificate's key, or a certificate where the key should be, is the key's problem, and no rule quotes it", () => {
    const other = selfSignedCertificate(['DNS:x'], 'x');
    const wrong = clientPairProblem(lab.clientCertPem, other.keyPem);
    expect(wrong).toEqual({ which: 'key', rule: expect.stringMatching(/does not belong to the client certificate/) });
    expect(clientPairProblem(lab.clientCertPem, lab.clientCertPem)?.which).toBe('key');
    expect(JSON.stringify(wrong)).not.toContain(other.keyPem.split('\n')[1]!);
  });
});
