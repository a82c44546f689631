/**
 * Reading a server's WebSocket frames (RFC 6455 §5), on the client side: what ws's Receiver does for a client
 * without extensions, with the same rules, error codes and close statuses (tested against it frame for frame,
 * test/unit/ws-receiver.test.ts), and one thing it cannot do: deliver a binary message's payload in pieces as
 * they arrive (`onBinaryPiece`), for the port-forward tunnel, where message boundaries mean nothing
 * (client-go TunnelingConnection.Read). A piece is a view of the socket's own read buffer: nothing is copied or
 * waited for, where ws joins every frame that spans two reads into a new buffer before it says anything (the
 * largest cost of our side of a tunnel transfer after the garbage collector that those buffers feed; issue 26).
 *
 * The rules (ws 8.23 lib/receiver.js for a client): RSV1-3 clear (no extension is ever negotiated); opcodes
 * 0-2 and 8-10 only; a continuation only inside a fragmented message, a new data frame never inside one; a
 * control frame has FIN and at most 125 bytes, a close frame not exactly 1; a server's frame is never masked
 * (§5.1); a 64-bit length above 2^53 - 1 is refused (1009); a message longer than the limit is refused from
 * the frame header that would pass it, before any of its bytes are kept (1009); text and a close reason are
 * valid UTF-8 (1007); a close code is one a peer may send (§7.4). After a close frame nothing more is read.
 */
import { WS_CLOSE } from './ws-close-codes.js';
import { isUtf8 } from 'node:buffer';
import { ByteQueue } from './byte-queue.js';

export type WsFrameErrorCode =
  | 'WS_ERR_UNEXPECTED_RSV_2_3'
  | 'WS_ERR_UNEXPECTED_RSV_1'
  | 'WS_ERR_INVALID_OPCODE'
  | 'WS_ERR_EXPECTED_FIN'
  | 'WS_ERR_INVALID_CONTROL_PAYLOAD_LENGTH'
  | 'WS_ERR_UNEXPECTED_MASK'
  | 'WS_ERR_UNSUPPORTED_DATA_PAYLOAD_LENGTH'
  | 'WS_ERR_UNSUPPORTED_MESSAGE_LENGTH'
  | 'WS_ERR_INVALID_UTF8'
  | 'WS_ERR_INVALID_CLOSE_CODE';

/** The rule each error breaks, as a person reads it in an error (issue 57 §7: "protocol-error" alone says nothing). */
export const WS_FRAME_RULES: Readonly<Record<WsFrameErrorCode, string>> = {
  WS_ERR_UNEXPECTED_RSV_2_3: 'RFC 6455 5.2: RSV1-3 must be 0 unless a negotiated extension defines them',
  WS_ERR_UNEXPECTED_RSV_1: 'RFC 6455 5.2: RSV1-3 must be 0 unless a negotiated extension defines them (no compression was negotiated)',
  WS_ERR_INVALID_OPCODE: 'RFC 6455 5.2 and 5.4: no reserved opcode; a continuation only inside a fragmented message, a new message only outside one',
  WS_ERR_EXPECTED_FIN: 'RFC 6455 5.5: control frames must not be fragmented',
  WS_ERR_INVALID_CONTROL_PAYLOAD_LENGTH: 'RFC 6455 5.5: control frames carry at most 125 bytes',
  WS_ERR_UNEXPECTED_MASK: 'RFC 6455 5.1: a server must not mask the frames it sends',
  WS_ERR_UNSUPPORTED_DATA_PAYLOAD_LENGTH: 'RFC 6455 5.2: the 64-bit payload length must fit (its top bit 0; here at most 2^53 - 1)',
  WS_ERR_UNSUPPORTED_MESSAGE_LENGTH: "the probe's own bound on one message (not an RFC rule)",
  WS_ERR_INVALID_UTF8: 'RFC 6455 8.1 and 5.5.1: text messages and close reasons must be valid UTF-8',
  WS_ERR_INVALID_CLOSE_CODE: 'RFC 6455 7.4: only a close code a peer may send',
};

/** A frame the server should not have sent: ws's error code for it, and the close status to answer with. */
export class WsFrameError extends Error {
  constructor(
    readonly code: WsFrameErrorCode,
    readonly statusCode: number,
    message: string,
  ) {
    super(message);
    this.name = 'WsFrameError';
  }
}

export interface WsReceiverEvents {
  /** A whole message (text always; binary unless streamed). */
  message(data: Buffer, isBinary: boolean): void;
  ping(data: Buffer): void;
  pong(data: Buffer): void;
  /** The server's close frame: its code (1005 when it had none) and reason. Nothing is read after it. */
  conclude(code: number, reason: Buffer): void;
  /** The first malformed frame; nothing is read after it. */
  error(err: WsFrameError): void;
}

