import { createHash } from 'node:crypto';
import pako from 'pako';
import { describe, expect, it } from 'vitest';
import { SPDY3_DICTIONARY } from '../../src/streaming/spdy/dictionary.js';
import { SpdyFrameParser } from '../../src/streaming/spdy/parser.js';
import { encodePlainHeaderBlock } from '../../src/streaming/spdy/header-block.js';
import type { SpdyFrame } from '../../src/streaming/spdy/frames.js';

const hex = (s: string) => Buffer.from(s.replace(/\s+/g, ''), 'hex');

// Produced by moby/spdystream v0.5.0 with Go's zlib (k8s-streaming-protocols.md 3.4):
// independent of our serializer.
const CLIENT_STREAM = hex(`
  80 03 00 01 00 00 00 29  00 00 00 01 00 00 00 00  00 00 78 f9 e3 c6 a7 c2  62 60 60 60 04 a7 b3 92
  a2 d4 c4 5c 68 51 c2 9a  0a 0a 68 00 00 00 00 ff  ff
  80 03 00 01 00 00 00 19  00 00 00 03 00 00 00 00  00 00 c2 2a c5 56 5c 92  92 5f 5a 02 00 00 00 ff ff
  00 00 00 01 01 00 00 00
  00 00 00 03 00 00 00 03 68 69 0a
  80 03 00 06 00 00 00 04 00 00 00 01
  80 03 00 07 00 00 00 08 00 00 00 00 00 00 00 00
  80 03 00 03 00 00 00 08 00 00 00 03 00 00 00 05`);
const SERVER_STREAM = hex(`
  80 03 00 02 00 00 00 14  00 00 00 01 78 f9 e3 c6  a7 c2 62 60 60 60 00 00  00 00 ff ff
  80 03 00 02 00 00 00 0c  00 00 00 03 02 61 00 00  00 00 ff ff`);

const EXPECTED_CLIENT: SpdyFrame[] = [
  { type: 'SYN_STREAM', streamId: 1, associatedId: 0, priority: 0, slot: 0, flags: 0, headers: { streamtype: ['error'] } },
  { type: 'SYN_STREAM', streamId: 3, associatedId: 0, priority: 0, slot: 0, flags: 0, headers: { streamtype: ['stdout'] } },
  { type: 'DATA', streamId: 1, flags: 1, data: Buffer.alloc(0) },
  { type: 'DATA', streamId: 3, flags: 0, data: Buffer.from('hi\n') },
  { type: 'PING', id: 1 },
  { type: 'GOAWAY', lastGoodStreamId: 0, status: 0 },
  { type: 'RST_STREAM', streamId: 3, status: 5 },
];

function plain(frames: SpdyFrame[]): unknown[] {
  return frames.map((f) => JSON.parse(JSON.stringify(f, (_k, v) => (v?.type === 'Buffer' ? Buffer.from(v.data).toString('hex') : v))));
}

function feed(chunks: Buffer[], parser = new SpdyFrameParser()): SpdyFrame[] {
  return chunks.flatMap((c) => parser.push(c));
}

/** Hand-built control frame, independent of the serializer. */
function control(type: number, flags: number, payload: Buffer): Buffer {
  const h = Buffer.alloc(8);
  h.writeUInt32BE((0x80030000 | type) >>> 0, 0);
  h.writeUInt32BE(((flags << 24) | payload.length) >>> 0, 4);
  return Buffer.concat([h, payload]);
}
function data(streamId: number, flags: number, payload: Buffer): Buffer {
  const h = Buffer.alloc(8);
  h.writeUInt32BE(streamId, 0);
  h.writeUInt32BE(((flags << 24) | payload.length) >>> 0, 4);
  return Buffer.concat([h, payload]);
}
function compress(plainBlock: Buffer): Buffer {
  return Buffer.from(pako.deflate(plainBlock, { dictionary: new Uint8Array(SPDY3_DICTIONARY) }));
}
function synStream(id: number, block: Buffer): Buffer {
  const fixed = Buffer.alloc(10);
  fixed.writeUInt32BE(id, 0);
  return control(1, 0, Buffer.concat([fixed, block]));
}

