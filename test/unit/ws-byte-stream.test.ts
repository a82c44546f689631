/**
 * The tunnel's byte stream: how writeMessage paces its caller (the SPDY session) by the socket's queue, how the
 * server side coalesces a tick's messages, and that nothing is lost or reordered at close. A stand-in WebSocket
 * records what would be written; the real one is covered end to end (client-emulator, echo-in-stream, kubectl),
 * and here for what it streams: a binary message's bytes as they arrive.
 */
import { EventEmitter } from 'node:events';
import net from 'node:net';
import { describe, expect, it, vi } from 'vitest';
import { SEND_QUEUE_BYTES } from '../../src/streaming/spdy/constants.js';
import { ClientWebSocket, type WsLike } from '../../src/streaming/ws-client.js';
import { WebSocketByteStream } from '../../src/streaming/ws-byte-stream.js';

class FakeWs extends EventEmitter {
  readonly OPEN = 1;
  readyState = 1;
  readonly protocol = 'SPDY/3.1+portforward.k8s.io';
  bufferedAmount = 0;
  sent: { pieces: Buffer[]; done: (err?: Error | null) => void }[] = [];
  closed: number[] = [];
  sendPieces(pieces: readonly Buffer[], cb?: (err?: Error | null) => void): void {
    this.sent.push({ pieces: [...pieces], done: cb ?? (() => undefined) });
  }
  send(data: Buffer, _o: { binary: boolean }, cb?: (err?: Error) => void): void {
    this.sendPieces([data], cb && ((err) => cb(err ?? undefined)));
  }
  ping(): void {}
  close(code = 1000): void {
    this.closed.push(code);
    this.readyState = 2;
  }
  terminate(): void {
    this.readyState = 3;
  }
}

const tick = () => new Promise((r) => setImmediate(r));
const b = (s: string) => Buffer.from(s);

describe('WebSocketByteStream.writeMessage', () => {
  it('one message per call, its pieces unjoined; the caller goes on at once while the queue is short', () => {
    const ws = new FakeWs();
    const s = new WebSocketByteStream(ws as unknown as WsLike);
    let called = 0;
    s.writeMessage([b('head'), b('payload')], () => called++);
    s.writeMessage([b('x')], () => called++);
    expect(ws.sent.map((m) => m.pieces.map(String))).toEqual([['head', 'payload'], ['x']]);
    expect(called).toBe(2);
  });

  it('past SEND_QUEUE_BYTES queued, the caller waits until that message reached the socket', async () => {
    const ws = new FakeWs();
    const s = new WebSocketByteStream(ws as unknown as WsLike);
    ws.bufferedAmount = SEND_QUEUE_BYTES;
    let called = false;
    s.writeMessage([b('late')], () => (called = true));
    await tick();
    expect(called).toBe(false);
    ws.sent[0]!.done();
    expect(called).toBe(true);
  });

  it('a send that fails while nobody waits destroys the stream with its error', async () => {
    const ws = new FakeWs();
    const s = new WebSocketByteStream(ws as unknown as WsLike);
    const errored = new Promise<Error>((r) => s.once('error', r));
    s.writeMessage([b('x')]);
    ws.sent[0]!.done(new Error('EPIPE'));
    expect((await errored).message).toBe('EPIPE');
  });

  it('on a closed WebSocket the callback gets WS_CLOSED and nothing is sent', () => {
    const ws = new FakeWs();
    ws.readyState = 3;
    const s = new WebSocketByteStream(ws as unknown as WsLike);
    let err: unknown;
    s.writeMessage([b('x')], (e) => (err = e));
    expect(err).toMatchObject({ code: 'WS_CLOSED' });
    expect(ws.sent).toEqual([]);
  });

  it("coalescing (the emulator): a tick's messages leave as one, in order, every callback called", async () => {
    const ws = new FakeWs();
    const s = new WebSocketByteStream(ws as unknown as WsLike, { coalesce: true });
    const calls: number[] = [];
    s.writeMessage([b('a1'), b('a2')], () => calls.push(1));
    s.writeMessage([b('b1')], () => calls.push(2));
    expect(ws.sent).toEqual([]);
    await tick();
    expect(ws.sent.map((m) => m.pieces.map(String))).toEqual([['a1', 'a2', 'b1']]);
    expect(calls).toEqual([1, 2]);
    s.writeMessage([b('c')]);
    await tick();
    expect(ws.sent).toHaveLength(2);
  });

  it('end() sends what this tick coalesced before the close frame', async () => {
    const ws = new FakeWs();
    const s = new WebSocketByteStream(ws as unknown as WsLike, { coalesce: true });
    s.writeMessage([b('last words')]);
    s.end();
    await tick();
    expect(ws.sent.map((m) => m.pieces.map(String))).toEqual([['last words']]);
    expect(ws.closed).toEqual([1000]);
  });

  it('without sendPieces (a plain ws WebSocket) the pieces are joined and sent as one binary message', () => {
    const ws = new FakeWs();
    const sent: Buffer[] = [];
    const plain = Object.assign(ws, {
      sendPieces: undefined,
      send: (d: Buffer, o: { binary: boolean }, cb?: () => void) => (expect(o.binary).toBe(true), sent.push(d), cb?.()),
    });
    new WebSocketByteStream(plain as unknown as WsLike).writeMessage([b('ab'), b('cd')]);
    expect(sent.map(String)).toEqual(['abcd']);
  });
});

describe('WebSocketByteStream over our client (a real loopback socket)', () => {
  it('a binary message reaches the stream piece by piece as its bytes arrive, before the message is whole', async () => {
    const server = net.createServer();
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const accepted = new Promise<net.Socket>((r) => server.once('connection', r));
    const socket = net.connect((server.address() as net.AddressInfo).port, '127.0.0.1');
    await new Promise((r) => socket.once('connect', r));
    const peer = await accepted;
    try {
      const ws = new ClientWebSocket(socket, Buffer.alloc(0), 'SPDY/3.1+portforward.k8s.io', 1 << 20);
      const stream = new WebSocketByteStream(ws);
      // The test's end cuts TCP without a close frame: the stream then ends with WS_CLOSED (1006), as it should.
      const ended = new Promise<Error>((r) => stream.once('error', r));
      ws.start();
      const got: Buffer[] = [];
      stream.on('data', (c: Buffer) => got.push(c));
      const payload = Buffer.alloc(3000, 0x5a);
      // One unmasked binary frame of 3000 bytes (16-bit length), its first 1000 payload bytes sent alone.
      peer.write(Buffer.concat([Buffer.from([0x82, 126, 3000 >> 8, 3000 & 0xff]), payload.subarray(0, 1000)]));
      await vi.waitFor(() => expect(Buffer.concat(got).length).toBe(1000));
      peer.write(payload.subarray(1000));
      await vi.waitFor(() => expect(Buffer.concat(got).equals(payload)).toBe(true));
      peer.destroy();
      expect((await ended).message).toBe('tunnel WebSocket closed with code 1006');
    } finally {
      socket.destroy();
      peer.destroy();
      server.close();
    }
  });
});
