/**
 * SpdySession rules over an in-memory byte pipe. The peer's frames are the
 * Go vectors or hand-built bytes, and frames we send are decoded by a
 * separate parser, never compared with the serializer's own output.
 */
import { SpdyServerSession } from '../../lab/emulator/spdy-server-session.js';
import { Duplex, PassThrough } from 'node:stream';
import pako from 'pako';
import { describe, expect, it } from 'vitest';
import { SPDY3_DICTIONARY } from '../../src/streaming/spdy/dictionary.js';
import { SpdyFrameParser } from '../../src/streaming/spdy/parser.js';
import { SpdySession } from '../../src/streaming/spdy/session.js';
import type { SpdyStream } from '../../src/streaming/spdy/stream.js';
import type { SpdyFrame } from '../../src/streaming/spdy/frames.js';

const hex = (s: string) => Buffer.from(s.replace(/\s+/g, ''), 'hex');

/** A Duplex whose writes we capture and whose reads we inject. */
function pipe() {
  const fromPeer = new PassThrough();
  const written: Buffer[] = [];
  const transport = new Duplex({
    read() {},
    write(chunk: Buffer, _e, cb) {
      written.push(chunk);
      cb();
    },
  });
  fromPeer.on('data', (c: Buffer) => transport.push(c));
  const parser = new SpdyFrameParser();
  return {
    transport,
    inject: (b: Buffer) => fromPeer.write(b),
    sent: (): SpdyFrame[] => parser.push(Buffer.concat(written.splice(0))),
  };
}

const tick = () => new Promise((r) => setImmediate(r));

/** A peer's SYN_STREAMs with empty header blocks, each the next block of ONE zlib stream (as on the wire). */
function peerSynStreams() {
  const deflate = new pako.Deflate({ dictionary: new Uint8Array(SPDY3_DICTIONARY) });
  let out: Uint8Array[] = [];
  deflate.onData = (c: Uint8Array) => out.push(c);
  return (id: number): Buffer => {
    out = [];
    deflate.push(new Uint8Array(4), 2); // count 0, Z_SYNC_FLUSH
    const block = Buffer.concat(out);
    const fixed = Buffer.alloc(10);
    fixed.writeUInt32BE(id, 0);
    const h = Buffer.alloc(8);
    h.writeUInt32BE(0x80030001, 0);
    h.writeUInt32BE(10 + block.length, 4);
    return Buffer.concat([h, fixed, block]);
  };
}

