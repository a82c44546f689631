/**
 * Fuzzing, as regression tests and properties: the committed corpus replayed
 * through the fuzz targets, and fast-check properties (seeded) for the SPDY
 * parser, the header blocks and the channel codec.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { TARGETS } from '../../fuzz/targets.js';
import { isProbeError } from '../../src/errors.js';
import { decodeChannelMessage, encodeChannelMessage } from '../../src/streaming/channel/codec.js';
import { HeaderBlockDecoder, HeaderBlockEncoder } from '../../src/streaming/spdy/header-block.js';
import { SpdyFrameParser } from '../../src/streaming/spdy/parser.js';
import { serializeFrame } from '../../src/streaming/spdy/serializer.js';
import type { SpdyFrame } from '../../src/streaming/spdy/frames.js';

const SEED = 20261202;

describe('committed fuzz corpus (replayed)', () => {
  for (const [name, target] of Object.entries(TARGETS)) {
    const dir = join('fuzz/corpus', name);
    const files = readdirSync(dir);
    it(`${name}: ${files.length} inputs, only typed errors`, () => {
      expect(files.length).toBeGreaterThan(0);
      for (const f of files) expect(() => target(readFileSync(join(dir, f))), f).not.toThrow();
    });
  }
});

const streamId = fc.integer({ min: 1, max: 0x7fffffff });
const headerName = fc.stringMatching(/^[a-z][a-z0-9-]{0,15}$/);
const headers = fc.dictionary(
  headerName,
  fc.array(
    fc.string({ minLength: 0, maxLength: 20 }).filter((s) => !s.includes('\0')),
    { minLength: 1, maxLength: 3 },
  ),
  { maxKeys: 6 },
);
const frame: fc.Arbitrary<SpdyFrame> = fc.oneof(
  fc.record({ type: fc.constant('DATA' as const), streamId, flags: fc.constantFrom(0, 1), data: fc.uint8Array({ maxLength: 300 }).map((a) => Buffer.from(a)) }),
  fc.record({
    type: fc.constant('SYN_STREAM' as const),
    streamId,
    associatedId: fc.constant(0),
    priority: fc.integer({ min: 0, max: 7 }),
    slot: fc.constant(0),
    flags: fc.constantFrom(0, 1, 2),
    headers,
  }),
  fc.record({ type: fc.constant('SYN_REPLY' as const), streamId, flags: fc.constantFrom(0, 1), headers }),
  fc.record({ type: fc.constant('RST_STREAM' as const), streamId, status: fc.integer({ min: 1, max: 11 }) }),
  fc.record({ type: fc.constant('PING' as const), id: fc.integer({ min: 1, max: 0xffffffff }) }),
  fc.record({ type: fc.constant('GOAWAY' as const), lastGoodStreamId: fc.integer({ min: 0, max: 0x7fffffff }), status: fc.integer({ min: 0, max: 2 }) }),
  fc.record({ type: fc.constant('WINDOW_UPDATE' as const), streamId, delta: fc.integer({ min: 1, max: 0x7fffffff }) }),
);

const plain = (frames: SpdyFrame[]) => JSON.parse(JSON.stringify(frames, (_k, v) => (v?.type === 'Buffer' ? Buffer.from(v.data).toString('hex') : v)));

describe('properties (fast-check, seeded)', () => {
  it('any sequence of frames, serialized on one connection, parses back identically however the bytes are chunked', () => {
    fc.assert(
      fc.property(
        fc.array(frame, { minLength: 1, maxLength: 12 }),
        fc.array(fc.integer({ min: 1, max: 64 }), { minLength: 1, maxLength: 20 }),
        (frames, cuts) => {
          const encoder = new HeaderBlockEncoder();
          const bytes = Buffer.concat(frames.map((f) => serializeFrame(f, encoder)));
          const parser = new SpdyFrameParser();
          const got: SpdyFrame[] = [];
          let off = 0;
          for (let i = 0; off < bytes.length; i++) {
            const n = cuts[i % cuts.length]!;
            got.push(...parser.push(bytes.subarray(off, off + n)));
            off += n;
          }
          expect(plain(got)).toEqual(plain(frames));
          expect(parser.bufferedBytes).toBe(0);
        },
      ),
      { seed: SEED, numRuns: 300 },
    );
  });

  it('random bytes: the parser yields frames or a typed error, never anything else, and buffers at most one frame', () => {
    const limit = 256; // far below the input size, so the bound below is one the parser could break
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 8 * limit }), (a) => {
        const parser = new SpdyFrameParser({ maxFramePayloadBytes: limit });
        try {
          parser.push(Buffer.from(a));
        } catch (err) {
          expect(isProbeError(err)).toBe(true);
        }
        expect(parser.bufferedBytes).toBeLessThanOrEqual(limit + 8);
      }),
      { seed: SEED, numRuns: 2000 },
    );
  });

  it('header blocks round-trip through one persistent zlib context per direction', () => {
    fc.assert(
      fc.property(fc.array(headers, { minLength: 1, maxLength: 8 }), (blocks) => {
        const enc = new HeaderBlockEncoder();
        const dec = new HeaderBlockDecoder({ maxHeaderBlockBytes: 1 << 20, maxHeaderPairs: 100 });
        for (const h of blocks) expect(dec.decode(enc.encode(h))).toEqual(h);
      }),
      { seed: SEED, numRuns: 200 },
    );
  });

  it('channel messages round-trip on every subprotocol, binary and base64', () => {
    fc.assert(
      fc.property(
        fc.constantFrom('v5.channel.k8s.io', 'v4.channel.k8s.io', 'v4.base64.channel.k8s.io', 'base64.channel.k8s.io'),
        fc.integer({ min: 0, max: 4 }),
        fc.uint8Array({ maxLength: 500 }),
        (protocol, channel, payload) => {
          const m = encodeChannelMessage(channel, Buffer.from(payload), protocol);
          const data = typeof m.data === 'string' ? Buffer.from(m.data, 'latin1') : m.data;
          expect(decodeChannelMessage(data, m.binary, protocol)).toEqual({ channel, payload: Buffer.from(payload) });
        },
      ),
      { seed: SEED, numRuns: 500 },
    );
  });
});