describe('SpdyFrameParser streaming DATA (what a session uses)', () => {
  const payload = Buffer.from(Array.from({ length: 300 }, (_, i) => i & 0xff));
  const bytes = Buffer.concat([data(1, 0, payload.subarray(0, 100)), data(3, 1, payload), data(5, 1, Buffer.alloc(0)), control(6, 0, hex('00000002'))]);

  it('hands DATA on as it arrives, views of the chunks, FIN only on the last piece; the pieces join to the frames', () => {
    for (let i = 0; i <= bytes.length; i += 7) {
      for (const j of [i, Math.min(bytes.length, i + 150)]) {
        const chunks = [bytes.subarray(0, i), bytes.subarray(i, j), bytes.subarray(j)].map((c) => Buffer.from(c));
        const parser = new SpdyFrameParser({}, { streamData: true });
        const got = chunks.map((c) => ({ chunk: c, frames: parser.push(c) }));
        const frames = got.flatMap((g) => g.frames);
        for (const g of got) {
          for (const f of g.frames) if (f.type === 'DATA' && f.data.length > 0) expect(f.data.buffer, 'a view, not a copy').toBe(g.chunk.buffer);
        }
        const stream3 = frames.filter((f) => f.type === 'DATA' && f.streamId === 3) as Extract<SpdyFrame, { type: 'DATA' }>[];
        expect(Buffer.concat(stream3.map((f) => f.data)).equals(payload), `cut at ${i}, ${j}`).toBe(true);
        expect(stream3.map((f) => f.flags & 1)).toEqual([...stream3.slice(1).map(() => 0), 1]);
        expect(stream3.slice(0, -1).every((f) => f.partial)).toBe(true);
        expect(stream3.at(-1)!.partial).toBeUndefined();
        expect(frames.filter((f) => f.type === 'DATA' && f.streamId === 5)).toEqual([{ type: 'DATA', streamId: 5, flags: 1, data: Buffer.alloc(0) }]);
        expect(frames.at(-1)).toEqual({ type: 'PING', id: 2 });
      }
    }
  });

  it("DATA on stream 0 fails at its header, with the whole parser's error", () => {
    const bad = data(0, 0, Buffer.alloc(50));
    const parser = new SpdyFrameParser({}, { streamData: true });
    expect(() => parser.push(bad.subarray(0, 8))).toThrow(expect.objectContaining({ code: 'SPDY_BAD_FRAME', message: 'DATA frame at byte 0: stream id 0' }));
    expect(() => new SpdyFrameParser().push(bad)).toThrow(expect.objectContaining({ code: 'SPDY_BAD_FRAME', message: 'DATA frame at byte 0: stream id 0' }));
  });

  it('refuses a DATA frame over the limit at its header, before any of it is handed on', () => {
    const parser = new SpdyFrameParser({ maxFramePayloadBytes: 64 }, { streamData: true });
    expect(() => parser.push(data(1, 0, Buffer.alloc(65)).subarray(0, 20))).toThrow(expect.objectContaining({ code: 'SPDY_FRAME_TOO_LARGE' }));
  });
});

describe('SPDY/3 dictionary', () => {
  it('matches the digests of spdystream dictionary.go', () => {
    expect(SPDY3_DICTIONARY.length).toBe(1423);
    expect(createHash('sha256').update(SPDY3_DICTIONARY).digest('hex')).toBe('51d27341373f923f3cd88e1eb7162aeaa3723d7585ff2399201dc06498407f02');
  });
});

