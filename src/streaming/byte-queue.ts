/**
 * Bytes received from a socket and not yet parsed, kept as the chunks they arrived in: the one buffer under both
 * frame readers (the SPDY parser and the WebSocket reader). Bytes leave as views of those chunks, so a frame's
 * payload is copied only when the reader needs it whole and it spans two reads.
 */
const EMPTY = Buffer.alloc(0);

export class ByteQueue {
  private chunks: Buffer[] = [];
  /** Bytes queued. */
  length = 0;
  /** Bytes taken since the start: the stream offset of the next byte. */
  consumed = 0;

  push(chunk: Buffer): void {
    if (chunk.length === 0) return;
    this.chunks.push(chunk);
    this.length += chunk.length;
  }

  /** The queued byte at `i` (< length), without taking it. */
  byteAt(i: number): number {
    let at = i;
    for (const c of this.chunks) {
      if (at < c.length) return c[at]!;
      at -= c.length;
    }
    throw new RangeError(`byte ${i} of ${this.length} queued`);
  }

  /** Up to `n` (> 0) bytes from the first chunk, without a copy; the queue must not be empty. */
  view(n: number): Buffer {
    const first = this.chunks[0]!;
    if (first.length <= n) {
      this.chunks.shift();
      this.length -= first.length;
      this.consumed += first.length;
      return first;
    }
    this.chunks[0] = first.subarray(n);
    this.length -= n;
    this.consumed += n;
    return first.subarray(0, n);
  }

  /** Exactly `n` (≤ length) bytes: a view when one chunk holds them, else a copy. */
  take(n: number): Buffer {
    if (n === 0) return EMPTY;
    if (this.chunks[0]!.length >= n) return this.view(n);
    const out = Buffer.allocUnsafe(n);
    for (let filled = 0; filled < n; ) filled += this.view(n - filled).copy(out, filled);
    return out;
  }

  /** Drops everything queued (a reader that failed keeps nothing). */
  clear(): void {
    this.chunks = [];
    this.length = 0;
  }
}
