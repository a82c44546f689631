/**
 * The frame pool's one safety rule: memory of a frame that was not released (not yet written by the socket)
 * is never handed out again; released memory is reused (that is its point).
 */
import { describe, expect, it } from 'vitest';
import { frameBuffer } from '../../src/streaming/frame-pool.js';

const overlaps = (a: Buffer, b: Buffer) => a.buffer === b.buffer && a.byteOffset < b.byteOffset + b.length && b.byteOffset < a.byteOffset + a.length;

describe('frame pool', () => {
  it('never hands out memory of a frame still being written, across many slabs', () => {
    const live = Array.from({ length: 40 }, (_, i) => {
      const f = frameBuffer(32 * 1024 + 14);
      f.buf.fill(i);
      return f;
    });
    for (let i = 0; i < live.length; i++) {
      for (let j = i + 1; j < live.length; j++) expect(overlaps(live[i]!.buf, live[j]!.buf), `${i} and ${j}`).toBe(false);
      expect(
        live[i]!.buf.every((b) => b === i),
        `frame ${i} intact`,
      ).toBe(true);
    }
    // Release every other frame; new frames must not land on the ones still held.
    live.forEach((f, i) => i % 2 === 0 && f.release());
    const held = live.filter((_, i) => i % 2 === 1);
    for (let k = 0; k < 40; k++) {
      const f = frameBuffer(20 * 1024);
      for (const h of held) expect(overlaps(f.buf, h.buf)).toBe(false);
    }
    held.forEach((h, k) => expect(h.buf.every((b) => b === 2 * k + 1)).toBe(true));
  });

  it('reuses memory once its frames were released (a steady transfer allocates no new slabs)', () => {
    const first = frameBuffer(32 * 1024);
    const slab = first.buf.buffer;
    first.release();
    for (let k = 0; k < 100; k++) {
      const f = frameBuffer(32 * 1024);
      expect(f.buf.buffer).toBe(slab);
      f.release();
    }
  });

  it('a double release does not free a frame twice', () => {
    const a = frameBuffer(8 * 1024);
    const b = frameBuffer(8 * 1024);
    a.release();
    a.release(); // must not count for b
    const c = frameBuffer(16 * 1024); // were the slab rewound, this would cover b
    expect(overlaps(c.buf, b.buf)).toBe(false);
  });

  it('small and oversized frames are plain buffers (an idle session pins no slab)', () => {
    expect(frameBuffer(100).buf.buffer.byteLength).toBeLessThan(64 * 1024);
    expect(frameBuffer(300 * 1024).buf.length).toBe(300 * 1024);
  });
});
