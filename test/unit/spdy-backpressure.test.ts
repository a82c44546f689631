/**
 * readBackpressure (the emulator's kubelet side of port-forward): over real loopback sockets, a SPDY stream
 * whose reader stops holds the connection's reading, so TCP holds the sender back, as spdystream's blocking
 * frame handler does; without it, the session reads everything into memory. Directly on TCP and inside the
 * WebSocket tunnel (ws's server, as the emulator runs it).
 */
import { SpdyServerSession } from '../../lab/emulator/spdy-server-session.js';
import net from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import WebSocket, { WebSocketServer } from 'ws';
import { afterUpgradeFaults } from '../../lab/emulator/connection-faults.js';
import type { UpgradeRecord } from '../../lab/emulator/options.js';
import { SpdySession } from '../../src/streaming/spdy/session.js';
import type { SpdyStream } from '../../src/streaming/spdy/stream.js';
import { WebSocketByteStream } from '../../src/streaming/ws-byte-stream.js';

const MIB = 1024 * 1024;
const TOTAL = 16 * MIB;

function patterned(bytes: number): Buffer {
  const b = Buffer.alloc(bytes);
  for (let i = 0; i < bytes; i += 4) b.writeUInt32LE((i * 2654435761) >>> 0, i);
  return b;
}

/** Waits until `read()` has not moved for 300 ms (at most 10 s); returns its value. */
async function settled(read: () => number): Promise<number> {
  let last = -1;
  let still = 0;
  for (let t = 0; t < 200 && still < 6; t++) {
    await new Promise((r) => setTimeout(r, 50));
    const v = read();
    still = v === last ? still + 1 : 0;
    last = v;
  }
  return last;
}

function collect(stream: SpdyStream, bytes: number): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let got = 0;
  return new Promise((resolve) => {
    stream.on('data', (c: Buffer) => {
      chunks.push(c);
      got += c.length;
      if (got >= bytes) resolve(Buffer.concat(chunks));
    });
  });
}

/** The client opens a port's data stream, waits for its reply and writes `data` (done: the write's callback ran). */
async function sendOnNewStream(p: Pair, port: string, data: Buffer): Promise<{ out: SpdyStream; written: () => boolean }> {
  const out = p.client.openStream({ streamtype: 'data', port });
  await out.awaitReply();
  let written = false;
  out.write(data, () => (written = true));
  return { out, written: () => written };
}

const cleanups: (() => void)[] = [];
afterEach(() => {
  for (const c of cleanups.splice(0)) c();
});

interface Pair {
  server: SpdySession;
  client: SpdySession;
  /** The server's TCP socket (under ws in the tunnel), as the emulator's faults see it. */
  serverSocket: net.Socket;
  /** Bytes the server's side has read from its socket. */
  serverBytesRead(): number;
  /** The next stream the client opens, as the server sees it (replied, nobody reading). */
  nextServerStream(): Promise<SpdyStream>;
}

function serverStreams(server: SpdySession): () => Promise<SpdyStream> {
  const waiting: ((s: SpdyStream) => void)[] = [];
  server.on('stream', (s: SpdyStream) => {
    s.reply({});
    waiting.shift()?.(s);
  });
  return () => new Promise((resolve) => waiting.push(resolve));
}

async function tcpPair(readBackpressure: boolean): Promise<Pair> {
  const srv = net.createServer();
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
  const accepted = new Promise<net.Socket>((r) => srv.once('connection', r));
  const c = net.connect((srv.address() as net.AddressInfo).port, '127.0.0.1');
  const s = await accepted;
  cleanups.push(() => (c.destroy(), s.destroy(), srv.close()));
  const server = new SpdyServerSession(s, { readBackpressure });
  return {
    server,
    client: new SpdySession(c),
    serverSocket: s,
    serverBytesRead: () => s.bytesRead,
    nextServerStream: serverStreams(server),
  };
}

