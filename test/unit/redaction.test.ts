/**
 * The credential forms redactCredentialForms() removes from text nobody
 * registered (a failing exec plugin's stderr, a URL in an error): each form
 * alone, so disabling one of them fails its own row.
 */
import { describe, expect, it } from 'vitest';
import { FRAGMENT, SecretRedactor, redactCredentialForms } from '../../src/kube/secrets.js';

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

describe('pieces of a secret (issue 57: a peer clips a token at any character, or prints it lower-cased)', () => {
  const TOKEN = 'Hostile-Secret-Token-9f3a';
  const r = new SecretRedactor();
  r.add(TOKEN);
  it('a token clipped anywhere leaves no run of FRAGMENT (12) characters of it, at either end', () => {
    for (let cut = FRAGMENT; cut < TOKEN.length; cut++) {
      const head = r.redact(`Server: proxy ${TOKEN.slice(0, cut)}…`);
      const tail = r.redact(`…${TOKEN.slice(TOKEN.length - cut)} trailer`);
      for (const out of [head, tail]) {
        expect(out).toContain('[REDACTED]');
        for (let i = 0; i + FRAGMENT <= TOKEN.length; i++) expect(out.toLowerCase()).not.toContain(TOKEN.slice(i, i + FRAGMENT).toLowerCase());
      }
    }
    expect(r.redact(`Server: proxy ${TOKEN.slice(0, 20)}…`)).toBe('Server: proxy [REDACTED]…');
  });
  it('in any case: a header named after the token, lower-cased by the HTTP stack', () => {
    expect(r.redact(`< ${TOKEN.toLowerCase()}-xyz: 1`)).toBe('< [REDACTED]-xyz: 1');
    expect(r.redact(TOKEN.toUpperCase())).toBe('[REDACTED]');
  });
  it('runs shorter than FRAGMENT, and ordinary text, stay', () => {
    const text = 'Hostile-Sec (11 characters of it) is no secret; neither is the word Token';
    expect(r.redact(text)).toBe(text);
  });
  it('a 5 MB text around a token: the token goes, every other character stays', () => {
    const big = `${'x'.repeat(5_000_000)}${TOKEN.slice(3)}${'y'.repeat(1000)}`;
    expect(r.redact(big)).toBe(`${'x'.repeat(5_000_000)}[REDACTED]${'y'.repeat(1000)}`);
  });
});