const OP_CONTINUATION = 0x0;
const OP_TEXT = 0x1;
const OP_BINARY = 0x2;
const OP_CLOSE = 0x8;
const OP_PING = 0x9;
const MAX_CONTROL_PAYLOAD = 125;
/** The highest 32 bits of a 64-bit length that keep it within Number.MAX_SAFE_INTEGER. */
const MAX_LENGTH_HIGH_WORD = 2 ** 21 - 1;
const EMPTY = Buffer.alloc(0);

/** A close code a peer may send (RFC 6455 §7.4.1-2; ws validation.js isValidStatusCode). */
export function isValidCloseCode(code: number): boolean {
  // 1004 is reserved; NO_STATUS and ABNORMAL are never sent on the wire (§7.4.1).
  return (
    (code >= WS_CLOSE.NORMAL && code <= 1014 && code !== 1004 && code !== WS_CLOSE.NO_STATUS && code !== WS_CLOSE.ABNORMAL) || (code >= 3000 && code <= 4999)
  );
}

export class WsReceiver {
  /**
   * Where binary payloads go when streamed: each piece as it arrives, in order; `first` marks a message's first
   * piece (an exec channel's byte is its first byte). A piece is never empty, except the one first piece of a
   * message with no bytes at all. Set it before the first byte of a binary message; text messages still arrive
   * whole through `message`.
   */
  onBinaryPiece: ((piece: Buffer, first: boolean) => void) | undefined;
  private readonly queue = new ByteQueue();
  private done = false;
  /** The frame being read: its header is in, `left` payload bytes are still to come. */
  private inFrame = false;
  private fin = false;
  private opcode = 0;
  private left = 0;
  /** The opcode of the fragmented message in progress (0: none), its length so far and its kept fragments. */
  private fragmented = 0;
  private messageBytes = 0;
  private fragments: Buffer[] = [];
  /** A piece of the streamed binary message in progress has gone out. */
  private pieceSent = false;

  constructor(
    /** The largest message accepted (0: no limit); ws's maxPayload. */
    private readonly maxMessageBytes: number,
    private readonly events: WsReceiverEvents,
  ) {}

  /** Bytes received and not yet part of an event. */
  get bufferedBytes(): number {
    return this.queue.length;
  }

  /** Reads `chunk`; every event it completes is emitted before this returns. */
  push(chunk: Buffer): void {
    if (this.done || chunk.length === 0) return;
    this.queue.push(chunk);
    while (!this.done) {
      if (!this.inFrame) {
        if (!this.readHeader()) return;
      } else if (this.streaming()) {
        if (this.queue.length === 0) return;
        const piece = this.queue.view(this.left);
        this.left -= piece.length;
        const first = !this.pieceSent;
        this.pieceSent = true;
        this.onBinaryPiece!(piece, first);
        if (this.left === 0) this.frameDone(EMPTY);
      } else {
        if (this.queue.length < this.left) return;
        this.frameDone(this.queue.take(this.left));
      }
    }
  }

  /** Whether the current frame's payload goes out in pieces. */
  private streaming(): boolean {
    return this.onBinaryPiece !== undefined && this.opcode === OP_BINARY && this.left > 0;
  }