describe('SpdyFrameParser known answers (Go-produced bytes)', () => {
  it('decodes the client stream whole', () => {
    expect(plain(feed([CLIENT_STREAM]))).toEqual(plain(EXPECTED_CLIENT));
  });

  it('gives the same frames byte by byte', () => {
    const bytes = [...CLIENT_STREAM].map((b) => Buffer.from([b]));
    expect(plain(feed(bytes))).toEqual(plain(EXPECTED_CLIENT));
  });

  it('gives the same frames split at every offset', () => {
    for (let i = 0; i <= CLIENT_STREAM.length; i++) {
      const got = feed([CLIENT_STREAM.subarray(0, i), CLIENT_STREAM.subarray(i)]);
      expect(plain(got), `split at ${i}`).toEqual(plain(EXPECTED_CLIENT));
    }
  });

  it('decodes the server SYN_REPLYs with a persistent inflater', () => {
    expect(feed([SERVER_STREAM])).toEqual([
      { type: 'SYN_REPLY', streamId: 1, flags: 0, headers: {} },
      { type: 'SYN_REPLY', streamId: 3, flags: 0, headers: {} },
    ]);
  });

  it('ignores nothing it should not: SETTINGS, WINDOW_UPDATE and HEADERS parse', () => {
    const settings = control(4, 0, hex('00000001 00000007 00010000'));
    const wu = control(9, 0, hex('00000001 00001000'));
    expect(feed([settings, wu])).toEqual([
      { type: 'SETTINGS', flags: 0, entries: [{ flags: 0, id: 7, value: 65536 }] },
      { type: 'WINDOW_UPDATE', streamId: 1, delta: 4096 },
    ]);
  });
});

describe('SpdyFrameParser rejects what spdystream rejects', () => {
  const cases: Array<[string, Buffer, string]> = [
    ['unknown control type 5', control(5, 0, Buffer.alloc(4)), 'SPDY_UNKNOWN_CONTROL_TYPE'],
    ['unknown control type 10', control(10, 0, Buffer.alloc(4)), 'SPDY_UNKNOWN_CONTROL_TYPE'],
    ['DATA on stream 0', data(0, 0, Buffer.from('x')), 'SPDY_BAD_FRAME'],
    ['RST on stream 0', control(3, 0, hex('00000000 00000005')), 'SPDY_BAD_FRAME'],
    ['RST status 0', control(3, 0, hex('00000001 00000000')), 'SPDY_BAD_FRAME'],
    ['PING id 0', control(6, 0, hex('00000000')), 'SPDY_BAD_FRAME'],
    ['PING flags 1', control(6, 1, hex('00000001')), 'SPDY_BAD_FRAME'],
    ['GOAWAY length 4', control(7, 0, hex('00000000')), 'SPDY_BAD_FRAME'],
    ['GOAWAY flags 1', control(7, 1, hex('00000000 00000000')), 'SPDY_BAD_FRAME'],
    ['WINDOW_UPDATE length 12', control(9, 0, hex('00000001 00000001 00000000')), 'SPDY_BAD_FRAME'],
    ['SYN_STREAM shorter than 10', control(1, 0, hex('00000001')), 'SPDY_BAD_FRAME'],
    ['version 2', Buffer.concat([hex('80020006 00000004'), hex('00000001')]), 'SPDY_BAD_VERSION'],
    ['upper-case header name', synStream(1, compress(encodeRaw([['StreamType', 'error']]))), 'SPDY_HEADER_BLOCK'],
    [
      'duplicated header name',
      synStream(
        1,
        compress(
          encodeRaw([
            ['a', '1'],
            ['a', '2'],
          ]),
        ),
      ),
      'SPDY_HEADER_BLOCK',
    ],
    ['header block with trailing bytes', synStream(1, compress(Buffer.concat([encodePlainHeaderBlock({ a: ['1'] }), Buffer.from([0])]))), 'SPDY_HEADER_BLOCK'],
    ['header count larger than the block', synStream(1, compress(hex('00000005 00000001 61'))), 'SPDY_HEADER_BLOCK'],
    ['name length past the block', synStream(1, compress(hex('00000001 000000ff 61 00000000'))), 'SPDY_HEADER_BLOCK'],
    ['header block that is not zlib', synStream(1, Buffer.from('not zlib at all')), 'SPDY_HEADER_BLOCK'],
  ];
  for (const [name, bytes, code] of cases) {
    it(`${name} → ${code}, with the byte offset`, () => {
      const parser = new SpdyFrameParser();
      const prefix = data(1, 0, Buffer.from('ok'));
      expect(parser.push(prefix)).toHaveLength(1);
      let err: unknown;
      try {
        parser.push(bytes);
      } catch (e) {
        err = e;
      }
      expect(err).toMatchObject({ code, context: expect.objectContaining({ offset: expect.any(Number) }) });
      // A failed parser stays failed; it never resynchronises on garbage.
      expect(() => parser.push(data(1, 0, Buffer.from('x')))).toThrow();
      // A fresh parser still decodes a valid frame afterwards.
      expect(new SpdyFrameParser().push(data(1, 0, Buffer.from('x')))).toHaveLength(1);
    });
  }
});

