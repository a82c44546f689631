/**
 * The kubelet's side of a SPDY session, for the emulator: the server role (even stream and ping ids, replies to
 * the client's streams) and the kubelet's read backpressure, which the probe's own client never does.
 *
 * Backpressure: stop reading the connection while any stream's unread data is past its high-water mark, and read
 * again once its reader asks for more. There spdystream's reader hands each frame to a queue of 50 that blocks
 * when full (moby/spdystream priority.go Push), and the queue's handler blocks in handleDataFrame on
 * `stream.dataChan <- frame.Data`, an unbuffered channel, until the stream's reader (io.Copy to the pod's port)
 * takes it (connection.go); TCP then holds the sender back. So one stream that is never read stalls the whole
 * session there too, which is why the probe's client leaves it off: a probe that ignores a command's output must
 * still get its exit status.
 */
import type { Duplex } from 'node:stream';
import { HELD_STREAM_BYTES } from '../../src/streaming/spdy/constants.js';
import { SpdySession, type SpdySessionOptions } from '../../src/streaming/spdy/session.js';
import type { SpdyStream } from '../../src/streaming/spdy/stream.js';

export interface SpdyServerOptions extends SpdySessionOptions {
  /** Hold the connection's reading while a stream is full (the kubelet's port-forward). @default false */
  readonly readBackpressure?: boolean;
}

export class SpdyServerSession extends SpdySession {
  /** Streams past their high-water mark while backpressure holds the connection's reading. */
  private readonly full = new Set<SpdyStream>();
  private readonly backpressure: boolean;

  constructor(transport: Duplex, options: SpdyServerOptions = {}) {
    super(transport, options, 'server');
    this.backpressure = options.readBackpressure === true;
    if (this.backpressure) this.streamHighWaterMark = HELD_STREAM_BYTES;
  }

  override streamFull(stream: SpdyStream): void {
    if (!this.backpressure || this.end) return;
    if (this.full.size === 0) this.transport.pause();
    this.full.add(stream);
  }

  override streamWantsData(stream: SpdyStream): void {
    if (!this.full.delete(stream) || this.full.size > 0 || this.end) return;
    this.transport.resume();
  }
}
