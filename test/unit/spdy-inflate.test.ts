/**
 * Our header-block inflater against zlib itself (node:zlib) and pako: streams they write at every level,
 * strategy and window, cut into sync-flushed blocks as spdystream writes them, inflate block by block to what
 * went in; and on corrupted streams we refuse whatever zlib refuses.
 */
import { constants, createDeflate, inflateSync, type Deflate } from 'node:zlib';
import fc from 'fast-check';
import pako from 'pako';
import { describe, expect, it } from 'vitest';
import { SPDY3_DICTIONARY } from '../../src/streaming/spdy/dictionary.js';
import { InflateError, InflateLimitError, ZlibStreamInflater } from '../../src/streaming/spdy/inflate.js';

const DICT = Buffer.from(SPDY3_DICTIONARY);

/** One zlib stream, flushed (Z_SYNC_FLUSH) after each block: the bytes of each block as the peer sends them. */
async function zlibBlocks(
  blocks: Buffer[],
  opts: { level: number; strategy?: number; windowBits?: number; memLevel?: number; dictionary?: boolean; finish?: boolean },
) {
  const d: Deflate = createDeflate({
    level: opts.level,
    strategy: opts.strategy ?? constants.Z_DEFAULT_STRATEGY,
    windowBits: opts.windowBits ?? 15,
    memLevel: opts.memLevel ?? 8,
    ...(opts.dictionary === false ? {} : { dictionary: DICT }),
  });
  const chunks: Buffer[] = [];
  d.on('data', (c: Buffer) => chunks.push(c));
  const out: Buffer[] = [];
  for (const [i, b] of blocks.entries()) {
    if (opts.finish && i === blocks.length - 1) {
      await new Promise((r) => {
        d.once('end', r);
        d.end(b);
      });
    } else {
      d.write(b);
      await new Promise<void>((r) => d.flush(constants.Z_SYNC_FLUSH, () => r()));
      await new Promise((r) => setImmediate(r));
    }
    out.push(Buffer.concat(chunks.splice(0)));
  }
  return out;
}

/** Header-like text: names and values repeat across blocks, as Kubernetes' do (so later blocks refer back). */
const headerish = fc
  .array(fc.constantFrom('streamtype', 'error', 'stdin', 'stdout', 'port', '8080', 'requestid', 'data', 'v4.channel.k8s.io', '\0', 'x'), {
    minLength: 1,
    maxLength: 30,
  })
  .map((words) => Buffer.from(words.join(''), 'latin1'));

