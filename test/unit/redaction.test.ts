/**
 * The credential forms redactCredentialForms() removes from text nobody
 * registered (a failing exec plugin's stderr, a URL in an error): each form
 * alone, so disabling one of them fails its own row.
 */
import { describe, expect, it } from 'vitest';
import { SecretRedactor, redactCredentialForms } from '../../src/kube/secrets.js';

const SECRET = 'kspS3cr3tValue-0123456789';

describe('redactCredentialForms', () => {
  it.each([
    ['a bearer token', `Authorization: Bearer ${SECRET}`, 'Authorization: Bearer [REDACTED]'],
    ['basic credentials', `Proxy-Authorization: Basic ${Buffer.from(`u:${SECRET}`).toString('base64')}`, 'Proxy-Authorization: Basic [REDACTED]'],
    ['an EKS token', `token k8s-aws-v1.${SECRET}`, 'token k8s-aws-v1.[REDACTED]'],
    ['token= from an exec plugin', `debug: token=${SECRET} expired`, 'debug: token=[REDACTED] expired'],
    ['password: in YAML-ish text', `password: "${SECRET}"`, 'password: "[REDACTED]"'],
    ['client_secret in JSON', `{"client_secret":"${SECRET}"}`, '{"client_secret":"[REDACTED]"}'],
    ['a proxy password in a URL', `proxy http://alice:${SECRET}@proxy.corp:3128 refused`, 'proxy http://alice:[REDACTED]@proxy.corp:3128 refused'],
    [
      'a presigned URL',
      `https://sts.amazonaws.com/?X-Amz-Credential=AKIA${SECRET}&X-Amz-Signature=${SECRET}`,
      'https://sts.amazonaws.com/?X-Amz-Credential=[REDACTED]&X-Amz-Signature=[REDACTED]',
    ],
    ['a PEM private key', `key:\n-----BEGIN EC PRIVATE KEY-----\n${SECRET}\n-----END EC PRIVATE KEY-----\nrest`, 'key:\n[REDACTED PRIVATE KEY]\nrest'],
  ])('%s', (_name, text, want) => {
    expect(redactCredentialForms(text)).toBe(want);
    expect(redactCredentialForms(text)).not.toContain(SECRET);
  });

  it('leaves ordinary words alone', () => {
    const text = 'the token was rejected (401); a password prompt; tokens: 3';
    expect(redactCredentialForms(text)).toBe(text);
  });

  it('registered secrets go whatever their form (SecretRedactor)', () => {
    const r = new SecretRedactor();
    r.add(SECRET);
    expect(r.redact(`plain ${SECRET} and ${SECRET}`)).toBe('plain [REDACTED] and [REDACTED]');
  });

  it('a structured value keeps its shape: every string redacted, a field named as a credential emptied (SecretRedactor.redactValue)', () => {
    const r = new SecretRedactor();
    r.add(SECRET);
    const summary = { ok: false, count: 3, error: { message: `denied for ${SECRET}` }, lines: [`Bearer ${SECRET}`], auth: { token: 'short1', tokens: 2 } };
    const out = r.redactValue(summary);
    expect(out).toEqual({
      ok: false,
      count: 3,
      error: { message: 'denied for [REDACTED]' },
      lines: ['Bearer [REDACTED]'],
      auth: { token: '[REDACTED]', tokens: 2 },
    });
    expect(JSON.stringify(out)).not.toContain(SECRET);
    expect(summary.error.message).toContain(SECRET); // the original is not changed
  });
});
