/**
 * One SPDY stream as a Node Duplex. It never emits an unhandled 'error':
 * resets and session ends finish the readable side (kubectl treats RST and
 * end of connection as EOF) and are recorded in `resetStatus` / `endError`.
 */
import { BoundedBytes, ERROR_STREAM_MAX_BYTES } from '../bounded-text.js';
import { Duplex } from 'node:stream';
import { probeError, type ProbeError } from '../../errors.js';
import { DATA_CHUNK_BYTES, FLAG_FIN, RST_STATUS_NAMES, RstStatus, STREAM_REPLY_TIMEOUT_MS } from './constants.js';
import type { SpdyHeaders } from './frames.js';

/** What a stream needs from its session: kept narrow so the stream is testable alone. */
export interface StreamOwner {
  sendData(streamId: number, data: Buffer, fin: boolean, cb: (err?: Error | null) => void): void;
  sendReply(streamId: number, headers: SpdyHeaders): void;
  sendReset(streamId: number, status: number): void;
  streamFinished(stream: SpdyStream): void;
  /** This stream's unread data passed its high-water mark (readable side). */
  streamFull(stream: SpdyStream): void;
  /** This stream's reader asks for more (Readable `_read`). */
  streamWantsData(stream: SpdyStream): void;
}

/** Who waits for the reply. */
interface Waiter<T> {
  resolve(value: T): void;
  reject(err: Error): void;
}

function noop(): void {}

/** awaitReply's waiter: its timer is cleared however the wait ends. */
class TimedReplyWait implements Waiter<SpdyHeaders> {
  timer: NodeJS.Timeout | undefined;
  constructor(
    private readonly onReply: () => void,
    private readonly onFailure: (err: Error) => void,
  ) {}
  resolve(): void {
    clearTimeout(this.timer);
    this.onReply();
  }
  reject(err: Error): void {
    clearTimeout(this.timer);
    this.onFailure(err);
  }
}

/** Errors are recorded, never thrown at the process. One function for every stream, not a closure each. */
function recordError(this: SpdyStream, err: Error): void {
  this.endError ??= err;
}

/**
 * The promises below are made only when someone asks for them, and the reply wait is one promise and one timer:
 * an idle exec session holds four streams, and their setup's garbage is what the young generation sizes itself by
 * (bench: memory per idle session).
 */
export class SpdyStream extends Duplex {
  /** Headers of the SYN_STREAM that opened this stream. */
  readonly headers: SpdyHeaders;
  replyHeaders: SpdyHeaders | undefined;
  /** RST status received or sent, if the stream was reset. */
  resetStatus: number | undefined;
  resetByPeer = false;
  /** Set when the session ended under this stream before it finished. */
  endError: Error | undefined;
  sentFin = false;
  receivedFin = false;
  /** Why no reply will come (a reset or the session's end), once known. */
  private replyFailure: Error | undefined;
  private replyWaiters: Waiter<SpdyHeaders>[] | undefined;
  private remoteEndWaiters: Array<() => void> | undefined;
  private remoteOver = false;

  constructor(
    readonly id: number,
    headers: SpdyHeaders,
    private readonly owner: StreamOwner,
    /** Both sides' high-water mark; Node's default (16 KiB) when not given. */
    highWaterMark?: number,
  ) {
    super(highWaterMark === undefined ? { allowHalfOpen: true } : { allowHalfOpen: true, highWaterMark });
    this.headers = headers;
    this.on('error', recordError);
  }

  /** Resolves with the SYN_REPLY's headers; rejects if the stream is reset or the session ends first. */
  get replied(): Promise<SpdyHeaders> {
    if (this.replyHeaders) return Promise.resolve(this.replyHeaders);
    if (this.replyFailure) return Promise.reject(this.replyFailure);
    const p = new Promise<SpdyHeaders>((resolve, reject) => (this.replyWaiters ??= []).push({ resolve, reject }));
    // As with the eager promise this replaced: a caller that drops it never causes an unhandled rejection.
    p.catch(noop);
    return p;
  }

  /** Resolves when the peer's side is over: FIN, RST or the session's end (whether or not anyone reads). */
  get remoteEnded(): Promise<void> {
    if (this.remoteOver) return Promise.resolve();
    return new Promise<void>((resolve) => (this.remoteEndWaiters ??= []).push(resolve));
  }

  private settleReply(headers: SpdyHeaders | undefined, err?: Error): void {
    const waiters = this.replyWaiters;
    this.replyWaiters = undefined;
    if (!headers) this.replyFailure ??= err;
    for (const w of waiters ?? []) {
      if (headers) w.resolve(headers);
      else w.reject(err!);
    }
  }

  private resolveRemoteEnded(): void {
    this.remoteOver = true;
    const waiters = this.remoteEndWaiters;
    this.remoteEndWaiters = undefined;
    for (const resolve of waiters ?? []) resolve();
  }

  get finished(): boolean {
    return this.resetStatus !== undefined || (this.sentFin && this.receivedFin) || this.endError !== undefined;
  }

  /** Server side: answer the SYN_STREAM. Must precede any DATA (spdystream drops DATA before the reply). */
  reply(headers: SpdyHeaders = {}): void {
    if (this.replyHeaders) return;
    this.replyHeaders = headers;
    this.owner.sendReply(this.id, headers);
    this.settleReply(headers);
  }

