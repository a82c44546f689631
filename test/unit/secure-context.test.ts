/** One TLS context per cluster's settings (dial.ts secureContextFor), as client-go keeps one tls.Config per cluster. */
import { describe, expect, it } from 'vitest';
import { secureContextFor } from '../../src/net/dial.js';
import { selfSignedCertificate } from '../../lab/emulator/tls.js';

describe('secureContextFor', () => {
  it('builds a context once per settings object and reuses it for every connection', () => {
    const caPem = selfSignedCertificate(['DNS:lab'], 'lab').certPem;
    const settings = { ca: [caPem] };
    const first = secureContextFor(settings);
    expect(first).toBeDefined();
    expect(secureContextFor(settings)).toBe(first);
    // Another cluster's settings (even with the same CA) get their own.
    expect(secureContextFor({ ca: [caPem] })).not.toBe(first);
  });

  it("needs none where Node's default context (its roots) serves: no settings, or only a server name or insecure", () => {
    expect(secureContextFor(undefined)).toBeUndefined();
    expect(secureContextFor({ serverName: 'kubernetes' })).toBeUndefined();
    expect(secureContextFor({ insecureSkipVerify: true })).toBeUndefined();
  });

  it('a client key that is not a key is refused when the context is built, where tls.connect refused it', () => {
    expect(() => secureContextFor({ key: 'not a key', cert: 'not a cert' })).toThrow();
  });
});
