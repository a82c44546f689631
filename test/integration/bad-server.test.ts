/**
 * Bad input from the server ends the session with a typed, classified error:
 * never an uncaught exception, never a hang. The server here is a raw TCP
 * socket on loopback answering with exact bytes; SPDY frames it sends are the
 * Go-produced vectors of k8s-streaming-protocols.md 3.4.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { isProbeError } from '../../src/errors.js';
import { openExec, openPortForward } from '../../src/streaming/index.js';
import type { ConnectionConfig } from '../../src/net/connection.js';
import { rawServer, spdy101, ws101, wsBinaryFrame, type RawServer } from '../helpers/raw-server.js';

const hex = (s: string) => Buffer.from(s.replace(/\s+/g, ''), 'hex');
// Go's SYN_REPLY id=1 and id=3 (first and second block of the server's zlib stream).
const GO_SYN_REPLY_1 = hex('80 03 00 02 00 00 00 14 00 00 00 01 78 f9 e3 c6 a7 c2 62 60 60 60 00 00 00 00 ff ff');
const GO_SYN_REPLY_3 = hex('80 03 00 02 00 00 00 0c 00 00 00 03 02 61 00 00 00 00 ff ff');

const target = { namespace: 'default', pod: 'p', container: 'c' };
let server: RawServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

const cfg = (s: RawServer, extra: Partial<ConnectionConfig> = {}): ConnectionConfig => ({ server: s.url, upgradeTimeoutMs: 2000, ...extra });

async function rejection(p: Promise<unknown>): Promise<Record<string, unknown>> {
  try {
    await p;
  } catch (err) {
    expect(isProbeError(err), `not a ProbeError: ${String(err)}`).toBe(true);
    return err as Record<string, unknown>;
  }
  throw new Error('expected a rejection');
}

describe('upgrade replies that are not a valid 101', () => {
  it('a non-101 reply with an HTML body: UPGRADE_REJECTED, not a Kubernetes Status (a hop answered)', async () => {
    const html = '<html><body><h1>403 Forbidden</h1>Request forbidden by administrative rules.</body></html>';
    server = await rawServer((s) => s.end(`HTTP/1.1 403 Forbidden\r\nContent-Type: text/html\r\nContent-Length: ${html.length}\r\n\r\n${html}`));
    for (const transport of ['websocket', 'spdy'] as const) {
      const err = await rejection(openExec(transport, cfg(server), { ...target, command: ['cat'] }));
      expect(err).toMatchObject({ code: 'UPGRADE_REJECTED', context: { status: 403, kubeStatus: undefined } });
      expect((err.context as { bodyPrefix: string }).bodyPrefix).toContain('Request forbidden by administrative rules');
      expect(String(err.message)).toContain('not the API server');
    }
  });

  it('a 403 Kubernetes Status: UPGRADE_REJECTED from the API server, reason kept', async () => {
    const body = JSON.stringify({ kind: 'Status', apiVersion: 'v1', status: 'Failure', reason: 'Forbidden', code: 403, message: 'cannot create pods/exec' });
    server = await rawServer((s) => s.end(`HTTP/1.1 403 Forbidden\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body}`));
    const err = await rejection(openExec('websocket', cfg(server), { ...target, command: ['cat'] }));
    expect(err).toMatchObject({ code: 'UPGRADE_REJECTED', context: { status: 403, kubeStatus: { reason: 'Forbidden' } } });
  });

  it('a 101 without Sec-WebSocket-Accept is "without", one with another digest is "wrong", each naming RFC 6455 4.1', async () => {
    const head = (accept?: string) =>
      ['HTTP/1.1 101 Switching Protocols', 'Upgrade: websocket', 'Connection: Upgrade', ...(accept ? [`Sec-WebSocket-Accept: ${accept}`] : [])].join('\r\n') +
      '\r\n\r\n';
    server = await rawServer((s) => s.end(head()));
    const missing = await rejection(openExec('websocket', cfg(server), { ...target, command: ['cat'] }));
    expect(String(missing.message)).toMatch(/101 without a Sec-WebSocket-Accept \(RFC 6455 4\.1\)/);
    await server.close();
    server = await rawServer((s) => s.end(head('bm90LXRoZS1kaWdlc3Q=')));
    const wrong = await rejection(openExec('websocket', cfg(server), { ...target, command: ['cat'] }));
    expect(String(wrong.message)).toMatch(/101 with a wrong Sec-WebSocket-Accept \(RFC 6455 4\.1: not the digest of our key\): "bm90LXRoZS1kaWdlc3Q="/);
  });

  it('a malformed frame after the 101 names the rule it broke (RFC 6455), in the session end and the echo that met it', async () => {
    server = await rawServer((s, req) => {
      s.write(ws101(req, 'v5.channel.k8s.io'));
      // A masked server frame (MASK bit set, key 0): a server must not mask.
      s.write(Buffer.from([0x82, 0x81, 0, 0, 0, 0, 0x01]));
    });
    const session = await openExec('websocket', cfg(server), { ...target, command: ['cat'], stdin: true, keepalive: 'none' });
    const end = await session.ended;
    expect(end.cause).toBe('protocol-error');
    expect(end.error?.message).toMatch(/RFC 6455 5\.1: a server must not mask the frames it sends/);
    const { endWords } = await import('../../src/streaming/types.js');
    expect(endWords(end)).toMatch(/^protocol-error: the server broke the WebSocket protocol \(RFC 6455 5\.1/);
  });

  it('a redirect on an upgrade is never followed', async () => {
    const other = await rawServer((s) => s.destroy());
    server = await rawServer((s) => s.end(`HTTP/1.1 302 Found\r\nLocation: ${other.url}elsewhere\r\nContent-Length: 0\r\n\r\n`));
    const err = await rejection(openExec('spdy', cfg(server), { ...target, command: ['cat'] }));
    expect(err).toMatchObject({ code: 'UPGRADE_REJECTED', context: { status: 302 } });
    expect(other.requests).toHaveLength(0);
    await other.close();
  });

  it('a WebSocket 101 with a subprotocol we did not offer: UPGRADE_BAD_RESPONSE', async () => {
    server = await rawServer((s, req) => s.write(ws101(req, 'v4.channel.k8s.io')));
    const err = await rejection(openExec('websocket', cfg(server), { ...target, command: ['cat'] }));
    expect(err).toMatchObject({ code: 'UPGRADE_BAD_RESPONSE' });
    expect(String(err.message)).toContain('got "v4.channel.k8s.io"');
  });

  it('a WebSocket 101 with no subprotocol at all (what makes kubectl fall back): UPGRADE_BAD_RESPONSE', async () => {
    server = await rawServer((s, req) => s.write(ws101(req)));
    expect(await rejection(openPortForward('websocket', cfg(server), target))).toMatchObject({ code: 'UPGRADE_BAD_RESPONSE' });
  });

  it('a SPDY port-forward 101 negotiating the wrong protocol: UPGRADE_BAD_RESPONSE', async () => {
    server = await rawServer((s) => s.write(spdy101('v4.channel.k8s.io')));
    expect(await rejection(openPortForward('spdy', cfg(server), target))).toMatchObject({ code: 'UPGRADE_BAD_RESPONSE' });
  });

  it('a reply that is not HTTP: UPGRADE_FAILED', async () => {
    server = await rawServer((s) => s.end('SSH-2.0-OpenSSH_9.2\r\n\r\n'));
    expect(await rejection(openExec('spdy', cfg(server), { ...target, command: ['cat'] }))).toMatchObject({ code: 'UPGRADE_FAILED' });
  });

  it('no answer at all: UPGRADE_TIMEOUT within the configured time', async () => {
    server = await rawServer(() => undefined);
    const t0 = performance.now();
    const err = await rejection(openExec('websocket', cfg(server, { upgradeTimeoutMs: 300 }), { ...target, command: ['cat'] }));
    expect(err).toMatchObject({ code: 'UPGRADE_TIMEOUT' });
    expect(performance.now() - t0).toBeLessThan(3000);
  });

  it('connection refused: DIAL_REFUSED', async () => {
    server = await rawServer(() => undefined);
    const url = server.url;
    await server.close();
    server = undefined;
    expect(await rejection(openExec('spdy', { server: url }, { ...target, command: ['cat'] }))).toMatchObject({ code: 'DIAL_REFUSED' });
  });
});

describe('bad bytes after a valid 101', () => {
  it('SPDY: garbage instead of frames ends the session with a typed protocol error', async () => {
    server = await rawServer((s) => {
      s.write(spdy101('v4.channel.k8s.io'));
      s.write(Buffer.from('<html>definitely not SPDY</html>'));
    });
    const err = await rejection(openExec('spdy', cfg(server), { ...target, command: ['cat'] }));
    expect(String(err.code)).toMatch(/^SPDY_/);
  });

  it('SPDY: a truncated frame followed by FIN ends the session, classified', async () => {
    server = await rawServer((s) => {
      s.write(spdy101('v4.channel.k8s.io'));
      let n = 0;
      s.on('data', () => {
        // Reply to the error stream properly, then cut the stdout reply in half and close.
        if (n++ === 0) s.write(GO_SYN_REPLY_1);
        else s.end(GO_SYN_REPLY_3.subarray(0, 10));
      });
    });
    const err = await rejection(openExec('spdy', cfg(server), { ...target, command: ['cat'] }));
    expect(err.code).toBe('SPDY_SESSION_CLOSED');
    expect(String(err.message)).toContain('fin');
  });

  it('WebSocket: garbage frames end the session as protocol-error with no exit code', async () => {
    server = await rawServer((s, req) => {
      s.write(ws101(req, 'v5.channel.k8s.io'));
      s.write(Buffer.from([0x8f, 0x05, 1, 2, 3, 4, 5])); // reserved opcode 0xF
    });
    const session = await openExec('websocket', cfg(server), { ...target, command: ['cat'] });
    expect((await session.ended).cause).toBe('protocol-error');
    expect(await session.exit).toMatchObject({ exitCode: undefined });
  });

  it('WebSocket: an unknown channel byte ends the session as protocol-error', async () => {
    server = await rawServer((s, req) => {
      s.write(ws101(req, 'v5.channel.k8s.io'));
      s.write(wsBinaryFrame(Buffer.from([7, 0x41])));
    });
    const session = await openExec('websocket', cfg(server), { ...target, command: ['cat'] });
    const end = await session.ended;
    expect(end.cause).toBe('protocol-error');
    expect(end.message).toContain('unknown channel 7');
  });

  it('WebSocket: an empty binary message (no channel byte) ends exec as protocol-error', async () => {
    server = await rawServer((s, req) => {
      s.write(ws101(req, 'v5.channel.k8s.io'));
      s.write(wsBinaryFrame(Buffer.from([1, 0x41])));
      s.write(wsBinaryFrame(Buffer.alloc(0)));
    });
    const session = await openExec('websocket', cfg(server), { ...target, command: ['cat'] });
    const end = await session.ended;
    expect(end.cause).toBe('protocol-error');
    expect(end.message).toContain('empty binary message: no channel byte');
  });

  it('WebSocket: a text message on v5 ends exec as protocol-error (client-go readDemuxLoop)', async () => {
    server = await rawServer((s, req) => {
      s.write(ws101(req, 'v5.channel.k8s.io'));
      s.write(Buffer.concat([Buffer.from([0x81, 0x02]), Buffer.from('\x01A')]));
    });
    const session = await openExec('websocket', cfg(server), { ...target, command: ['cat'] });
    const end = await session.ended;
    expect(end.cause).toBe('protocol-error');
    expect(end.message).toContain('text message on binary subprotocol');
  });

  it('WebSocket: channel messages cut byte by byte, fragmented, and an empty one on stdout reach each channel intact', async () => {
    const status = Buffer.from(JSON.stringify({ metadata: {}, status: 'Success' }));
    // stdout "hello" as a message in two fragments (binary, then a continuation with FIN), an empty stdout
    // message (channel byte only), stderr "oops", then the status on the error channel; written a byte at a time.
    const bytes = Buffer.concat([
      Buffer.from([0x02, 3, 1, 0x68, 0x65]),
      Buffer.from([0x80, 3, 0x6c, 0x6c, 0x6f]),
      wsBinaryFrame(Buffer.from([1])),
      wsBinaryFrame(Buffer.from([2, ...Buffer.from('oops')])),
      wsBinaryFrame(Buffer.concat([Buffer.from([3]), status])),
      Buffer.from([0x88, 2, 0x03, 0xe8]),
    ]);
    server = await rawServer((s, req) => {
      s.setNoDelay(true);
      s.write(ws101(req, 'v5.channel.k8s.io'));
      let i = 0;
      const next = () => {
        if (i < bytes.length && !s.destroyed) s.write(bytes.subarray(i, ++i), () => setTimeout(next, 1));
      };
      next();
    });
    const session = await openExec('websocket', cfg(server), { ...target, command: ['cat'] });
    const read = (r: NodeJS.ReadableStream | undefined) =>
      new Promise<string>((resolve) => {
        let text = '';
        r!.on('data', (c: Buffer) => (text += c.toString()));
        r!.on('end', () => resolve(text));
      });
    const [out, err, exit] = await Promise.all([read(session.stdout), read(session.stderr), session.exit]);
    expect({ out, err, exitCode: exit.exitCode }).toEqual({ out: 'hello', err: 'oops', exitCode: 0 });
  });

  it('WebSocket: a text message inside the port-forward tunnel is fatal', async () => {
    server = await rawServer((s, req) => {
      s.write(ws101(req, 'SPDY/3.1+portforward.k8s.io'));
      s.write(Buffer.concat([Buffer.from([0x81, 0x02]), Buffer.from('hi')]));
    });
    const pf = await openPortForward('websocket', cfg(server), target);
    expect((await pf.ended).cause).toBe('protocol-error');
  });

  it('regression: bytes in the same packet as the 101 reach the session (port prefix of legacy port-forward)', async () => {
    server = await rawServer((s, req) => {
      // 101 and the first channel message in one write.
      s.write(
        Buffer.concat([
          Buffer.from(ws101(req, 'v5.channel.k8s.io')),
          wsBinaryFrame(Buffer.from([1, ...Buffer.from('early\n')])),
          wsBinaryFrame(Buffer.from([3, ...Buffer.from('{"metadata":{},"status":"Success"}')])),
        ]),
      );
      s.write(Buffer.from([0x88, 0x02, 0x03, 0xe8]));
    });
    const session = await openExec('websocket', cfg(server), { ...target, command: ['cat'] });
    const chunks: Buffer[] = [];
    session.stdout!.on('data', (c: Buffer) => chunks.push(c));
    expect(await session.exit).toMatchObject({ exitCode: 0 });
    expect(Buffer.concat(chunks).toString()).toBe('early\n');
    expect((await session.ended).cause).toBe('ws-close:1000');
  });
});