function encodeRaw(pairs: Array<[string, string]>): Buffer {
  const parts = [Buffer.alloc(4)];
  parts[0]!.writeUInt32BE(pairs.length);
  for (const [n, v] of pairs) {
    const nb = Buffer.from(n);
    const vb = Buffer.from(v);
    const nl = Buffer.alloc(4);
    nl.writeUInt32BE(nb.length);
    const vl = Buffer.alloc(4);
    vl.writeUInt32BE(vb.length);
    parts.push(nl, nb, vl, vb);
  }
  return Buffer.concat(parts);
}

describe('SpdyFrameParser limits: at the limit passes, one past fails', () => {
  it('maxFramePayloadBytes, refused from the 8-byte header before buffering', () => {
    const limit = 1000;
    expect(new SpdyFrameParser({ maxFramePayloadBytes: limit }).push(data(1, 0, Buffer.alloc(limit)))).toHaveLength(1);
    const p = new SpdyFrameParser({ maxFramePayloadBytes: limit });
    // Only the header is given: the refusal must not wait for the payload.
    expect(() => p.push(data(1, 0, Buffer.alloc(limit + 1)).subarray(0, 8))).toThrow(expect.objectContaining({ code: 'SPDY_FRAME_TOO_LARGE' }));
  });

  it('maxHeaderPairs', () => {
    const pairs = (n: number) => Array.from({ length: n }, (_, i): [string, string] => [`h${i}`, 'v']);
    expect(new SpdyFrameParser({ maxHeaderPairs: 4 }).push(synStream(1, compress(encodeRaw(pairs(4)))))).toHaveLength(1);
    expect(() => new SpdyFrameParser({ maxHeaderPairs: 4 }).push(synStream(1, compress(encodeRaw(pairs(5)))))).toThrow(
      expect.objectContaining({ code: 'SPDY_HEADER_LIMIT' }),
    );
  });

  it('maxHeaderBlockBytes (inflated size)', () => {
    const block = (valueLen: number) => encodeRaw([['a', 'x'.repeat(valueLen)]]);
    const atLimit = block(100);
    expect(new SpdyFrameParser({ maxHeaderBlockBytes: atLimit.length }).push(synStream(1, compress(atLimit)))).toHaveLength(1);
    expect(() => new SpdyFrameParser({ maxHeaderBlockBytes: atLimit.length }).push(synStream(1, compress(block(101))))).toThrow(
      expect.objectContaining({ code: 'SPDY_HEADER_LIMIT' }),
    );
  });

  it('maxSettingsEntries', () => {
    const settings = (n: number) => {
      const b = Buffer.alloc(4 + n * 8);
      b.writeUInt32BE(n, 0);
      return control(4, 0, b);
    };
    expect(new SpdyFrameParser({ maxSettingsEntries: 3 }).push(settings(3))).toHaveLength(1);
    expect(() => new SpdyFrameParser({ maxSettingsEntries: 3 }).push(settings(4))).toThrow(expect.objectContaining({ code: 'SPDY_HEADER_LIMIT' }));
  });

  it('refuses a zlib bomb fast and with bounded memory', () => {
    // 64 MiB of zeros compress to about 64 KiB: a tiny frame that would inflate enormously.
    const bomb = compress(Buffer.alloc(64 * 1024 * 1024));
    expect(bomb.length).toBeLessThan(128 * 1024);
    const before = process.memoryUsage().arrayBuffers;
    const t0 = performance.now();
    expect(() => new SpdyFrameParser().push(synStream(1, bomb))).toThrow(expect.objectContaining({ code: 'SPDY_HEADER_LIMIT' }));
    const elapsed = performance.now() - t0;
    const grown = process.memoryUsage().arrayBuffers - before;
    // Generous bounds: the point is "stopped at the first chunk", not a timing target.
    expect(grown).toBeLessThan(8 * 1024 * 1024);
    expect(elapsed).toBeLessThan(2000);
  });
});