async function tunnelPair(readBackpressure: boolean): Promise<Pair> {
  const wss = new WebSocketServer({ host: '127.0.0.1', port: 0, perMessageDeflate: false });
  await new Promise<void>((r) => wss.once('listening', r));
  const accepted = new Promise<WebSocket>((r) => wss.once('connection', r));
  const c = new WebSocket(`ws://127.0.0.1:${(wss.address() as net.AddressInfo).port}`, { perMessageDeflate: false });
  await new Promise((r) => c.once('open', r));
  const s = await accepted;
  cleanups.push(() => (c.terminate(), s.terminate(), wss.close()));
  const server = new SpdyServerSession(new WebSocketByteStream(s, { coalesce: true }), { readBackpressure });
  const raw = (s as unknown as { _socket: net.Socket })._socket;
  return {
    server,
    client: new SpdySession(new WebSocketByteStream(c)),
    serverSocket: raw,
    serverBytesRead: () => raw.bytesRead,
    nextServerStream: serverStreams(server),
  };
}

describe.each([
  ['directly on TCP', tcpPair],
  ['inside the WebSocket tunnel', tunnelPair],
])('SpdySession readBackpressure %s', (_name, makePair) => {
  it('a stream nobody reads holds the reading (TCP holds the sender back); reading again gets every byte in order', async () => {
    const p = await makePair(true);
    const serverStream = p.nextServerStream();
    const data = patterned(TOTAL);
    const { written } = await sendOnNewStream(p, '8080', data);
    const held = await settled(p.serverBytesRead);
    // A stream's high-water mark and a socket read or two: far below what was sent.
    expect(held).toBeLessThan(MIB);
    expect(written()).toBe(false);
    const got = await collect(await serverStream, TOTAL);
    expect(got.equals(data)).toBe(true);
    expect(p.serverBytesRead()).toBeGreaterThan(TOTAL);
  }, 30_000);

  it('without it (our client), the session reads everything the peer sends into memory', async () => {
    const p = await makePair(false);
    const serverStream = p.nextServerStream();
    await sendOnNewStream(p, '8080', patterned(TOTAL));
    const read = await settled(p.serverBytesRead);
    expect(read).toBeGreaterThan(TOTAL);
    expect((await serverStream).readableLength).toBeGreaterThanOrEqual(TOTAL);
  }, 30_000);

  it('one full stream holds the others too (as in spdystream), until it is read or finished', async () => {
    const p = await makePair(true);
    const fullOnServer = p.nextServerStream();
    await sendOnNewStream(p, '8080', patterned(4 * MIB));
    const full = await fullOnServer;
    await settled(p.serverBytesRead);
    const otherOnServer = p.nextServerStream();
    const b = p.client.openStream({ streamtype: 'data', port: '8081' });
    // The SYN_STREAM itself waits behind the held bytes: no reply, so nothing of b arrives.
    const replied = await Promise.race([b.awaitReply().then(() => true), new Promise((r) => setTimeout(() => r(false), 300))]);
    expect(replied).toBe(false);
    // Our side resets the full stream: it reads nothing more and must not hold the connection.
    full.reset();
    await b.awaitReply(5_000);
    const other = await otherOnServer;
    const got = collect(other, 5);
    b.write('hello');
    expect((await got).toString()).toBe('hello');
  }, 30_000);

  it("the lab's black-hole node fault stays black when a stream that held the reading is read again", async () => {
    const p = await makePair(true);
    const serverStream = p.nextServerStream();
    await sendOnNewStream(p, '8080', patterned(TOTAL));
    await settled(p.serverBytesRead);
    const rec = { node: 'node-e' } as UpgradeRecord;
    afterUpgradeFaults(
      { kind: 'black-hole', afterSeconds: 0 },
      p.serverSocket,
      rec,
      () => {},
      () => {},
    );
    await new Promise((r) => setTimeout(r, 50));
    const atBlackHole = p.serverBytesRead();
    // The pod's side reads what it holds: the session asks its transport to read again; the black hole must not.
    const s = await serverStream;
    let readAfter = 0;
    s.on('data', (c: Buffer) => (readAfter += c.length));
    const after = await settled(p.serverBytesRead);
    expect(readAfter).toBeGreaterThan(0);
    // At most what the socket had buffered when it paused; without the fault the whole 16 MiB would arrive.
    expect(after - atBlackHole).toBeLessThan(MIB);
    expect(after).toBeLessThan(2 * MIB);
  }, 30_000);
});