  /** Reads a frame header when all of it is here; false when more bytes are needed (nothing consumed). */
  private readHeader(): boolean {
    if (this.queue.length < 2) return false;
    const b0 = this.queue.byteAt(0);
    const b1 = this.queue.byteAt(1);
    const lengthBytes = (b1 & 0x7f) === 126 ? 2 : (b1 & 0x7f) === 127 ? 8 : 0;
    // The first two bytes decide every error but the length's (ws checks them before the extended length is in).
    const fin = (b0 & 0x80) !== 0;
    let opcode = b0 & 0x0f;
    const short = b1 & 0x7f;
    if ((b0 & 0x30) !== 0) return this.fail('WS_ERR_UNEXPECTED_RSV_2_3', WS_CLOSE.PROTOCOL_ERROR, 'RSV2 and RSV3 must be clear');
    if ((b0 & 0x40) !== 0) return this.fail('WS_ERR_UNEXPECTED_RSV_1', WS_CLOSE.PROTOCOL_ERROR, 'RSV1 must be clear');
    if (opcode === OP_CONTINUATION) {
      if (!this.fragmented) return this.fail('WS_ERR_INVALID_OPCODE', WS_CLOSE.PROTOCOL_ERROR, 'invalid opcode 0');
      opcode = this.fragmented;
    } else if (opcode === OP_TEXT || opcode === OP_BINARY) {
      if (this.fragmented) return this.fail('WS_ERR_INVALID_OPCODE', WS_CLOSE.PROTOCOL_ERROR, `invalid opcode ${opcode}`);
    } else if (opcode >= OP_CLOSE && opcode <= 0xa) {
      if (!fin) return this.fail('WS_ERR_EXPECTED_FIN', WS_CLOSE.PROTOCOL_ERROR, 'FIN must be set');
      if (short > MAX_CONTROL_PAYLOAD || (opcode === OP_CLOSE && short === 1))
        return this.fail('WS_ERR_INVALID_CONTROL_PAYLOAD_LENGTH', WS_CLOSE.PROTOCOL_ERROR, `invalid payload length ${short}`);
    } else return this.fail('WS_ERR_INVALID_OPCODE', WS_CLOSE.PROTOCOL_ERROR, `invalid opcode ${opcode}`);
    if ((b1 & 0x80) !== 0) return this.fail('WS_ERR_UNEXPECTED_MASK', WS_CLOSE.PROTOCOL_ERROR, 'MASK must be clear');
    if (this.queue.length < 2 + lengthBytes) return false;
    if (!fin && !this.fragmented) this.fragmented = opcode;
    let length = short;
    if (lengthBytes === 0) this.queue.take(2);
    else if (lengthBytes === 2) length = this.queue.take(4).readUInt16BE(2);
    else {
      const l = this.queue.take(10).subarray(2);
      const high = l.readUInt32BE(0);
      if (high > MAX_LENGTH_HIGH_WORD)
        return this.fail('WS_ERR_UNSUPPORTED_DATA_PAYLOAD_LENGTH', WS_CLOSE.MESSAGE_TOO_BIG, 'Unsupported WebSocket frame: payload length > 2^53 - 1', false);
      length = high * 2 ** 32 + l.readUInt32BE(4);
    }
    if (length > 0 && opcode < OP_CLOSE) {
      this.messageBytes += length;
      if (this.maxMessageBytes > 0 && this.messageBytes > this.maxMessageBytes)
        return this.fail('WS_ERR_UNSUPPORTED_MESSAGE_LENGTH', WS_CLOSE.MESSAGE_TOO_BIG, 'Max payload size exceeded', false);
    }
    this.inFrame = true;
    this.fin = fin;
    this.opcode = opcode;
    this.left = length;
    return true;
  }

  /** The current frame's payload is in (`data`; empty when it was streamed): emits what it completes. */
  private frameDone(data: Buffer): void {
    this.inFrame = false;
    this.left = 0;
    const opcode = this.opcode;
    if (opcode >= OP_CLOSE) return this.control(opcode, data);
    if (data.length > 0) this.fragments.push(data);
    if (!this.fin) return;
    const fragments = this.fragments;
    const length = this.messageBytes;
    this.fragments = [];
    this.messageBytes = 0;
    this.fragmented = 0;
    if (opcode === OP_BINARY) {
      if (this.onBinaryPiece) {
        // Every byte of it has gone out already; a message of no bytes is said as one empty first piece.
        if (!this.pieceSent) this.onBinaryPiece(EMPTY, true);
        this.pieceSent = false;
        return;
      }
      this.events.message(join(fragments, length), true);
      return;
    }
    const text = join(fragments, length);
    if (!isUtf8(text)) return void this.fail('WS_ERR_INVALID_UTF8', WS_CLOSE.INVALID_PAYLOAD, 'invalid UTF-8 sequence');
    this.events.message(text, false);
  }

  private control(opcode: number, data: Buffer): void {
    if (opcode === OP_CLOSE) {
      if (data.length === 0) return this.conclude(WS_CLOSE.NO_STATUS, EMPTY);
      const code = data.readUInt16BE(0);
      if (!isValidCloseCode(code)) return void this.fail('WS_ERR_INVALID_CLOSE_CODE', WS_CLOSE.PROTOCOL_ERROR, `invalid status code ${code}`);
      const reason = data.subarray(2);
      if (!isUtf8(reason)) return void this.fail('WS_ERR_INVALID_UTF8', WS_CLOSE.INVALID_PAYLOAD, 'invalid UTF-8 sequence');
      return this.conclude(code, reason);
    }
    if (opcode === OP_PING) this.events.ping(data);
    else this.events.pong(data);
  }

  private conclude(code: number, reason: Buffer): void {
    this.stop();
    this.events.conclude(code, reason);
  }

  /** Stops reading and reports a malformed frame (ws's message, prefixed as ws prefixes it); returns false. */
  private fail(code: WsFrameErrorCode, status: number, message: string, prefix = true): false {
    this.stop();
    this.events.error(new WsFrameError(code, status, prefix ? `Invalid WebSocket frame: ${message}` : message));
    return false;
  }

  private stop(): void {
    this.done = true;
    this.queue.clear();
    this.fragments = [];
  }
}

function join(fragments: readonly Buffer[], length: number): Buffer {
  if (fragments.length === 0) return EMPTY;
  if (fragments.length === 1) return fragments[0]!;
  return Buffer.concat(fragments, length);
}