describe('header-block encoder (stored blocks by default)', () => {
  it('writes every byte of the plain block it sizes (names lower-cased, values NUL-joined, any Unicode)', async () => {
    const fc = (await import('fast-check')).default;
    fc.assert(
      fc.property(fc.dictionary(fc.string({ unit: 'binary', minLength: 1 }), fc.array(fc.string({ unit: 'binary' }), { minLength: 1, maxLength: 3 })), (h) => {
        // The wire format spelled out piece by piece (count, then length-prefixed name and value per pair).
        const u32 = (n: number) => {
          const b = Buffer.alloc(4);
          b.writeUInt32BE(n);
          return b;
        };
        const pairs = Object.entries(h).flatMap(([k, v]) => {
          const name = Buffer.from(k.toLowerCase(), 'utf8');
          const value = Buffer.from(v.join('\0'), 'utf8');
          return [u32(name.length), name, u32(value.length), value];
        });
        // Node's pool memory dirtied first: a byte the encoder sized but did not write would show.
        Buffer.allocUnsafe(4096).fill(0xa5);
        expect(encodePlainHeaderBlock(h)).toEqual(Buffer.concat([u32(Object.keys(h).length), ...pairs]));
      }),
      { numRuns: 300 },
    );
  });

  it('produces one zlib stream that node:zlib (independent of pako) inflates block by block', async () => {
    const { HeaderBlockEncoder } = await import('../../src/streaming/spdy/header-block.js');
    const { inflateSync, constants } = await import('node:zlib');
    const enc = new HeaderBlockEncoder();
    const blocks: Array<Record<string, string[]>> = [
      { streamtype: ['error'] },
      { streamtype: ['data'], port: ['8080'], requestid: ['0'] },
      { big: ['x'.repeat(70_000)] },
    ];
    const wire = Buffer.concat(blocks.map((h) => enc.encode(h)));
    expect(wire.subarray(0, 2)).toEqual(Buffer.from([0x78, 0x01]));
    // Every block ends with the sync-flush marker Go's flate needs to hand the block out (see the encoder).
    expect(enc.encode({ a: ['1'] }).subarray(-5)).toEqual(Buffer.from([0x00, 0x00, 0x00, 0xff, 0xff]));
    const plainAll = inflateSync(wire, { finishFlush: constants.Z_SYNC_FLUSH });
    expect(plainAll).toEqual(Buffer.concat(blocks.map((h) => encodePlainHeaderBlock(h))));
  });

  it('compresses with pako when a level is asked for, and both decode through our parser', async () => {
    const { HeaderBlockEncoder, HeaderBlockDecoder } = await import('../../src/streaming/spdy/header-block.js');
    for (const level of [0, 6, 9]) {
      const enc = new HeaderBlockEncoder({ level });
      const dec = new HeaderBlockDecoder({ maxHeaderBlockBytes: 1 << 20, maxHeaderPairs: 10 });
      for (const h of [{ a: ['1'] }, { streamtype: ['stdout'] }, { a: ['1'], b: ['2', '3'] }] as Array<Record<string, string[]>>)
        expect(dec.decode(enc.encode(h))).toEqual(h);
    }
  });
});