describe('SpdySession', () => {
  it('client stream ids are odd from 1, and a SYN_REPLY resolves the stream', async () => {
    const p = pipe();
    const s = new SpdySession(p.transport);
    const a = s.openStream({ streamtype: 'error' });
    const b = s.openStream({ streamtype: 'stdout' });
    expect([a.id, b.id]).toEqual([1, 3]);
    const sent = p.sent();
    expect(sent.map((f) => f.type === 'SYN_STREAM' && [f.streamId, f.headers])).toEqual([
      [1, { streamtype: ['error'] }],
      [3, { streamtype: ['stdout'] }],
    ]);
    p.inject(hex('80 03 00 02 00 00 00 14 00 00 00 01 78 f9 e3 c6 a7 c2 62 60 60 60 00 00 00 00 ff ff'));
    await expect(a.replied).resolves.toEqual({});
  });

  it('echoes a peer PING unchanged and times its own', async () => {
    const p = pipe();
    const s = new SpdySession(p.transport);
    p.inject(hex('80 03 00 06 00 00 00 04 00 00 00 02')); // server ping id 2
    await tick();
    expect(p.sent()).toEqual([{ type: 'PING', id: 2 }]);
    const rtt = s.ping();
    expect(p.sent()).toEqual([{ type: 'PING', id: 1 }]);
    p.inject(hex('80 03 00 06 00 00 00 04 00 00 00 01'));
    expect(await rtt).toBeGreaterThanOrEqual(0);
  });

  it('answers a SYN_STREAM with a lower id than the last with RST_STREAM(PROTOCOL_ERROR)', async () => {
    const p = pipe();
    const s = new SpdyServerSession(p.transport);
    const got: number[] = [];
    s.on('stream', (st: SpdyStream) => got.push(st.id));
    const synStream = peerSynStreams();
    p.inject(Buffer.concat([synStream(3), synStream(1)]));
    await tick();
    expect(got).toEqual([3]);
    expect(p.sent()).toEqual([{ type: 'RST_STREAM', streamId: 1, status: 1 }]);
  });

  it('refuses a SYN_STREAM with the wrong parity (a client must use odd ids)', async () => {
    const p = pipe();
    const s = new SpdyServerSession(p.transport);
    s.on('stream', () => expect.fail('even id accepted from a client'));
    p.inject(peerSynStreams()(2));
    await tick();
    expect(p.sent()).toEqual([{ type: 'RST_STREAM', streamId: 2, status: 1 }]);
  });

  it('maxConcurrentStreams: the limit is accepted, one more is refused (REFUSED_STREAM)', async () => {
    const p = pipe();
    const s = new SpdyServerSession(p.transport, { limits: { maxConcurrentStreams: 2 } });
    const got: number[] = [];
    s.on('stream', (st: SpdyStream) => got.push(st.id));
    const synStream = peerSynStreams();
    p.inject(Buffer.concat([synStream(1), synStream(3), synStream(5)]));
    await tick();
    expect(got).toEqual([1, 3]);
    expect(p.sent()).toEqual([{ type: 'RST_STREAM', streamId: 5, status: 3 }]);
    // and on our side, opening past the limit is a typed error
    const c = new SpdySession(pipe().transport, { limits: { maxConcurrentStreams: 1 } });
    c.openStream({ streamtype: 'error' });
    expect(() => c.openStream({ streamtype: 'stdout' })).toThrow(expect.objectContaining({ code: 'SPDY_STREAM_LIMIT' }));
  });

  it('a client refuses every stream the server opens (REFUSED_STREAM), and they never count against its own budget', async () => {
    const p = pipe();
    const s = new SpdySession(p.transport, { limits: { maxConcurrentStreams: 2 } });
    s.on('stream', () => expect.fail('a pushed stream was accepted'));
    const synStream = peerSynStreams();
    p.inject(Buffer.concat(Array.from({ length: 50 }, (_, i) => synStream(2 * (i + 1)))));
    await tick();
    expect(p.sent()).toEqual(Array.from({ length: 50 }, (_, i) => ({ type: 'RST_STREAM', streamId: 2 * (i + 1), status: 3 })));
    expect(s.peerStreamsRefused).toBe(50);
    // Its own streams still open, up to its own limit.
    expect([s.openStream({ streamtype: 'error' }).id, s.openStream({ streamtype: 'stdout' }).id]).toEqual([1, 3]);
  });

  it('ignores SETTINGS and WINDOW_UPDATE and enforces no window: 1 MiB of DATA is delivered', async () => {
    const p = pipe();
    const s = new SpdySession(p.transport);
    const st = s.openStream({ streamtype: 'data' });
    p.inject(hex('80 03 00 02 00 00 00 14 00 00 00 01 78 f9 e3 c6 a7 c2 62 60 60 60 00 00 00 00 ff ff'));
    p.inject(hex('80 03 00 04 00 00 00 0c 00 00 00 01 00 00 00 07 00 01 00 00'));
    p.inject(hex('80 03 00 09 00 00 00 08 00 00 00 01 00 00 10 00'));
    let n = 0;
    st.on('data', (c: Buffer) => (n += c.length));
    const frame = Buffer.concat([hex('00 00 00 01 00 00 80 00'), Buffer.alloc(32 * 1024, 1)]);
    for (let i = 0; i < 32; i++) p.inject(frame);
    p.inject(hex('00 00 00 01 01 00 00 00'));
    await st.remoteEnded;
    expect(n).toBe(1024 * 1024);
    expect(s.end).toBeUndefined();
  });

  it('writes DATA in chunks of at most 32 KiB, as client-go does', async () => {
    const p = pipe();
    const s = new SpdySession(p.transport);
    const st = s.openStream({ streamtype: 'stdin' });
    p.sent();
    st.write(Buffer.alloc(100 * 1024));
    await tick(); // a tick's frames leave together (cork.ts)
    const sizes = p.sent().map((f) => (f.type === 'DATA' ? f.data.length : -1));
    expect(sizes).toEqual([32768, 32768, 32768, 4096]);
  });

  it('close() as kubectl: RST(CANCEL) for streams not FIN-ed, then GOAWAY(0, OK)', async () => {
    const p = pipe();
    const s = new SpdySession(p.transport);
    const a = s.openStream({ streamtype: 'error' });
    const b = s.openStream({ streamtype: 'stdin' });
    b.end();
    await tick();
    void a;
    p.sent();
    s.close();
    expect(p.sent()).toEqual([
      { type: 'RST_STREAM', streamId: 1, status: 5 },
      { type: 'GOAWAY', lastGoodStreamId: 0, status: 0 },
    ]);
  });

  it('a GOAWAY from the peer ends the session with cause goaway', async () => {
    const p = pipe();
    const s = new SpdySession(p.transport);
    p.inject(hex('80 03 00 07 00 00 00 08 00 00 00 00 00 00 00 02'));
    expect(await s.closed).toMatchObject({ cause: 'goaway', error: { code: 'SPDY_GOAWAY', context: { status: 2 } } });
  });

  it('a malformed frame sends GOAWAY(PROTOCOL_ERROR) and ends with protocol-error', async () => {
    const p = pipe();
    const s = new SpdySession(p.transport);
    p.inject(hex('80 03 00 05 00 00 00 00')); // unknown control type 5
    expect(await s.closed).toMatchObject({ cause: 'protocol-error', error: expect.objectContaining({ code: 'SPDY_UNKNOWN_CONTROL_TYPE' }) });
    expect(p.sent()).toEqual([{ type: 'GOAWAY', lastGoodStreamId: 0, status: 1 }]);
  });
});

