/**
 * A client WebSocket over a socket whose 101 we already validated. Control
 * frames go out through ws's own Sender (exported by the pinned ws package),
 * data frames through ws-frame.ts; frames are read by ws-receiver.ts (ws's
 * rules, tested against ws's Receiver, with binary payloads streamed for the
 * tunnel). The handshake is ours, because ws's client refuses subprotocols
 * with '/' such as `SPDY/3.1+portforward.k8s.io`. Behaves like
 * gorilla/websocket: masked frames, pings answered, a received close frame
 * echoed, then TCP closed.
 */
import { WS_CLOSE } from './ws-close-codes.js';
import { EventEmitter } from 'node:events';
import type { Socket } from 'node:net';
import * as wsModule from 'ws';
import { probeError } from '../errors.js';
import { corkForTick } from './cork.js';
import { maskedBinaryFrame } from './ws-frame.js';
import { WsReceiver, type WsFrameError } from './ws-receiver.js';

/** The parts of ws's (untyped) Sender we use; ws is pinned to an exact version. */
interface WsSender {
  send(data: Buffer | string, options: object, cb?: (err?: Error) => void): void;
  ping(data: Buffer, mask: boolean, cb?: () => void): void;
  pong(data: Buffer, mask: boolean, cb?: () => void): void;
  close(code: number | undefined, data: string, mask: boolean, cb?: () => void): void;
  onerror: (err: Error) => void;
}
const { Sender } = wsModule as unknown as {
  Sender: new (socket: Socket, extensions: object, generateMask: undefined) => WsSender;
};

export interface WsLike {
  readonly readyState: number;
  /** The largest message accepted, when the receiver enforces one. */
  readonly maxPayloadBytes?: number;
  readonly OPEN: number;
  readonly protocol: string;
  /** Bytes queued for the socket and not yet written (ws: `bufferedAmount`). */
  readonly bufferedAmount?: number;
  send(data: Buffer | string, options: { binary: boolean }, cb?: (err?: Error) => void): void;
  /**
   * Sends one binary message made of `pieces`, in order, without joining them first (ws-frame.ts). Where it is
   * missing, the pieces are joined and sent with `send`.
   */
  sendPieces?(pieces: readonly Buffer[], cb?: (err?: Error | null) => void): void;
  /**
   * From now on, binary messages' payloads go to `onPiece` as they arrive, in pieces, and not as 'message'
   * events: for a byte stream, where message boundaries mean nothing, and for exec's channels, whose byte leads
   * a message's `first` piece (a piece is empty only when its whole message is). Text messages still arrive
   * whole. Call it before reading starts.
   */
  streamBinaryMessages?(onPiece: (piece: Buffer, first: boolean) => void): void;
  /** Stop reading the socket until `resume` (ws: `pause`/`resume`); a receiver without them is never held back. */
  pause?(): void;
  resume?(): void;
  ping(): void;
  close(code?: number): void;
  terminate(): void;
  on(event: string, listener: (...args: any[]) => void): this;
  once(event: string, listener: (...args: any[]) => void): this;
  off(event: string, listener: (...args: any[]) => void): this;
}

const OPEN = 1;
const CLOSING = 2;
const CLOSED = 3;

export class ClientWebSocket extends EventEmitter implements WsLike {
  readonly OPEN = OPEN;
  readyState = OPEN;
  private readonly sender: WsSender;
  private readonly receiver: WsReceiver;
  private closeCode: number | undefined;
  private closeReason: Buffer = Buffer.alloc(0);
  private closeSent = false;
  private closeTimer: NodeJS.Timeout | undefined;

