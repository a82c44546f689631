/**
 * The WebSocket message size limit our client enforces (DEFAULT_MAX_WS_MESSAGE_BYTES, 16 MiB, the default every
 * upgrade uses): a message of exactly the limit is delivered; one byte more is refused from its frame header
 * (nothing of it is buffered) and the connection closes with 1009 (message too big, RFC 6455 §7.4.1).
 */
import net from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { DEFAULT_MAX_WS_MESSAGE_BYTES } from '../../src/streaming/upgrade.js';
import { WS_CLOSE } from '../../src/streaming/ws-close-codes.js';
import { ClientWebSocket } from '../../src/streaming/ws-client.js';

/** An unmasked server frame header for a binary message of `length` bytes (64-bit length form). */
const header = (length: number) => {
  const h = Buffer.alloc(10);
  h[0] = 0x82;
  h[1] = 127;
  h.writeBigUInt64BE(BigInt(length), 2);
  return h;
};

const sockets: net.Socket[] = [];
let server: net.Server | undefined;
afterEach(async () => {
  for (const s of sockets.splice(0)) s.destroy();
  await new Promise((r) => (server ? server.close(r) : r(undefined)));
});

/** Our client on one end of a loopback connection; the server end writes `send` (length-prefixed frame and payload). */
async function pair(send: (server: net.Socket) => void): Promise<ClientWebSocket> {
  server = net.createServer((s) => {
    sockets.push(s);
    s.on('error', () => undefined);
    send(s);
  });
  await new Promise<void>((r) => server!.listen(0, '127.0.0.1', r));
  const socket = net.connect((server.address() as net.AddressInfo).port, '127.0.0.1');
  sockets.push(socket);
  await new Promise((r) => socket.once('connect', r));
  return new ClientWebSocket(socket, Buffer.alloc(0), 'v5.channel.k8s.io', DEFAULT_MAX_WS_MESSAGE_BYTES).start();
}

describe('the WebSocket message size limit', () => {
  it('is 16 MiB by default', () => {
    expect(DEFAULT_MAX_WS_MESSAGE_BYTES).toBe(16 * 1024 * 1024);
  });

  it('a message of exactly the limit is delivered whole', async () => {
    const ws = await pair((s) => s.write(Buffer.concat([header(DEFAULT_MAX_WS_MESSAGE_BYTES), Buffer.alloc(DEFAULT_MAX_WS_MESSAGE_BYTES, 7)])));
    const got = await new Promise<Buffer>((resolve, reject) => {
      ws.once('message', (data: Buffer) => resolve(data));
      ws.once('error', reject);
    });
    expect(got.length).toBe(DEFAULT_MAX_WS_MESSAGE_BYTES);
  }, 30_000);

  it('one byte more is refused from its header, and our client closes with 1009', async () => {
    let fromClient = Buffer.alloc(0);
    const received = new Promise<Buffer>((resolve) => {
      void pair((s) => {
        s.on('data', (c: Buffer) => (fromClient = Buffer.concat([fromClient, c])));
        s.on('close', () => resolve(fromClient));
        s.write(header(DEFAULT_MAX_WS_MESSAGE_BYTES + 1));
      }).then((ws) => ws.once('error', () => undefined));
    });
    const bytes = await received;
    // A masked close frame: 0x88, 0x80 | 2, a 4-byte key, then the code masked with it.
    expect(bytes[0]).toBe(0x88);
    const code = ((bytes[6]! ^ bytes[2]!) << 8) | (bytes[7]! ^ bytes[3]!);
    expect(code).toBe(WS_CLOSE.MESSAGE_TOO_BIG);
  });
});
