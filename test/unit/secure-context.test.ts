/**
 * One TLS context per cluster's settings (dial.ts secureContextFor), as client-go keeps one tls.Config per cluster, and
 * the TLS 1.3 suites in Go's order (tls-ciphers.ts; what servers make of it: test/interop/tls-suites.test.ts).
 */
import tls from 'node:tls';
import { describe, expect, it } from 'vitest';
import { secureContextFor } from '../../src/net/dial.js';
import { goCipherOrder } from '../../src/net/tls-ciphers.js';
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

  it("one shared context, with Node's roots, where the kubeconfig sets no CA or client certificate: no settings, only a server name, insecure", () => {
    const shared = secureContextFor(undefined);
    expect(shared).toBeDefined();
    expect(secureContextFor({ serverName: 'kubernetes' })).toBe(shared);
    expect(secureContextFor({ insecureSkipVerify: true })).toBe(shared);
  });

  it('a client key that is not a key is refused when the context is built, where tls.connect refused it', () => {
    expect(() => secureContextFor({ key: 'not a key', cert: 'not a cert' })).toThrow();
  });
});

describe('goCipherOrder', () => {
  it("puts Node's TLS 1.3 suites first in Go's order (AES-128-GCM, AES-256-GCM, ChaCha20) and leaves the rest as they were", () => {
    const node = tls.DEFAULT_CIPHERS.split(':');
    const ordered = goCipherOrder().split(':');
    expect(ordered.slice(0, 3)).toEqual(['TLS_AES_128_GCM_SHA256', 'TLS_AES_256_GCM_SHA384', 'TLS_CHACHA20_POLY1305_SHA256']);
    expect(ordered.slice(3)).toEqual(node.filter((c) => !c.startsWith('TLS_')));
    expect([...ordered].sort()).toEqual([...node].sort());
  });

  it('keeps out a TLS 1.3 suite the list did not enable', () => {
    expect(goCipherOrder('TLS_AES_256_GCM_SHA384:TLS_AES_128_GCM_SHA256:ECDHE-ECDSA-AES128-GCM-SHA256')).toBe(
      'TLS_AES_128_GCM_SHA256:TLS_AES_256_GCM_SHA384:ECDHE-ECDSA-AES128-GCM-SHA256',
    );
  });
});
