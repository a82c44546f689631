/**
 * The PEM a kubeconfig (or a credential plugin) hands us, checked when it is read, as client-go checks it when it
 * builds its transport: before any connection, so a bad one is the kubeconfig's error, not a failed dial blamed on
 * the path (before, OpenSSL refused it inside every dial: DIAL_FAILED "PEM routines::no start line").
 * - A CA bundle must hold at least one certificate: Go's x509.CertPool.AppendCertsFromPEM skips blocks that are
 *   not CERTIFICATE or do not parse, and with none left client-go stops.
 * - A client certificate and key must be a pair: Go's tls.X509KeyPair takes the first CERTIFICATE block as the
 *   leaf, needs a private key, and the two must match.
 * kubectl 1.33's own words are quoted in each rule (test/interop/kubeconfig-pem.test.ts runs it on the same files).
 * A rule never quotes the PEM: a key is a secret.
 */
import { X509Certificate, createPrivateKey } from 'node:crypto';

const CERTIFICATE_BLOCK = /-----BEGIN CERTIFICATE-----[\s\S]*?-----END CERTIFICATE-----/g;

function parses(block: string): X509Certificate | undefined {
  try {
    return new X509Certificate(block);
  } catch {
    return undefined;
  }
}

/** What is wrong with a CA bundle, or undefined. */
export function caBundleProblem(pem: string): string | undefined {
  if ((pem.match(CERTIFICATE_BLOCK) ?? []).some((block) => parses(block))) return undefined;
  return 'holds no PEM certificate that parses (kubectl: "unable to load root certificates: unable to parse bytes as PEM block")';
}

/** What is wrong with a client certificate and its key, and which of the two, or undefined. */
export function clientPairProblem(certPem: string, keyPem: string): { readonly which: 'certificate' | 'key'; readonly rule: string } | undefined {
  const first = certPem.match(CERTIFICATE_BLOCK)?.[0];
  const leaf = first === undefined ? undefined : parses(first);
  if (!leaf) return { which: 'certificate', rule: 'holds no PEM certificate that parses (kubectl: "tls: failed to find any PEM data in certificate input")' };
  let key: ReturnType<typeof createPrivateKey>;
  try {
    key = createPrivateKey(keyPem);
  } catch {
    return { which: 'key', rule: 'holds no PEM private key that parses (kubectl: "tls: failed to find any PEM data in key input")' };
  }
  if (!leaf.checkPrivateKey(key))
    return { which: 'key', rule: 'does not belong to the client certificate (kubectl: "tls: private key does not match public key")' };
  return undefined;
}
