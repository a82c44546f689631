/**
 * A WebSocket as a plain byte Duplex, for SPDY tunnelled in WebSocket
 * (KEP-4006 port-forward, `SPDY/3.1+portforward.k8s.io`): every message is
 * binary, boundaries mean nothing, empty messages are skipped and a text
 * message is fatal (client-go TunnelingConnection.Read). Used by both our
 * client and the emulator.
 */
import { Duplex } from 'node:stream';
import type { WsLike } from './ws-client.js';
import { probeError } from '../errors.js';
import { SEND_QUEUE_BYTES } from './spdy/constants.js';

export class WebSocketByteStream extends Duplex {
  constructor(private readonly ws: WsLike) {
    // A 32 KiB SPDY DATA frame is one write: with Node's default 16 KiB buffer every frame would wait
    // for the previous one to reach the socket (stop-and-wait). 256 KiB lets frames pipeline.
    super({ allowHalfOpen: false, writableHighWaterMark: 256 * 1024 });
    ws.on('message', (data: Buffer | Buffer[] | ArrayBuffer, isBinary: boolean) => {
      if (!isBinary) {
        this.destroy(probeError('WS_PROTOCOL', 'text message inside the SPDY tunnel: invalid message type', {}));
        ws.terminate();
        return;
      }
      const buf = Array.isArray(data) ? Buffer.concat(data) : Buffer.isBuffer(data) ? data : Buffer.from(data);
      if (buf.length > 0) this.push(buf);
    });
    ws.on('close', (code: number) => {
      // Close 1000 is EOF; anything else is a lost connection.
      if (code === 1000) this.push(null);
      else {
        const err = probeError('WS_CLOSED', `tunnel WebSocket closed with code ${code}`, { closeCode: code });
        this.destroy(err);
      }
    });
    ws.on('error', () => undefined); // WebSocketConnection classifies errors
  }

  override _read(): void {}

  override _write(chunk: Buffer, _enc: BufferEncoding, cb: (err?: Error | null) => void): void {
    if (this.ws.readyState !== this.ws.OPEN) return cb(probeError('WS_CLOSED', 'tunnel WebSocket is not open', {}));
    // A Duplex hands _write one chunk at a time: waiting for each send's callback (the socket took it) would
    // make every frame wait for the one before (stop-and-go, measured at 0.87× kubectl). Go on at once while
    // the socket's queue is short; past SEND_QUEUE_BYTES wait for this send, which is backpressure enough.
    let waiting = false;
    this.ws.send(chunk, { binary: true }, (err) => {
      if (waiting) cb(err ?? null);
      else if (err) this.destroy(err);
    });
    if ((this.ws.bufferedAmount ?? 0) < SEND_QUEUE_BYTES) cb();
    else waiting = true;
  }

  /** Writes buffered together (a corked tick of SPDY frames) leave as one binary message. */
  override _writev(chunks: { chunk: Buffer }[], cb: (err?: Error | null) => void): void {
    this._write(chunks.length === 1 ? chunks[0]!.chunk : Buffer.concat(chunks.map((c) => c.chunk)), 'buffer' as BufferEncoding, cb);
  }

  override _final(cb: (err?: Error | null) => void): void {
    if (this.ws.readyState === this.ws.OPEN) this.ws.close(1000);
    cb();
  }

  override _destroy(err: Error | null, cb: (err?: Error | null) => void): void {
    if (this.ws.readyState === this.ws.OPEN) this.ws.terminate();
    cb(err);
  }
}
