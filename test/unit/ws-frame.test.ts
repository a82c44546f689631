/**
 * Our WebSocket frame writer (ws-frame.ts) read back by ws's own Receiver, a parser we did not write: masked
 * frames as a server reads them (it refuses unmasked client frames), unmasked ones as a client reads them
 * (it refuses masked server frames), at every length class of RFC 6455 §5.2 and with pieces that start at
 * payload offsets not divisible by 4 (the masking key must be rotated for them).
 */
import net from 'node:net';
import { describe, expect, it } from 'vitest';
import * as wsModule from 'ws';
import { createRequire } from 'node:module';
import { writeUnmaskedBinaryFrame } from '../../lab/emulator/ws-server-pieces.js';
import { mask, maskInJs, maskedBinaryFrame } from '../../src/streaming/ws-frame.js';

const { Receiver } = wsModule as unknown as { Receiver: new (o: object) => NodeJS.WritableStream & { on(e: string, l: (...a: any[]) => void): void } };

/** Feeds bytes to ws's Receiver in chunks of `chunk` bytes; resolves with the messages, rejects on its error. */
function receive(bytes: Buffer, isServer: boolean, chunk = bytes.length): Promise<{ data: Buffer; binary: boolean }[]> {
  const r = new Receiver({ isServer, binaryType: 'nodebuffer', extensions: {}, maxPayload: 0, allowSynchronousEvents: true });
  const out: { data: Buffer; binary: boolean }[] = [];
  return new Promise((resolve, reject) => {
    r.on('message', (data: Buffer, binary: boolean) => out.push({ data: Buffer.from(data), binary }));
    r.on('error', reject);
    for (let i = 0; i < bytes.length; i += chunk) r.write(bytes.subarray(i, i + chunk));
    setImmediate(() => resolve(out));
  });
}

function bytes(n: number, seed: number): Buffer {
  const b = Buffer.allocUnsafe(n);
  for (let i = 0; i < n; i++) b[i] = (i * 31 + seed) & 0xff;
  return b;
}

// Lengths on both sides of the 7-bit, 16-bit and 64-bit length forms, split into pieces at unaligned offsets.
const CASES: number[][] = [[0], [1], [3, 5], [8, 117], [125], [126], [7, 119], [1, 2, 3, 65529], [65535], [65536], [8, 32768], [5, 70000, 3], [8, 1 << 20]];

describe('WebSocket frames made of pieces', () => {
  it('a masked frame is one binary message to ws as a server, byte for byte, whatever the pieces and chunking', async () => {
    for (const lengths of CASES) {
      const pieces = lengths.map((n, i) => bytes(n, i + 1));
      const before = pieces.map((p) => Buffer.from(p));
      const frame = maskedBinaryFrame(pieces).buf;
      expect(frame[1]! & 0x80, `mask bit for ${lengths}`).toBe(0x80);
      // (7-byte chunks only for the smaller frames: ws's receiver is quadratic in the count of buffered chunks.)
      for (const chunk of frame.length > 80_000 ? [frame.length, 1000] : [frame.length, 1000, 7]) {
        const msgs = await receive(Buffer.from(frame), true, chunk); // ws unmasks in place: a fresh copy each time
        expect(msgs, `${lengths} in chunks of ${chunk}`).toHaveLength(1);
        expect(msgs[0]!.binary).toBe(true);
        expect(msgs[0]!.data.equals(Buffer.concat(before)), `${lengths} in chunks of ${chunk}`).toBe(true);
      }
      // The caller's pieces are not masked in place.
      pieces.forEach((p, i) => expect(p.equals(before[i]!)).toBe(true));
    }
  });

  it('two masked frames of the same pieces differ (a fresh masking key per frame)', () => {
    const p = bytes(64, 9);
    expect(maskedBinaryFrame([p]).buf.equals(maskedBinaryFrame([p]).buf)).toBe(false);
  });

  it('ws as a client refuses a masked frame, and ws as a server an unmasked one (our frames are not accepted by accident)', async () => {
    await expect(receive(maskedBinaryFrame([bytes(10, 1)]).buf, false)).rejects.toMatchObject({ code: 'WS_ERR_UNEXPECTED_MASK' });
    const unmasked = await framedOnSocket([bytes(10, 1)]);
    await expect(receive(unmasked, true)).rejects.toMatchObject({ code: 'WS_ERR_EXPECTED_MASK' });
  });

  it('an unmasked frame written to a socket is one binary message to ws as a client', async () => {
    for (const lengths of CASES) {
      const pieces = lengths.map((n, i) => bytes(n, i + 3));
      const wire = await framedOnSocket(pieces);
      expect(wire[1]! & 0x80).toBe(0);
      const msgs = await receive(wire, false, 4096);
      expect(msgs, `${lengths}`).toHaveLength(1);
      expect(msgs[0]!.data.equals(Buffer.concat(pieces)), `${lengths}`).toBe(true);
    }
  });
});

/** What writeUnmaskedBinaryFrame puts on a real loopback socket, read from the other end. */
async function framedOnSocket(pieces: Buffer[]): Promise<Buffer> {
  const server = net.createServer();
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as net.AddressInfo).port;
  const received = new Promise<Buffer>((resolve) => {
    server.once('connection', (c) => {
      const chunks: Buffer[] = [];
      c.on('data', (d) => chunks.push(d));
      c.on('end', () => resolve(Buffer.concat(chunks)));
    });
  });
  const client = net.connect(port, '127.0.0.1');
  await new Promise((r) => client.once('connect', r));
  await new Promise<void>((resolve, reject) => writeUnmaskedBinaryFrame(client, pieces, (err) => (err ? reject(err) : resolve())));
  client.end();
  const wire = await received;
  server.close();
  return wire;
}

describe('masking', () => {
  it('uses the native bufferutil on this machine (CI installs it: an optional dependency with a linux-x64 prebuild)', () => {
    expect(() => createRequire(import.meta.url)('bufferutil')).not.toThrow();
    expect(mask).not.toBe(maskInJs);
  });

  it('the JavaScript fallback (arm64 Lambda and task) masks exactly as the native loop, at every offset and length', () => {
    const key = Buffer.from([0x12, 0x9a, 0xff, 0x01]);
    for (const length of [0, 1, 3, 47, 48, 49, 1000, 65537]) {
      for (const [source, offset] of [0, 1, 4, 5].flatMap((o) => [[bytes(length, length), o] as const, [bytes(length + 1, length).subarray(1), o] as const])) {
        const a = Buffer.alloc(length + offset, 7);
        const b = Buffer.alloc(length + offset, 7);
        mask(source, key, a, offset, length);
        maskInJs(source, key, b, offset, length);
        expect(a.equals(b), `${length} at ${offset}, source at ${source.byteOffset}`).toBe(true);
        if (length > 0) expect(b[offset]).toBe(source[0]! ^ 0x12);
        if (offset > 0) expect(b[0]).toBe(7); // nothing before the offset is touched
      }
    }
  });
});