  constructor(
    readonly socket: Socket,
    head: Buffer,
    readonly protocol: string,
    readonly maxPayloadBytes: number,
  ) {
    super();
    this.sender = new Sender(socket, {}, undefined);
    this.sender.onerror = (err) => this.onError(err);
    this.receiver = new WsReceiver(maxPayloadBytes, {
      message: (data, isBinary) => this.emit('message', data, isBinary),
      ping: (data) => {
        if (this.readyState === OPEN) this.sender.pong(data, true, undefined);
        this.emit('ping', data);
      },
      pong: (data) => this.emit('pong', data),
      conclude: (code, reason) => {
        this.closeCode = code;
        this.closeReason = reason;
        // Echo the close frame, then close TCP (gorilla does the same).
        if (!this.closeSent) {
          this.closeSent = true;
          this.sender.close(code === WS_CLOSE.NO_STATUS ? undefined : code, '', true, () => socket.end());
        } else socket.end();
        this.readyState = CLOSING;
      },
      error: (err) => this.onError(err),
    });
    socket.pause();
    // Socket errors surface as 'close' (1006); WebSocketConnection reads RST/FIN from the raw socket.
    socket.on('error', () => undefined);
    socket.on('close', () => this.onSocketClose());
    this.head = head;
  }

  private head: Buffer | undefined;

  /** Bytes waiting to be written to the socket (frames are written straight to it: no compression queue). */
  get bufferedAmount(): number {
    return this.socket.writableLength;
  }

  /**
   * Starts reading. Nothing is delivered before this, so bytes that came in
   * the same packet as the 101 reach listeners attached after the upgrade.
   */
  start(): this {
    const head = this.head;
    if (head === undefined) return this;
    this.head = undefined;
    const socket = this.socket;
    socket.on('data', (chunk: Buffer) => this.receiver.push(chunk));
    if (head.length > 0) this.receiver.push(head);
    socket.resume();
    return this;
  }

  send(data: Buffer | string, options: { binary: boolean }, cb?: (err?: Error) => void): void {
    if (this.readyState !== OPEN) {
      cb?.(probeError('WS_CLOSED', 'the WebSocket is not open', {}));
      return;
    }
    this.sender.send(data, { binary: options.binary, fin: true, mask: true, compress: false, rsv1: false }, cb);
  }

  /**
   * One masked binary message written straight to the socket: the pieces are masked into one new buffer, the
   * only copy masking allows (ws's send would join them, then copy them again to mask). ws's Sender keeps no
   * queue of its own here (no compression), so frames from both stay in order. A tick's frames leave in one
   * writev (cork.ts).
   */
  sendPieces(pieces: readonly Buffer[], cb?: (err?: Error | null) => void): void {
    if (this.readyState !== OPEN) {
      cb?.(probeError('WS_CLOSED', 'the WebSocket is not open', {}));
      return;
    }
    corkForTick(this.socket);
    const frame = maskedBinaryFrame(pieces);
    this.socket.write(frame.buf, (err) => {
      frame.release();
      cb?.(err);
    });
  }

  streamBinaryMessages(onPiece: (piece: Buffer, first: boolean) => void): void {
    this.receiver.onBinaryPiece = onPiece;
  }

  ping(): void {
    if (this.readyState === OPEN) this.sender.ping(Buffer.alloc(0), true, undefined);
  }

  close(code: number = WS_CLOSE.NORMAL): void {
    if (this.readyState !== OPEN) return;
    this.readyState = CLOSING;
    this.closeSent = true;
    this.sender.close(code, '', true, undefined);
    this.closeTimer = setTimeout(() => this.socket.destroy(), 1000);
    this.closeTimer.unref();
  }

  terminate(): void {
    if (this.readyState === CLOSED) return;
    this.readyState = CLOSING;
    this.socket.destroy();
  }

  private onError(err: WsFrameError | (Error & { code?: string; statusCode?: undefined })): void {
    this.emit('error', err);
    if (this.readyState === OPEN && !this.closeSent) {
      this.closeSent = true;
      this.sender.close(err.statusCode ?? WS_CLOSE.PROTOCOL_ERROR, '', true, undefined);
    }
    this.readyState = CLOSING;
    this.socket.destroy();
  }

  private onSocketClose(): void {
    if (this.readyState === CLOSED) return;
    this.readyState = CLOSED;
    clearTimeout(this.closeTimer);
    this.emit('close', this.closeCode ?? WS_CLOSE.ABNORMAL, this.closeReason);
  }
}
