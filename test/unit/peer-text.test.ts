/**
 * A peer's text, kept short: a clipped text says how long it was (issue 57, "a clipped text says how long it was"),
 * wherever it enters (src/text.ts peerText, src/net/read-until.ts printable) — the Server and Via of a refusal, a
 * refusal's body, a proxy's refusal, a non-JSON exec status.
 */
import http from 'node:http';
import type net from 'node:net';
import { describe, expect, it } from 'vitest';
import { printable } from '../../src/net/read-until.js';
import { peerText } from '../../src/text.js';
import { decodeExecStatus } from '../../src/streaming/channel/exec-status.js';

describe('peerText and printable', () => {
  it('a text within its bound is kept as it is', () => {
    expect(peerText('nginx/1.27', 80)).toBe('nginx/1.27');
    expect(printable(Buffer.from('Forbidden'), 120)).toBe('Forbidden');
  });
  it('a clipped text says how long it was, in characters or in bytes', () => {
    expect(peerText('s'.repeat(52_428_800), 80)).toBe(`${'s'.repeat(80)}… (52,428,800 characters)`);
    expect(printable(Buffer.alloc(300, 0x61), 120)).toBe(`${'a'.repeat(120)}… (300 bytes)`);
    // Only part of the body was read (the rest never kept): the count is of every byte that came.
    expect(printable(Buffer.alloc(512, 0x61), 120, 5_000_000)).toBe(`${'a'.repeat(120)}… (5,000,000 bytes)`);
  });
  it('a non-JSON exec status of 300 characters: its first 120, and its length', () => {
    const exit = decodeExecStatus('<'.repeat(300), 'v5.channel.k8s.io');
    expect(exit.error?.message).toBe(`error stream protocol error: not JSON: "${'<'.repeat(120)}… (300 characters)"`);
  });
});

describe('a refusal with a long Server header and body', () => {
  it('the upgrade error says how long the Server header and the body were', async () => {
    const server = http.createServer();
    server.on('upgrade', (_req, socket: net.Socket) => {
      const body = 'b'.repeat(70_000);
      socket.end(`HTTP/1.1 502 Bad Gateway\r\nServer: ${'S'.repeat(200)}\r\nContent-Length: ${body.length}\r\n\r\n${body}`);
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    try {
      const { openExec } = await import('../../src/streaming/index.js');
      const url = new URL(`http://127.0.0.1:${(server.address() as net.AddressInfo).port}`);
      const target = { namespace: 'default', pod: 'p', container: 'main', command: ['cat'], stdin: true, keepalive: 'none' as const };
      const err = (await openExec('websocket', { server: url, upgradeTimeoutMs: 3000 }, target).then(
        () => expect.fail('opened'),
        (e: unknown) => e,
      )) as { code: string; message: string; context: { server?: string; bodyPrefix?: string } };
      expect(err.code, err.message).toBe('UPGRADE_REJECTED');
      expect(err.context.server).toBe(`${'S'.repeat(80)}… (200 characters)`);
      // 64 KiB of the body are read at most: the count says "at least" that many came, never more than were read.
      expect(err.message).toMatch(/\(Server: S{80}… \(200 characters\)\): "b{120}… \(\d{2},\d{3} bytes\)"$/);
    } finally {
      server.close();
    }
  });
});
