/**
 * What a peer writes on a stream the probe reads whole (exec's error stream, a port-forward's error stream): kept up to
 * a bound and counted beyond it (issue 57 §3: a 50 MB Failure status was copied into every report, twice into the
 * table, and JSON and HTML could not be built at all). A Status is well under 1 KiB; the bound is 64 KiB.
 */
import { probeError, type ProbeError } from '../errors.js';

export const ERROR_STREAM_MAX_BYTES = 64 * 1024;

export class BoundedBytes {
  private readonly chunks: Buffer[] = [];
  private kept = 0;
  /** Every byte that arrived, kept or not. */
  total = 0;

  constructor(private readonly max = ERROR_STREAM_MAX_BYTES) {}

  push(chunk: Buffer): void {
    this.total += chunk.length;
    if (this.kept >= this.max) return;
    const part = chunk.length <= this.max - this.kept ? chunk : chunk.subarray(0, this.max - this.kept);
    this.chunks.push(part);
    this.kept += part.length;
  }

  /** Whether more arrived than was kept. */
  get overflowed(): boolean {
    return this.total > this.kept;
  }

  text(): string {
    return Buffer.concat(this.chunks).toString('utf8');
  }
}

/**
 * The most of our replies to a peer's pings (SPDY PING echoes, WebSocket pongs) that may wait unsent: a peer that
 * pings and stops reading would otherwise grow our write queue without end (issue 57 §2: 1.4 GiB from 63 MiB of
 * SPDY pings). Past it the session is cut, PEER_NOT_READING. A healthy peer never leaves more than a few frames.
 */
export const MAX_QUEUED_REPLY_BYTES = 1024 * 1024;

/** The error for a peer that stopped reading our replies. */
export function peerNotReading(queuedBytes: number, sending: 'pings' | 'streams' = 'pings'): ProbeError<'PEER_NOT_READING'> {
  const what = sending === 'pings' ? 'pings' : 'streams of its own (each refused)';
  return probeError(
    'PEER_NOT_READING',
    `the peer kept sending ${what} and stopped reading: ${byteCount(queuedBytes)} of our replies were waiting unsent (bound ${byteCount(MAX_QUEUED_REPLY_BYTES)})`,
    { queuedBytes, boundBytes: MAX_QUEUED_REPLY_BYTES, sending },
  );
}

/** A count of bytes as people read it: `52,428,800 bytes`. */
export const byteCount = (n: number): string => `${n.toLocaleString('en-US')} bytes`;