  /** Waits for the SYN_REPLY, as client-go does before it creates the next stream. */
  awaitReply(timeoutMs = STREAM_REPLY_TIMEOUT_MS): Promise<void> {
    if (this.replyHeaders) return Promise.resolve();
    if (this.replyFailure) return Promise.reject(this.replyFailure);
    return new Promise<void>((resolve, reject) => {
      const waiter = new TimedReplyWait(resolve, reject);
      waiter.timer = setTimeout(SpdyStream.replyTimedOut, timeoutMs, this, waiter, timeoutMs);
      (this.replyWaiters ??= []).push(waiter);
    });
  }

  private static replyTimedOut(stream: SpdyStream, waiter: TimedReplyWait, timeoutMs: number): void {
    stream.replyWaiters = stream.replyWaiters?.filter((w) => w !== waiter);
    waiter.reject(probeError('SPDY_REPLY_TIMEOUT', `no SYN_REPLY for stream ${stream.id} within ${timeoutMs} ms`, { streamId: stream.id, timeoutMs }));
  }

  /** Everything the peer sends until its side ends; `clean` is false when that end was a reset or a lost connection. */
  /** The stream's bytes as text, kept up to `max` (bounded-text.ts) and counted beyond it. */
  readAll(max = ERROR_STREAM_MAX_BYTES): Promise<{ text: string; clean: boolean; totalBytes: number }> {
    const bytes = new BoundedBytes(max);
    this.on('data', (c: Buffer) => bytes.push(c));
    return new Promise((resolve) => {
      this.once('end', () => resolve({ text: bytes.text(), clean: this.resetStatus === undefined && !this.endError, totalBytes: bytes.total }));
    });
  }

  /** Sends RST_STREAM (CANCEL by default) and ends both sides. */
  reset(status: number = RstStatus.CANCEL): void {
    if (this.resetStatus !== undefined) return;
    this.resetStatus = status;
    this.owner.sendReset(this.id, status);
    this.finishReadable();
    this.owner.streamFinished(this);
  }

  /** The reset as an error, with its RST status (CANCEL, REFUSED_STREAM…) and who sent it. */
  private resetError(): ProbeError<'SPDY_STREAM_RESET'> {
    const status = this.resetStatus ?? 0;
    const statusName = RST_STATUS_NAMES[status] ?? `status ${status}`;
    const by = this.resetByPeer ? 'by the peer' : 'by us';
    return probeError('SPDY_STREAM_RESET', `stream ${this.id} was reset ${by} (${statusName})`, {
      streamId: this.id,
      status,
      statusName,
      byPeer: this.resetByPeer,
    });
  }

  // ---- called by the session -------------------------------------------------

  onReply(headers: SpdyHeaders): void {
    this.replyHeaders = headers;
    this.settleReply(headers);
  }

  onData(data: Buffer, flags: number): void {
    if (this.receivedFin || this.resetStatus !== undefined) return;
    if (data.length > 0 && !this.push(data)) this.owner.streamFull(this);
    if (flags & FLAG_FIN) {
      this.receivedFin = true;
      this.push(null);
      this.resolveRemoteEnded();
      if (this.finished) this.owner.streamFinished(this);
    }
  }

  onReset(status: number): void {
    if (this.resetStatus !== undefined) return;
    this.resetStatus = status;
    this.resetByPeer = true;
    this.settleReply(undefined, this.resetError());
    this.finishReadable();
    this.owner.streamFinished(this);
  }

  onSessionEnd(err: Error): void {
    if (this.finished) return;
    this.endError = err;
    this.settleReply(undefined, err);
    this.finishReadable();
  }

  private finishReadable(): void {
    if (!this.receivedFin) {
      this.receivedFin = true;
      this.push(null);
    }
    this.resolveRemoteEnded();
  }

  // ---- Duplex plumbing -------------------------------------------------------

  override _read(): void {
    // Data is pushed as frames arrive (SPDY as spdystream speaks it has no flow control); a session with
    // readBackpressure stops reading its connection while a stream is full, and this starts it again.
    this.owner.streamWantsData(this);
  }

  override _write(chunk: Buffer, _enc: BufferEncoding, cb: (err?: Error | null) => void): void {
    if (this.resetStatus !== undefined || this.endError) {
      cb(this.endError ?? this.resetError());
      return;
    }
    if (chunk.length <= DATA_CHUNK_BYTES) {
      this.owner.sendData(this.id, chunk, false, cb);
      return;
    }
    // client-go never hands spdystream more than 32 KiB at once (remotecommand/reader.go).
    let off = 0;
    const next = (err?: Error | null): void => {
      if (err || off >= chunk.length) return cb(err);
      const piece = chunk.subarray(off, off + DATA_CHUNK_BYTES);
      off += piece.length;
      this.owner.sendData(this.id, piece, false, next);
    };
    next();
  }

  override _final(cb: (err?: Error | null) => void): void {
    if (this.resetStatus !== undefined || this.endError || this.sentFin) return cb();
    this.sentFin = true;
    this.owner.sendData(this.id, Buffer.alloc(0), true, (err) => {
      if (this.finished) this.owner.streamFinished(this);
      cb(err);
    });
  }
}
