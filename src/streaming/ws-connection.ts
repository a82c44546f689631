/**
 * End-cause tracking and kubectl's keepalive for a client WebSocket.
 * The cause comes from the close frame when one arrived (`ws-close:<code>`),
 * else from the TCP socket underneath (`rst` / `fin`), else from our own
 * keepalive (`no-pong`) or a protocol error.
 */
import { WS_FRAME_RULES, type WsFrameErrorCode } from './ws-receiver.js';
import { MAX_QUEUED_REPLY_BYTES, peerNotReading } from './bounded-text.js';
import { WS_CLOSE } from './ws-close-codes.js';
import type { Socket } from 'node:net';
import { peerText } from '../text.js';
import { probeError, type ProbeError } from '../errors.js';
import { WS_PING_PERIOD_MS, WS_PONG_DEADLINE_MS } from './keepalive.js';
import type { WsLike } from './ws-client.js';
import { decodeChannelMessage, isBase64Protocol, noChannelByte, type ChannelMessage } from './channel/codec.js';
import type { ConnectionEnd, KeepaliveMode, TransportEndCause } from './types.js';

export interface WebSocketKeepalive {
  readonly pingPeriodMs: number;
  readonly pongDeadlineMs: number;
}

/** kubectl's WebSocket keepalive for a mode: pings with a pong deadline, or none. */
export function wsKeepalive(mode: KeepaliveMode | undefined): WebSocketKeepalive | undefined {
  return mode === 'none' ? undefined : { pingPeriodMs: WS_PING_PERIOD_MS, pongDeadlineMs: WS_PONG_DEADLINE_MS };
}

export class WebSocketConnection {
  readonly ended: Promise<ConnectionEnd>;
  end: ConnectionEnd | undefined;
  lastPongAt: number;
  private resolveEnded!: (e: ConnectionEnd) => void;
  private sawRst = false;
  private sawFin = false;
  private localClose = false;
  private pending: { cause: TransportEndCause; message?: string; error?: ProbeError } | undefined;
  private pingTimer: NodeJS.Timeout | undefined;

  constructor(
    readonly ws: WsLike,
    raw: Socket,
    keepalive: WebSocketKeepalive | undefined,
    /** Control frames and the socket's end, for the wire log and a session's evidence (upgrade.ts wsWireLog). */
    private readonly onControlFrame?: (direction: 'sent' | 'received', frame: string) => void,
  ) {
    this.lastPongAt = performance.now();
    this.ended = new Promise((r) => (this.resolveEnded = r));
    raw.on('error', (err: NodeJS.ErrnoException) => {
      onControlFrame?.('received', `socket error ${err.code ?? err.message}`);
      // A reset counts only when it came first: after the peer's FIN, our own ping or close write fails with
      // EPIPE/ECONNRESET, which is a consequence of the FIN (the same cut is `fin` on every transport).
      if ((err.code === 'ECONNRESET' || err.code === 'EPIPE') && !this.sawFin) this.sawRst = true;
      // The kernel gave up retransmitting (tcp_retries2): nothing acknowledged our packets, no FIN and no reset came.
      if (err.code === 'ETIMEDOUT')
        this.pending ??= { cause: 'error', message: 'the kernel gave up retransmitting (ETIMEDOUT): nothing acknowledged our packets' };
    });
    raw.on('end', () => {
      this.sawFin = true;
      onControlFrame?.('received', 'TCP FIN');
    });
    ws.on('error', (err: Error & { code?: string }) => {
      // ws reports frames it cannot parse as errors with WS_ERR_* codes, then closes 1002/1009.
      if (err.code === 'WS_ERR_UNSUPPORTED_MESSAGE_LENGTH') {
        const limitBytes = ws.maxPayloadBytes ?? 0;
        this.pending ??= {
          cause: 'protocol-error',
          error: probeError('WS_MESSAGE_TOO_LARGE', `the server sent a WebSocket message larger than the limit of ${limitBytes} bytes`, { limitBytes }, err),
        };
      } else if (err.code?.startsWith('WS_ERR')) {
        this.pending ??= {
          cause: 'protocol-error',
          error: probeError(
            'WS_PROTOCOL',
            `the server broke the WebSocket protocol (${WS_FRAME_RULES[err.code as WsFrameErrorCode] ?? err.code}): ${err.message}`,
            { wsCode: err.code },
            err,
          ),
        };
      } else if ((err as NodeJS.ErrnoException).code === 'ECONNRESET' && !this.sawFin) this.sawRst = true;
    });
    ws.on('pong', () => {
      this.lastPongAt = performance.now();
      onControlFrame?.('received', 'PONG');
    });
    ws.on('ping', () => {
      onControlFrame?.('received', 'PING');
      // The pong is queued by now (the client answers before it tells): a peer that pings and never reads is cut.
      const queued = (ws as { bufferedAmount?: number }).bufferedAmount ?? 0;
      if (queued > MAX_QUEUED_REPLY_BYTES) this.fail('protocol-error', peerNotReading(queued));
    });
    ws.on('close', (code: number, reason: Buffer) => {
      onControlFrame?.('received', `CLOSE ${code}${reason.length ? ` ${peerText(reason.toString('utf8'), 80)}` : ''}`);
      this.onClose(code, reason.toString('utf8'));
    });
    if (keepalive) {
      this.pingTimer = setInterval(() => {
        if (performance.now() - this.lastPongAt > keepalive.pongDeadlineMs) {
          this.fail('no-pong', undefined, `no pong for ${keepalive.pongDeadlineMs} ms`);
          return;
        }
        try {
          ws.ping();
          onControlFrame?.('sent', 'PING');
        } catch {
          /* closing */
        }
      }, keepalive.pingPeriodMs);
      this.pingTimer.unref();
    }
  }

