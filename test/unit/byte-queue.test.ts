/**
 * The received-bytes queue under both frame readers: whatever the chunks and however bytes are taken, they come
 * out in order and complete, views are views of the chunks (no copy), and `consumed` is the stream offset.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ByteQueue } from '../../src/streaming/byte-queue.js';

describe('ByteQueue', () => {
  it('gives back every byte in order, by views and takes of any size, with the right offsets', () => {
    fc.assert(
      fc.property(
        fc.array(fc.uint8Array({ minLength: 1, maxLength: 50 }), { minLength: 1, maxLength: 8 }),
        fc.array(fc.tuple(fc.boolean(), fc.integer({ min: 0, max: 80 })), { maxLength: 20 }),
        (raw, ops) => {
          const chunks = raw.map((c) => Buffer.from(c));
          const all = Buffer.concat(chunks);
          const q = new ByteQueue();
          for (const c of chunks) q.push(c);
          q.push(Buffer.alloc(0));
          expect(q.length).toBe(all.length);
          const out: Buffer[] = [];
          for (const [asView, size] of ops) {
            if (q.length === 0) break;
            const at = q.consumed;
            expect(q.byteAt(0)).toBe(all[at]);
            const n = Math.min(size, q.length);
            const got = asView ? q.view(Math.max(1, n)) : q.take(n);
            if (asView) expect(chunks.some((c) => c.buffer === got.buffer)).toBe(true);
            expect(got.equals(all.subarray(at, at + got.length))).toBe(true);
            expect(q.consumed).toBe(at + got.length);
            out.push(got);
          }
          out.push(q.take(q.length));
          expect(Buffer.concat(out).equals(all)).toBe(true);
          expect(q.length).toBe(0);
        },
      ),
      { seed: 20261205, numRuns: 500 },
    );
  });

  it('byteAt past the queued bytes is a RangeError, and clear keeps nothing', () => {
    const q = new ByteQueue();
    q.push(Buffer.from([1, 2]));
    expect(() => q.byteAt(2)).toThrow(RangeError);
    q.clear();
    expect(q.length).toBe(0);
  });
});
