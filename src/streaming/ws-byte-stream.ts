/**
 * A WebSocket as a plain byte Duplex, for SPDY tunnelled in WebSocket
 * (KEP-4006 port-forward, `SPDY/3.1+portforward.k8s.io`): every message is
 * binary, boundaries mean nothing, empty messages are skipped and a text
 * message is fatal (client-go TunnelingConnection.Read). Used by both our
 * client and the emulator.
 */
import { WS_CLOSE } from './ws-close-codes.js';
import { Duplex } from 'node:stream';
import type { WsLike } from './ws-client.js';
import { probeError } from '../errors.js';
import { sendBinaryMessage } from './ws-send.js';

export interface WebSocketByteStreamOptions {
  /**
   * Send the messages written in one tick as one binary message (the emulator's server side: fewer, larger
   * messages). Our client leaves it off and sends one SPDY frame per message. (kubectl 1.33 sends more, smaller
   * messages: Go's framer writes a DATA frame's two header words and its payload in three writes, and the
   * tunnel makes each write a message: 4, 4 and up to 32768 bytes, counted at the emulator.) @default false
   */
  readonly coalesce?: boolean;
}

export class WebSocketByteStream extends Duplex {
  /** Pieces of this tick's coalesced message, flushed on the next tick. */
  private pending: Buffer[] | undefined;
  private pendingCallbacks: ((err?: Error | null) => void)[] = [];
  /** Set while the WebSocket's reading is paused because this stream's unread bytes passed its high-water mark. */
  private wsPaused = false;

  constructor(
    private readonly ws: WsLike,
    private readonly options: WebSocketByteStreamOptions = {},
  ) {
    super({ allowHalfOpen: false });
    // Our client hands over binary payloads as they arrive (ws-receiver.ts): no message is ever joined first.
    ws.streamBinaryMessages?.((piece) => piece.length > 0 && this.pushBytes(piece));
    ws.on('message', (data: Buffer | Buffer[] | ArrayBuffer, isBinary: boolean) => {
      if (!isBinary) {
        this.destroy(probeError('WS_PROTOCOL', 'text message inside the SPDY tunnel: invalid message type', {}));
        ws.terminate();
        return;
      }
      const buf = Array.isArray(data) ? Buffer.concat(data) : Buffer.isBuffer(data) ? data : Buffer.from(data);
      if (buf.length > 0) this.pushBytes(buf);
    });
    ws.on('close', (code: number) => {
      // Close 1000 is EOF; anything else is a lost connection.
      if (code === WS_CLOSE.NORMAL) this.push(null);
      else {
        const err = probeError('WS_CLOSED', `tunnel WebSocket closed with code ${code}`, { closeCode: code });
        this.destroy(err);
      }
    });
    ws.on('error', () => undefined); // WebSocketConnection classifies errors
  }

  /**
   * Backpressure to the socket: a reader that stops (a SpdySession with readBackpressure pauses this stream)
   * stops the WebSocket's reading once this stream holds its high-water mark, and TCP holds the sender back.
   */
  private pushBytes(bytes: Buffer): void {
    if (!this.push(bytes) && !this.wsPaused && this.ws.pause) {
      this.wsPaused = true;
      this.ws.pause();
    }
  }

  override _read(): void {
    if (!this.wsPaused) return;
    this.wsPaused = false;
    this.ws.resume?.();
  }

  /**
   * Sends `pieces` (a SPDY frame's header and payload) as one binary message without joining them, or, when
   * coalescing, as part of this tick's message. `cb` runs at once while the socket's queue is under
   * SEND_QUEUE_BYTES, else once this message reached the socket: the caller's backpressure. Messages and
   * `write()` must not be mixed on one stream (a SpdySession uses only this).
   */
  writeMessage(pieces: readonly Buffer[], cb?: (err?: Error | null) => void): void {
    if (this.ws.readyState !== this.ws.OPEN || this.destroyed) {
      cb?.(probeError('WS_CLOSED', 'tunnel WebSocket is not open', {}));
      return;
    }
    if (this.options.coalesce) {
      if (!this.pending) {
        this.pending = [];
        process.nextTick(() => this.flushPending());
      }
      this.pending.push(...pieces);
      if (cb) this.pendingCallbacks.push(cb);
      return;
    }
    this.sendNow(pieces, cb);
  }

  private flushPending(): void {
    const pieces = this.pending;
    const callbacks = this.pendingCallbacks;
    this.pending = undefined;
    this.pendingCallbacks = [];
    if (!pieces) return;
    if (this.ws.readyState !== this.ws.OPEN) {
      const err = probeError('WS_CLOSED', 'tunnel WebSocket is not open', {});
      for (const cb of callbacks) cb(err);
      return;
    }
    this.sendNow(pieces, callbacks.length === 0 ? undefined : (err) => callbacks.forEach((cb) => cb(err)));
  }

  private sendNow(pieces: readonly Buffer[], cb: ((err?: Error | null) => void) | undefined): void {
    const waits = sendBinaryMessage(
      this.ws,
      pieces,
      (err) => cb?.(err),
      (err) => this.destroy(err),
    );
    if (!waits) cb?.();
  }

  override _write(chunk: Buffer, _enc: BufferEncoding, cb: (err?: Error | null) => void): void {
    if (this.ws.readyState !== this.ws.OPEN) return cb(probeError('WS_CLOSED', 'tunnel WebSocket is not open', {}));
    // A Duplex hands _write one chunk at a time: waiting for each send's callback (the socket took it) would
    // make every frame wait for the one before (stop-and-go, measured at 0.87× kubectl). sendNow goes on at
    // once while the socket's queue is short; past SEND_QUEUE_BYTES it waits for this send.
    this.sendNow([chunk], cb);
  }

  override _final(cb: (err?: Error | null) => void): void {
    this.flushPending();
    if (this.ws.readyState === this.ws.OPEN) this.ws.close(WS_CLOSE.NORMAL);
    cb();
  }

  override _destroy(err: Error | null, cb: (err?: Error | null) => void): void {
    if (this.ws.readyState === this.ws.OPEN) this.ws.terminate();
    cb(err);
  }
}