describe('ZlibStreamInflater', () => {
  it('inflates node:zlib streams block by block: every level, strategy and window, with and without the dictionary', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(
          fc.oneof(
            headerish,
            fc.uint8Array({ minLength: 0, maxLength: 400 }).map((a) => Buffer.from(a)),
          ),
          { minLength: 1, maxLength: 8 },
        ),
        fc.integer({ min: 0, max: 9 }),
        fc.constantFrom(constants.Z_DEFAULT_STRATEGY, constants.Z_FILTERED, constants.Z_HUFFMAN_ONLY, constants.Z_RLE, constants.Z_FIXED),
        fc.integer({ min: 9, max: 15 }),
        fc.boolean(),
        fc.boolean(),
        async (blocks, level, strategy, windowBits, dictionary, finish) => {
          const wire = await zlibBlocks(blocks, { level, strategy, windowBits, dictionary, finish });
          const inf = new ZlibStreamInflater(DICT);
          for (const [i, w] of wire.entries()) expect(inf.push(w, 1 << 20)).toEqual(blocks[i]);
        },
      ),
      { numRuns: 300 },
    );
  });

  it('inflates pako streams (one block, finished) and a long stream that slides past its window', async () => {
    const one = Buffer.from('streamtype\0stdout'.repeat(3));
    expect(new ZlibStreamInflater(DICT).push(Buffer.from(pako.deflate(one, { dictionary: new Uint8Array(DICT) })), 1024)).toEqual(one);
    // 600 blocks of 200 bytes: 120 KB through a 32 KiB window, distances reaching back across blocks.
    const blocks = Array.from({ length: 600 }, (_, i) =>
      Buffer.from(`requestid\0${i % 37}\0port\0${8000 + (i % 11)}\0`.padEnd(200, String.fromCharCode(97 + (i % 26)))),
    );
    // Runs: matches of every length up to 258 (length codes 257..285).
    for (let n = 3; n <= 300; n += 7) blocks.push(Buffer.from(`${'z'.repeat(n)}|${'y'.repeat(n + 1)}|`));
    const wire = await zlibBlocks(blocks, { level: 9 });
    const inf = new ZlibStreamInflater(DICT);
    const held = () => (inf as unknown as { out: Buffer }).out.length;
    for (const [i, w] of wire.entries()) {
      expect(inf.push(w, 1024)).toEqual(blocks[i]);
      // What a session keeps: a few hundred bytes after an exec's handful of blocks, never much past the window.
      if (i === 4) expect(held()).toBeLessThanOrEqual(2048);
      expect(held()).toBeLessThanOrEqual(32 * 1024 + 4096 + 1024);
    }
  });

  it('stops a zlib bomb at the first byte past the limit', () => {
    const bomb = Buffer.from(pako.deflate(Buffer.alloc(16 * 1024 * 1024)));
    const inf = new ZlibStreamInflater(DICT);
    let err: unknown;
    try {
      inf.push(bomb, 64 * 1024);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(InflateLimitError);
    expect((err as InflateLimitError).produced).toBeGreaterThan(64 * 1024);
    expect((err as InflateLimitError).produced).toBeLessThanOrEqual(64 * 1024 + 258);
  });

  it('refuses what zlib refuses: corrupted streams (one byte changed, or cut short)', async () => {
    const blocks = [Buffer.from('\0\0\0\x01\0\0\0\x0astreamtype\0\0\0\x05error'), Buffer.from('\0\0\0\x01\0\0\0\x0astreamtype\0\0\0\x06stdout')];
    const cases: Array<{ level: number; finish: boolean }> = [
      { level: 9, finish: true },
      { level: 1, finish: false },
      { level: 0, finish: true },
    ];
    let refusedByBoth = 0;
    for (const c of cases) {
      const wire = Buffer.concat(await zlibBlocks(blocks, { ...c }));
      await fc.assert(
        fc.property(fc.nat({ max: wire.length - 1 }), fc.integer({ min: 1, max: 255 }), fc.boolean(), (at, xor, cut) => {
          const input = Buffer.from(cut ? wire.subarray(0, at) : wire);
          if (!cut) input[at] = input[at]! ^ xor;
          let zlibOut: Buffer | Error;
          try {
            zlibOut = inflateSync(input, { dictionary: DICT, finishFlush: constants.Z_SYNC_FLUSH });
          } catch (e) {
            zlibOut = e as Error;
          }
          let ours: Buffer | Error;
          try {
            ours = new ZlibStreamInflater(DICT).push(input, 1 << 20);
          } catch (e) {
            ours = e as Error;
          }
          if (zlibOut instanceof Error) {
            // zlib refuses: so do we, with our typed error.
            expect(ours).toBeInstanceOf(InflateError);
            refusedByBoth++;
          } else if (!(ours instanceof Error)) expect(ours).toEqual(zlibOut);
          // zlib hands out what it has when the input ends mid-block (it waits for more); a header block must end
          // in a flush, so we refuse, at the latest where zlib stopped. Never different bytes than zlib's.
          else expect(ours).toBeInstanceOf(InflateError);
        }),
        { numRuns: 300 },
      );
    }
    expect(refusedByBoth).toBeGreaterThan(100);
  });

  it('on arbitrary deflate bodies (every block type, code set and distance) it accepts only what zlib accepts, with its bytes', () => {
    let refused = 0;
    fc.assert(
      fc.property(fc.uint8Array({ minLength: 1, maxLength: 200 }), (body) => {
        // A zlib header without a dictionary, then random bits: dynamic blocks with random code sets (over-subscribed,
        // incomplete, one-bit), fixed blocks with codes 286/287 and distances 30/31, stored blocks with bad lengths.
        const input = Buffer.concat([Buffer.from([0x78, 0x01]), body]);
        let zlibOut: Buffer | Error;
        try {
          zlibOut = inflateSync(input, { finishFlush: constants.Z_SYNC_FLUSH });
        } catch (e) {
          zlibOut = e as Error;
        }
        let ours: Buffer | Error;
        try {
          ours = new ZlibStreamInflater(DICT).push(input, 1 << 20);
        } catch (e) {
          ours = e as Error;
        }
        if (zlibOut instanceof Error) {
          expect(ours).toBeInstanceOf(InflateError);
          refused++;
        } else if (!(ours instanceof Error)) {
          expect(ours).toEqual(zlibOut);
        } else expect(ours).toBeInstanceOf(InflateError);
      }),
      { numRuns: 3000, seed: 20261204 },
    );
    // Random bits almost never make a complete, flushed stream: the point is that none zlib refuses gets through.
    expect(refused).toBeGreaterThan(500);
  });

  it('code sets: an incomplete code passes only as a single one-bit code, as in zlib (hand-built dynamic blocks)', () => {
    /** One dynamic block holding "a", then the sync-flush marker; litlen gives the lengths of 'a' and 256. */
    const block = (litA: number, lit256: number, distances: number[]) => {
      const out: number[] = [];
      let acc = 0;
      let n = 0;
      const bits = (v: number, count: number) => {
        for (let i = 0; i < count; i++) {
          acc |= ((v >> i) & 1) << n++;
          if (n === 8) out.push(acc), (acc = 0), (n = 0);
        }
      };
      const code = (v: number, len: number) => {
        for (let i = len - 1; i >= 0; i--) bits((v >> i) & 1, 1);
      };
      bits(0, 1), bits(2, 2); // not last, dynamic
      bits(0, 5), bits(distances.length - 1, 5), bits(18 - 4, 4); // 257 literal/length codes, 18 code-length codes
      // Code-length code: 0, 1, 2 and 18 of two bits each (canonical 00, 01, 10, 11), in RFC 1951's order.
      const order = [16, 17, 18, 0, 8, 7, 9, 6, 10, 5, 11, 4, 12, 3, 13, 2, 14, 1];
      for (const sym of order) bits([0, 1, 2, 18].includes(sym) ? 2 : 0, 3);
      const cl = (len: number) => code(len, 2); // lengths 0, 1, 2 are codes 00, 01, 10
      const zeros = (k: number) => (code(3, 2), bits(k - 11, 7)); // symbol 18: 11..138 zeros
      zeros(97), cl(litA), zeros(138), zeros(20), cl(lit256);
      for (const d of distances) cl(d);
      // "a" then end of block: canonical codes from the two lengths.
      const [ca, c256] = litA <= lit256 ? [0, litA === lit256 ? 1 : 2] : [2, 0];
      code(ca, litA), code(c256, lit256);
      bits(0, 3); // stored, empty: the sync flush
      if (n) out.push(acc);
      return Buffer.concat([Buffer.from([0x78, 0x01]), Buffer.from(out), Buffer.from([0, 0, 0xff, 0xff])]);
    };
    const verdicts = (input: Buffer) => {
      const run = (f: () => Buffer) => {
        try {
          return f().toString('latin1');
        } catch (e) {
          return e instanceof InflateError ? 'refused' : `crash ${(e as Error).message}`;
        }
      };
      return { zlib: run(() => inflateSync(input, { finishFlush: constants.Z_SYNC_FLUSH })), ours: run(() => new ZlibStreamInflater(DICT).push(input, 1024)) };
    };
    const zlibRefuses = (input: Buffer) => {
      try {
        inflateSync(input, { finishFlush: constants.Z_SYNC_FLUSH });
        return false;
      } catch {
        return true;
      }
    };
    // Complete codes, and a single one-bit distance code: zlib inflates them, and so do we.
    for (const [a, e, d] of [
      [1, 1, [1]],
      [1, 1, [1, 1]],
      [1, 1, [0]],
    ] as const) {
      expect(verdicts(block(a, e, [...d]))).toEqual({ zlib: 'a', ours: 'a' });
    }
    // Incomplete otherwise (two 2-bit distance codes; a 1-bit and a 2-bit literal code): zlib refuses, so do we.
    for (const input of [block(1, 1, [2, 2]), block(1, 2, [1]), block(2, 2, [1])]) {
      expect(zlibRefuses(input)).toBe(true);
      expect(verdicts(input).ours).toBe('refused');
    }
  });

  it('names what is wrong: header, dictionary, trailer, data after the end', () => {
    const push = (b: Buffer) => () => new ZlibStreamInflater(DICT).push(b, 1024);
    expect(push(Buffer.from([0x78, 0x02]))).toThrow(/header check/);
    expect(push(Buffer.from([0x79, 0x9c]))).toThrow(/compression method/);
    expect(push(Buffer.from([0x78, 0xbb, 0, 0, 0, 1]))).toThrow(/dictionary 1, not SPDY\/3's/);
    const finished = Buffer.from(pako.deflate(Buffer.from('abc')));
    const wrongCheck = Buffer.from(finished);
    wrongCheck[wrongCheck.length - 1]! ^= 1;
    expect(push(wrongCheck)).toThrow(/Adler-32/);
    expect(push(Buffer.concat([finished, Buffer.from([0x03, 0x00])]))).toThrow(/after the end/);
    // Without FDICT the dictionary is not there to refer to (zlib: "invalid distance too far back").
    const noDict = Buffer.from(pako.deflate(Buffer.from('streamtype'), { dictionary: new Uint8Array(DICT) }));
    expect(() => inflateSync(Buffer.concat([Buffer.from([0x78, 0x9c]), noDict.subarray(6)]))).toThrow(/too far back/);
    expect(push(Buffer.concat([Buffer.from([0x78, 0x9c]), noDict.subarray(6)]))).toThrow(/too far back/);
  });
});