describe('SpdyStream reply and end waits', () => {
  const REPLY_1 = hex('80 03 00 02 00 00 00 14 00 00 00 01 78 f9 e3 c6 a7 c2 62 60 60 60 00 00 00 00 ff ff');
  const RST_1_REFUSED = hex('80 03 00 03 00 00 00 08 00 00 00 01 00 00 00 03');

  it('awaitReply and replied settle on the SYN_REPLY, before and after it arrives', async () => {
    const p = pipe();
    const st = new SpdySession(p.transport).openStream({ streamtype: 'error' });
    const waits = [st.awaitReply(5_000), st.awaitReply(5_000), st.replied];
    p.inject(REPLY_1);
    await expect(Promise.all(waits)).resolves.toEqual([undefined, undefined, {}]);
    await expect(st.awaitReply(5_000)).resolves.toBeUndefined();
    await expect(st.replied).resolves.toEqual({});
  });

  it("a peer's RST rejects every wait with the reset, and later waits at once", async () => {
    const p = pipe();
    const st = new SpdySession(p.transport).openStream({ streamtype: 'error' });
    const wait = st.awaitReply(5_000);
    const replied = st.replied;
    p.inject(RST_1_REFUSED);
    const reset = expect.objectContaining({ code: 'SPDY_STREAM_RESET', context: expect.objectContaining({ statusName: 'REFUSED_STREAM', byPeer: true }) });
    await expect(wait).rejects.toEqual(reset);
    await expect(replied).rejects.toEqual(reset);
    await expect(st.awaitReply(5_000)).rejects.toEqual(reset);
    await expect(st.remoteEnded).resolves.toBeUndefined();
  });

  it('no reply within the timeout: SPDY_REPLY_TIMEOUT naming the stream; a reply after it still resolves replied', async () => {
    const p = pipe();
    const st = new SpdySession(p.transport).openStream({ streamtype: 'error' });
    const t0 = performance.now();
    await expect(st.awaitReply(30)).rejects.toMatchObject({ code: 'SPDY_REPLY_TIMEOUT', message: 'no SYN_REPLY for stream 1 within 30 ms' });
    expect(performance.now() - t0).toBeGreaterThanOrEqual(25);
    const replied = st.replied;
    p.inject(REPLY_1);
    await expect(replied).resolves.toEqual({});
  });

  it("the session's end rejects a pending reply wait and ends the peer's side", async () => {
    const p = pipe();
    const s = new SpdySession(p.transport);
    const st = s.openStream({ streamtype: 'stdout' });
    const wait = st.awaitReply(5_000);
    const ended = st.remoteEnded;
    s.destroy();
    await expect(wait).rejects.toMatchObject({ code: 'SPDY_SESSION_CLOSED' });
    await expect(ended).resolves.toBeUndefined();
  });
});
