/**
 * The EKS token against the rules the AWS IAM authenticator applies
 * (pkg/token/token.go Verify), and its SigV4 signature recomputed here from
 * the SigV4 specification with node:crypto, not with the library that made it.
 */
import { createHash, createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { eksToken } from '../../src/aws/eks-token.js';
import { SecretRedactor } from '../../src/kube/secrets.js';

// AWS's documented example credentials: not real, fixed for the test.
const creds = { accessKeyId: 'AKIDEXAMPLE', secretAccessKey: 'wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY', sessionToken: 'FwoGZXIvYXdzEXAMPLESESSIONTOKEN==' };
const now = new Date('2026-12-02T10:00:00Z');

const WHITELIST = [
  'action',
  'version',
  'x-amz-algorithm',
  'x-amz-credential',
  'x-amz-date',
  'x-amz-expires',
  'x-amz-security-token',
  'x-amz-signature',
  'x-amz-signedheaders',
];

/** The authenticator's checks, rewritten from its source. Returns the parsed URL. */
function verifyLikeAuthenticator(token: string, region: string, at: Date): URL {
  expect(token.length).toBeLessThanOrEqual(4 * 1024);
  expect(token.startsWith('k8s-aws-v1.')).toBe(true);
  const b64 = token.slice('k8s-aws-v1.'.length);
  expect(b64).toMatch(/^[A-Za-z0-9_-]+$/); // RawURLEncoding: no padding, URL alphabet
  const url = new URL(Buffer.from(b64, 'base64url').toString('utf8'));
  expect(url.protocol).toBe('https:');
  expect([`sts.${region}.amazonaws.com`, 'sts.amazonaws.com']).toContain(url.host);
  expect(url.pathname).toBe('/');
  const keys = [...url.searchParams.keys()];
  for (const k of keys) expect(WHITELIST).toContain(k.toLowerCase());
  expect(new Set(keys).size).toBe(keys.length); // one value per parameter
  const q = (k: string) => url.searchParams.get(keys.find((x) => x.toLowerCase() === k)!) ?? '';
  expect(q('action')).toBe('GetCallerIdentity');
  expect(q('version')).toBe('2011-06-15');
  expect(
    q('x-amz-signedheaders')
      .split(';')
      .map((h) => h.toLowerCase()),
  ).toContain('x-k8s-aws-id');
  const expires = Number(q('x-amz-expires'));
  expect(expires).toBeGreaterThanOrEqual(0);
  expect(expires).toBeLessThanOrEqual(900);
  const d = q('x-amz-date');
  expect(d).toMatch(/^\d{8}T\d{6}Z$/);
  const date = new Date(`${d.slice(0, 4)}-${d.slice(4, 6)}-${d.slice(6, 8)}T${d.slice(9, 11)}:${d.slice(11, 13)}:${d.slice(13, 15)}Z`);
  expect(at.getTime() - date.getTime()).toBeLessThan(15 * 60 * 1000);
  return url;
}

/** SigV4 for a presigned GET, from the specification. */
function expectedSignature(url: URL, clusterName: string, secretKey: string): string {
  const enc = (s: string) => encodeURIComponent(s).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
  const params = [...url.searchParams.entries()].filter(([k]) => k !== 'X-Amz-Signature').sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  const canonicalQuery = params.map(([k, v]) => `${enc(k)}=${enc(v)}`).join('&');
  const signedHeaders = url.searchParams.get('X-Amz-SignedHeaders')!;
  const headers: Record<string, string> = { host: url.host, 'x-k8s-aws-id': clusterName };
  const canonicalHeaders = signedHeaders
    .split(';')
    .map((h) => `${h}:${headers[h]}\n`)
    .join('');
  const canonicalRequest = ['GET', '/', canonicalQuery, canonicalHeaders, signedHeaders, createHash('sha256').update('').digest('hex')].join('\n');
  const [, date, region, service] = url.searchParams.get('X-Amz-Credential')!.split('/') as [string, string, string, string];
  const stringToSign = [
    'AWS4-HMAC-SHA256',
    url.searchParams.get('X-Amz-Date'),
    `${date}/${region}/${service}/aws4_request`,
    createHash('sha256').update(canonicalRequest).digest('hex'),
  ].join('\n');
  const hmac = (key: Buffer | string, data: string) => createHmac('sha256', key).update(data).digest();
  const kSigning = hmac(hmac(hmac(hmac(`AWS4${secretKey}`, date), region), service), 'aws4_request');
  return createHmac('sha256', kSigning).update(stringToSign).digest('hex');
}

describe('EKS token', () => {
  it('passes every rule the IAM authenticator applies, for the regional STS endpoint', async () => {
    const token = await eksToken({ clusterName: 'prod-eu', region: 'eu-west-1', credentials: creds, now });
    const url = verifyLikeAuthenticator(token, 'eu-west-1', new Date(now.getTime() + 60_000));
    expect(url.searchParams.get('X-Amz-Expires')).toBe('60');
    expect(url.searchParams.get('X-Amz-Credential')).toBe('AKIDEXAMPLE/20261202/eu-west-1/sts/aws4_request');
    expect(url.searchParams.get('X-Amz-Security-Token')).toBe(creds.sessionToken);
  });

  it('carries a valid SigV4 signature over host and x-k8s-aws-id (recomputed independently)', async () => {
    const token = await eksToken({ clusterName: 'prod-eu', region: 'eu-west-1', credentials: creds, now });
    const url = new URL(Buffer.from(token.slice(11), 'base64url').toString());
    expect(url.searchParams.get('X-Amz-SignedHeaders')).toBe('host;x-k8s-aws-id');
    expect(url.searchParams.get('X-Amz-Signature')).toBe(expectedSignature(url, 'prod-eu', creds.secretAccessKey));
    // Signed for this cluster only: another cluster name gives another signature.
    expect(url.searchParams.get('X-Amz-Signature')).not.toBe(expectedSignature(url, 'other', creds.secretAccessKey));
  });

  it('is refused by the same rules once 15 minutes old', async () => {
    const token = await eksToken({ clusterName: 'c', region: 'us-east-1', credentials: creds, now });
    expect(() => verifyLikeAuthenticator(token, 'us-east-1', new Date(now.getTime() + 16 * 60_000))).toThrow();
  });

  it('never reaches logs: the redactor removes it even unregistered', async () => {
    const token = await eksToken({ clusterName: 'c', region: 'us-east-1', credentials: creds, now });
    const r = new SecretRedactor();
    expect(r.redact(`Authorization: Bearer ${token}`)).not.toContain(token.slice(11, 40));
    expect(r.redact(`token=${token}`)).toBe('token=k8s-aws-v1.[REDACTED]');
  });
});