  /** Decoded channel messages; a malformed one ends the connection as a protocol error. */
  onChannelMessage(handler: (msg: ChannelMessage) => void): void {
    this.ws.on('message', (data: Buffer, isBinary: boolean) => {
      let msg: ChannelMessage;
      try {
        msg = decodeChannelMessage(data, isBinary, this.ws.protocol);
      } catch (err) {
        this.fail('protocol-error', err as ProbeError<'CHANNEL_PROTOCOL'>);
        return;
      }
      handler(msg);
    });
  }

  /**
   * Channel data as it arrives: on the binary subprotocols each binary message is handed on in pieces as the
   * socket delivers them (its channel from the first byte of its first piece; `payload` may be empty), so a
   * message that spans two reads is never joined into a new buffer first (issue 42: exec's stdout over
   * WebSocket); the base64 subprotocols, and a receiver that cannot stream, give whole messages. A malformed
   * message ends the connection as a protocol error, as `onChannelMessage`.
   */
  onChannelData(handler: (channel: number, payload: Buffer) => void): void {
    this.onChannelMessage((msg) => handler(msg.channel, msg.payload));
    const { ws } = this;
    if (isBase64Protocol(ws.protocol) || !ws.streamBinaryMessages) return;
    let channel = -1;
    ws.streamBinaryMessages((piece, first) => {
      if (first) {
        if (piece.length === 0) return this.fail('protocol-error', noChannelByte(ws.protocol));
        channel = piece[0]!;
        piece = piece.subarray(1);
      }
      if (!this.pending) handler(channel, piece);
    });
  }

  /** Ends the connection with a cause we detected (protocol error, no pong…), and the error behind it if any. */
  fail(cause: TransportEndCause, error?: ProbeError, message?: string): void {
    this.pending ??= { cause, error, message: message ?? error?.message };
    if (!this.end) this.onControlFrame?.('sent', `terminate (${cause})`);
    this.ws.terminate();
  }

  close(code: number = WS_CLOSE.NORMAL): void {
    if (this.end) return;
    this.localClose = true;
    this.onControlFrame?.('sent', `CLOSE ${code}`);
    try {
      this.ws.close(code);
    } catch {
      this.ws.terminate();
    }
    setTimeout(() => this.ws.terminate(), 1000).unref();
  }

  destroy(): void {
    this.localClose = true;
    this.ws.terminate();
  }

  private onClose(code: number, reason: string): void {
    clearInterval(this.pingTimer);
    let cause: TransportEndCause;
    let message: string | undefined = reason || undefined;
    let error: ProbeError | undefined;
    if (this.pending) {
      cause = this.pending.cause;
      message = this.pending.message ?? this.pending.error?.message;
      error = this.pending.error;
    } else if (this.localClose) cause = 'local';
    else if (code !== WS_CLOSE.NO_STATUS && code !== WS_CLOSE.ABNORMAL) cause = `ws-close:${code}`;
    else if (this.sawRst) cause = 'rst';
    else if (this.sawFin || code === WS_CLOSE.ABNORMAL) cause = 'fin';
    else cause = `ws-close:${WS_CLOSE.NO_STATUS}`;
    this.end = { cause, atMs: performance.now(), message, ...(error ? { error } : {}) };
    this.resolveEnded(this.end);
  }
}
