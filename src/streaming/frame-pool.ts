/**
 * Memory for outgoing masked WebSocket frames, reused once the socket has written them. A client must copy
 * every byte it sends to mask it (ws-frame.ts); a fresh 32 KiB buffer per frame made the garbage collector
 * the largest cost of a bulk transfer through the tunnel (15 % of our process in a CPU profile): V8 counts
 * each buffer as external memory and collects the whole heap to free them. Frames are carved from slabs of
 * eight tunnel frames (8 × 32,784 bytes); a slab is rewound or kept for reuse once every frame in it was written. Frames under 4 KiB (pings,
 * control frames, an idle session's traffic) come from Node's own pool and pin nothing.
 */
import { DATA_CHUNK_BYTES, FRAME_HEADER_BYTES, SEND_QUEUE_BYTES } from './spdy/constants.js';

/**
 * A tunnel DATA frame at its largest, 8-aligned as frames are carved: 32 KiB and SPDY's 8-byte header inside a
 * masked WebSocket frame's header (2 bytes, a 16-bit length and the 4-byte key: 8 bytes below 64 KiB).
 */
const LARGEST_TUNNEL_FRAME = (DATA_CHUNK_BYTES + FRAME_HEADER_BYTES + 8 + 7) & ~7;
/** Eight of them to a slab (a 256 KiB slab held seven, leaving an eighth of it unused). */
const SLAB_BYTES = 8 * LARGEST_TUNNEL_FRAME;
const POOLED_MIN_BYTES = 4 * 1024;
/**
 * Slabs kept for reuse beyond the one in use: as many as a sender may have queued and not yet written (it waits
 * past SEND_QUEUE_BYTES), so a steady transfer allocates none. With two kept, half the slabs of a 64 MiB tunnel
 * transfer were new (128 of 256 KiB each), their memory the external allocation that drives V8's full collections.
 * At most this many (1.3 MiB) stay after a transfer; an idle session's small frames never use them.
 */
const KEEP_FREE_SLABS = Math.ceil(SEND_QUEUE_BYTES / SLAB_BYTES) + 1;

interface Slab {
  readonly buf: Buffer;
  used: number;
  /** Frames carved from this slab and not yet written. */
  live: number;
}

let current: Slab | undefined;
const free: Buffer[] = [];
const noop = () => undefined;

export interface FrameBuffer {
  readonly buf: Buffer;
  /** Call once the socket has written the frame (its write callback, error or not). */
  readonly release: () => void;
}

export function frameBuffer(bytes: number): FrameBuffer {
  if (bytes < POOLED_MIN_BYTES || bytes > SLAB_BYTES) return { buf: Buffer.allocUnsafe(bytes), release: noop };
  // A full slab is left to its frames (the last release keeps it for reuse); the current one rewinds when it empties.
  if (!current || current.used + bytes > SLAB_BYTES) current = { buf: free.pop() ?? Buffer.allocUnsafeSlow(SLAB_BYTES), used: 0, live: 0 };
  const slab = current;
  const buf = slab.buf.subarray(slab.used, slab.used + bytes);
  // Frames start 8-byte aligned, so a 32 KiB frame's payload (after its 8-byte header) can be masked a word at a time.
  slab.used = Math.min(SLAB_BYTES, (slab.used + bytes + 7) & ~7);
  slab.live++;
  let released = false;
  return {
    buf,
    release: () => {
      if (released) return;
      released = true;
      if (--slab.live > 0) return;
      if (slab === current) slab.used = 0;
      else if (free.length < KEEP_FREE_SLABS) free.push(slab.buf);
    },
  };
}
