/**
 * The frame pool's one safety rule: memory of a frame that was not released (not yet written by the socket)
 * is never handed out again; released memory is reused (that is its point).
 */
import { beforeEach, describe, expect, it, vi } from 'vitest';
import type * as FramePool from '../../src/streaming/frame-pool.js';
import { DATA_CHUNK_BYTES, SEND_QUEUE_BYTES } from '../../src/streaming/spdy/constants.js';
import { dataFrameHeader } from '../../src/streaming/spdy/serializer.js';

const overlaps = (a: Buffer, b: Buffer) => a.buffer === b.buffer && a.byteOffset < b.byteOffset + b.length && b.byteOffset < a.byteOffset + a.length;

// The pool is the module's state: every test gets a fresh module, so none sees another's slabs.
let frameBuffer: typeof FramePool.frameBuffer;
beforeEach(async () => {
  vi.resetModules();
  ({ frameBuffer } = await import('../../src/streaming/frame-pool.js'));
});

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

  it('a sender with its whole queue in flight (SEND_QUEUE_BYTES of tunnel frames) gets its next burst from kept slabs', async () => {
    // Real tunnel frames: a 32 KiB SPDY DATA frame (DATA_CHUNK_BYTES, as a stream writes it) masked by ws-frame.ts.
    const { maskedBinaryFrame } = await import('../../src/streaming/ws-frame.js');
    const payload = Buffer.alloc(DATA_CHUNK_BYTES, 1);
    const tunnelFrame = () => maskedBinaryFrame([dataFrameHeader(1, 0, payload.length), payload]);
    const probe = tunnelFrame();
    const count = Math.ceil(SEND_QUEUE_BYTES / probe.buf.length) + 1;
    probe.release(); // the slab rewinds: the burst starts at its first byte
    const burst = () => Array.from({ length: count }, tunnelFrame);
    const first = burst();
    const slabs = new Set(first.map((f) => f.buf.buffer));
    // Eight tunnel frames to a slab (a 256 KiB one held seven).
    expect(new Set(first.slice(0, 8).map((f) => f.buf.buffer)).size).toBe(1);
    for (const f of first) f.release();
    for (let round = 0; round < 5; round++) {
      const next = burst();
      for (const f of next) expect(slabs.has(f.buf.buffer)).toBe(true);
      for (const f of next) f.release();
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
