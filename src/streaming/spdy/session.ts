/**
 * A SPDY/3 session in the client or server role over any byte Duplex (a TCP
 * or TLS socket, or the WebSocket tunnel adapter). Behaves as spdystream does:
 * no flow control, odd client / even server stream and ping ids, PING echo,
 * RST(PROTOCOL_ERROR) for out-of-order stream ids, GOAWAY on fatal input.
 */
import { MAX_QUEUED_REPLY_BYTES, peerNotReading } from '../bounded-text.js';
import { EventEmitter } from 'node:events';
import type { Duplex } from 'node:stream';
import { isProbeError, probeError, type ProbeError } from '../../errors.js';
import type { SpdySessionEndCause } from '../end-cause.js';
import { DEFAULT_SPDY_LIMITS, FLAG_FIN, GOAWAY_STATUS_NAMES, GoAwayStatus, RstStatus, SEND_QUEUE_BYTES, type SpdyLimits } from './constants.js';
import { describeFrame, type SpdyFrame, type SpdyHeaders } from './frames.js';
import { HeaderBlockEncoder, type DeflateTuning } from './header-block.js';
import { SpdyFrameParser } from './parser.js';
import { dataFrameHeader, serializeFrame } from './serializer.js';
import { SpdyStream, type StreamOwner } from './stream.js';
import { corkForTick } from '../cork.js';

export type SpdyRole = 'client' | 'server';

export interface SessionEnd {
  readonly cause: SpdySessionEndCause;
  /** For `goaway`, a SPDY_GOAWAY error whose context has the status and last good stream. */
  readonly error?: Error;
}

export interface SpdySessionOptions {
  readonly limits?: Partial<SpdyLimits>;
  readonly deflate?: DeflateTuning;
  /** Bytes that arrived with the 101 and belong to the session. */
  readonly head?: Buffer;
  /** Told of every control frame sent and received (the wire log); DATA frames are not reported. */
  readonly onControlFrame?: (direction: 'sent' | 'received', frame: string) => void;
}

/**
 * A transport that takes whole messages: the WebSocket tunnel (ws-byte-stream.ts), where each SPDY frame is one
 * binary message (kubectl splits a frame over several; boundaries mean nothing in the tunnel), its header and
 * payload leaving together without being joined.
 */
interface MessageTransport {
  writeMessage(pieces: readonly Buffer[], cb?: (err?: Error | null) => void): void;
}

function isMessageTransport(t: Duplex): t is Duplex & MessageTransport {
  return typeof (t as Partial<MessageTransport>).writeMessage === 'function';
}

export class SpdySession extends EventEmitter implements StreamOwner {
  readonly role: SpdyRole;
  readonly closed: Promise<SessionEnd>;
  end: SessionEnd | undefined;

  private readonly limits: SpdyLimits;
  private readonly parser: SpdyFrameParser;
  private encoder: HeaderBlockEncoder | undefined;
  private readonly streams = new Map<number, SpdyStream>();
  /** The high-water mark of streams the peer opens: Node's default here (a server's may hold less). */
  protected streamHighWaterMark: number | undefined;
  private readonly pings = new Map<number, { sentAt: number; resolve: (rttMs: number) => void; reject: (e: Error) => void }>();
  private nextStreamId: number;
  private nextPingId: number;
  private lastPeerStreamId = 0;
  /** Streams the peer opened that this client refused (RST_STREAM REFUSED_STREAM): a client reads only its own. */
  peerStreamsRefused = 0;
  private resolveClosed!: (end: SessionEnd) => void;
  private goingAway = false;
  /** Set when the transport takes messages (the WebSocket tunnel): every frame is written through it. */
  private readonly messages: MessageTransport | undefined;

  /**
   * A client session (ours, as kubectl's). `role` is 'server' only for the emulator's kubelet side
   * (lab/emulator/spdy-server-session.ts), which adds what only a server does.
   */
  constructor(
    protected readonly transport: Duplex,
    private readonly options: SpdySessionOptions = {},
    role: SpdyRole = 'client',
  ) {
    super();
    this.role = role;
    this.limits = { ...DEFAULT_SPDY_LIMITS, ...options.limits };
    // DATA is handed to its stream as it arrives, never copied to join the socket reads a frame spans.
    this.parser = new SpdyFrameParser(this.limits, { streamData: true });
    this.encoder = new HeaderBlockEncoder(options.deflate);
    this.nextStreamId = this.role === 'client' ? 1 : 2;
    this.nextPingId = this.role === 'client' ? 1 : 2;
    this.closed = new Promise((resolve) => (this.resolveClosed = resolve));
    this.messages = isMessageTransport(transport) ? transport : undefined;

    transport.on('data', (chunk: Buffer) => this.onBytes(chunk));
    transport.on('end', () => {
      options.onControlFrame?.('received', 'end of stream (FIN)');
      this.finish({ cause: this.goingAway ? 'local' : 'fin' });
    });
    transport.on('error', (err: NodeJS.ErrnoException) => {
      options.onControlFrame?.('received', `transport error ${err.code ?? err.message}`);
      const cause: SpdySessionEndCause = err.code === 'ECONNRESET' || err.code === 'EPIPE' ? 'rst' : isProbeError(err) ? 'protocol-error' : 'error';
      this.finish({ cause, error: err });
    });
    transport.on('close', () => this.finish({ cause: this.goingAway ? 'local' : 'fin' }));
    if (options.head && options.head.length > 0) queueMicrotask(() => this.onBytes(options.head!));
  }

  /** Opens a stream (SYN_STREAM, flags 0, priority 0, as kubectl). Await `stream.replied` for the SYN_REPLY. */
  openStream(headers: Readonly<Record<string, string>>): SpdyStream {
    if (this.end || this.goingAway) throw probeError('SPDY_SESSION_CLOSED', 'cannot open a stream: the SPDY session is closed', { cause: this.end?.cause });
    if (this.streams.size >= this.limits.maxConcurrentStreams) {
      throw probeError('SPDY_STREAM_LIMIT', `cannot open more than ${this.limits.maxConcurrentStreams} streams on one session`, {
        limit: this.limits.maxConcurrentStreams,
      });
    }
    const id = this.nextStreamId;
    this.nextStreamId += 2;
    const h: Record<string, string[]> = {};
    for (const [k, v] of Object.entries(headers)) h[k.toLowerCase()] = [v];
    const stream = new SpdyStream(id, h, this, this.streamHighWaterMark);
    this.streams.set(id, stream);
    this.writeFrame({ type: 'SYN_STREAM', streamId: id, associatedId: 0, priority: 0, slot: 0, flags: 0, headers: h });
    return stream;
  }

  /**
   * Frees both header-block zlib streams' state (the inflater's output history). For a
   * session that will neither open nor accept streams again: exec, once its
   * streams are replied. Header blocks after this are protocol errors.
   */
  releaseHeaderContexts(): void {
    this.encoder = undefined;
    this.parser.releaseHeaderDecoder();
  }

  /** Sends a PING with our next id; resolves with the round trip in ms. Like spdystream, it has no timeout of its own. */
  ping(): Promise<number> {
    if (this.end) return Promise.reject(probeError('SPDY_SESSION_CLOSED', 'cannot ping: the SPDY session is closed', { cause: this.end.cause }));
    const id = this.nextPingId;
    this.nextPingId = this.nextPingId + 2 > 0x7ffffffe ? (this.role === 'client' ? 1 : 2) : this.nextPingId + 2;
    return new Promise((resolve, reject) => {
      this.pings.set(id, { sentAt: performance.now(), resolve, reject });
      this.writeFrame({ type: 'PING', id });
    });
  }

  /**
   * kubectl's teardown (spdystream Connection.Close): RST_STREAM(CANCEL) for
   * every stream we have not FIN'd, GOAWAY(last-good, OK), then close TCP.
   */
  close(): void {
    if (this.end || this.goingAway) return;
    for (const s of [...this.streams.values()]) if (!s.sentFin && s.resetStatus === undefined) s.reset(RstStatus.CANCEL);
    const lastGood = this.role === 'client' ? 0 : this.lastPeerStreamId;
    this.writeFrame({ type: 'GOAWAY', lastGoodStreamId: lastGood, status: GoAwayStatus.OK });
    this.goingAway = true;
    this.transport.end();
    // A peer that never closes its side must not keep us waiting.
    setTimeout(() => this.destroy(), 2000).unref();
  }

  /** Ends the session at once (no frames), e.g. on a deadline. */
  destroy(error?: Error): void {
    this.goingAway = true;
    this.transport.destroy();
    this.finish(error ? { cause: 'error', error } : { cause: 'local' });
  }

  // ---- StreamOwner ------------------------------------------------------------

  sendData(streamId: number, data: Buffer, fin: boolean, cb: (err?: Error | null) => void): void {
    if (this.end) return cb(probeError('SPDY_SESSION_CLOSED', `cannot write to stream ${streamId}: the session is closed`, { streamId }));
    const header = dataFrameHeader(streamId, fin ? FLAG_FIN : 0, data.length);
    const pieces = data.length > 0 ? [header, data] : [header];
    if (this.messages) return this.messages.writeMessage(pieces, cb);
    // On a socket, every frame of this tick leaves in one writev, header and payload without a copy.
    corkForTick(this.transport);
    let ok = true;
    for (const p of pieces) ok = this.transport.write(p);
    if (ok || this.transport.writableLength < SEND_QUEUE_BYTES) cb();
    else this.transport.once('drain', () => cb());
  }

  sendReply(streamId: number, headers: SpdyHeaders): void {
    this.writeFrame({ type: 'SYN_REPLY', streamId, flags: 0, headers });
  }

  sendReset(streamId: number, status: number): void {
    this.writeFrame({ type: 'RST_STREAM', streamId, status });
  }

  streamFinished(stream: SpdyStream): void {
    if (this.streams.get(stream.id) === stream && stream.finished) this.streams.delete(stream.id);
    // A finished stream reads nothing more: it must not hold the connection.
    if (stream.finished) this.streamWantsData(stream);
  }

  /** A stream past its high-water mark: a client reads on regardless (a probe that ignores output still gets its exit status). */
  streamFull(_stream: SpdyStream): void {}

  streamWantsData(_stream: SpdyStream): void {}

  // ---- internals --------------------------------------------------------------

  private writeFrame(frame: SpdyFrame): void {
    if (this.end || this.transport.destroyed) return;
    if (!this.encoder && (frame.type === 'SYN_STREAM' || frame.type === 'SYN_REPLY' || frame.type === 'HEADERS')) {
      throw probeError('SPDY_SESSION_CLOSED', `cannot send ${frame.type}: this session released its header compression`, {});
    }
    const bytes = serializeFrame(frame, this.encoder);
    if (this.messages) this.messages.writeMessage([bytes]);
    else this.transport.write(bytes);
    if (frame.type !== 'DATA') this.options.onControlFrame?.('sent', describeFrame(frame));
  }

  private onBytes(chunk: Buffer): void {
    if (this.end) return;
    let frames: SpdyFrame[];
    try {
      frames = this.parser.push(chunk);
    } catch (err) {
      // Fatal, as in spdystream: tell the peer, then drop the connection.
      this.writeFrame({ type: 'GOAWAY', lastGoodStreamId: this.lastPeerStreamId, status: GoAwayStatus.PROTOCOL_ERROR });
      this.transport.end();
      this.transport.destroy();
      this.finish({ cause: 'protocol-error', error: err as ProbeError });
      return;
    }
    for (const frame of frames) {
      if (this.end) return;
      if (frame.type !== 'DATA') this.options.onControlFrame?.('received', describeFrame(frame));
      this.handle(frame);
    }
  }

  private isPeerId(id: number): boolean {
    return this.role === 'client' ? id % 2 === 0 : id % 2 === 1;
  }

  /**
   * Our replies to the peer's frames (PING echoes, the RST_STREAMs refusing its streams) wait in the transport while the
   * peer does not read: past MAX_QUEUED_REPLY_BYTES the session ends with PEER_NOT_READING (issue 57 §2). True if cut.
   */
  private cutIfNotReading(sending: 'pings' | 'streams'): boolean {
    const queued = this.transport.writableLength;
    if (queued <= MAX_QUEUED_REPLY_BYTES) return false;
    this.finish({ cause: 'protocol-error', error: peerNotReading(queued, sending) });
    this.transport.destroy();
    return true;
  }

  private handle(frame: SpdyFrame): void {
    switch (frame.type) {
      case 'SYN_STREAM': {
        const id = frame.streamId;
        // spdystream validateStreamId: ids from the peer must have its parity and grow.
        if (!this.isPeerId(id) || id <= this.lastPeerStreamId) {
          this.sendReset(id, RstStatus.PROTOCOL_ERROR);
          return;
        }
        this.lastPeerStreamId = id;
        // A client reads only the streams it opened: kubectl's exec and port-forward open every stream themselves, so
        // one the server pushes would be buffered for no reader, and would count against the client's own stream
        // budget (issue 57 §1, §7: 200 pushed streams held 3 GiB; 10,000 used up the 256 streams of ours). Refused.
        // Not what kubectl does: client-go's client connection accepts them (apimachinery httpstream/spdy
        // connection.go: NewClientConnection's NoOpNewStreamHandler, then SendReply), and an unread one's data blocks
        // spdystream's frame loop, so kubectl would stall where the probe goes on; such a server is hostile, not a hop.
        if (this.role === 'client') {
          this.peerStreamsRefused++;
          if (!this.messages) corkForTick(this.transport);
          this.sendReset(id, RstStatus.REFUSED_STREAM);
          this.cutIfNotReading('streams');
          return;
        }
        if (this.streams.size >= this.limits.maxConcurrentStreams) {
          this.sendReset(id, RstStatus.REFUSED_STREAM);
          return;
        }
        const stream = new SpdyStream(id, frame.headers, this, this.streamHighWaterMark);
        this.streams.set(id, stream);
        if (frame.flags & FLAG_FIN) stream.onData(Buffer.alloc(0), FLAG_FIN);
        this.emit('stream', stream);
        return;
      }
      case 'SYN_REPLY':
        this.streams.get(frame.streamId)?.onReply(frame.headers);
        return;
      case 'DATA':
        this.streams.get(frame.streamId)?.onData(frame.data, frame.flags);
        return;
      case 'RST_STREAM':
        this.streams.get(frame.streamId)?.onReset(frame.status);
        return;
      case 'PING': {
        const pending = this.pings.get(frame.id);
        if (this.isPeerId(frame.id)) {
          // The echoes of one read leave together (a flood of PINGs is one writev per read, not one write per PING).
          if (!this.messages) corkForTick(this.transport);
          this.writeFrame(frame);
          if (this.cutIfNotReading('pings')) return;
        } else if (pending) {
          this.pings.delete(frame.id);
          pending.resolve(performance.now() - pending.sentAt);
        }
        this.emit('ping', frame.id);
        return;
      }
      case 'GOAWAY':
        this.goingAway = true;
        this.finish({
          cause: 'goaway',
          error: probeError(
            'SPDY_GOAWAY',
            `the peer sent GOAWAY (${GOAWAY_STATUS_NAMES[frame.status] ?? `status ${frame.status}`}, last good stream ${frame.lastGoodStreamId})`,
            {
              status: frame.status,
              lastGoodStreamId: frame.lastGoodStreamId,
            },
          ),
        });
        this.transport.end();
        return;
      case 'SETTINGS':
      case 'WINDOW_UPDATE':
      case 'HEADERS':
        // spdystream reads these and drops them; it has no flow control to obey.
        return;
    }
  }

  private finish(end: SessionEnd): void {
    if (this.end) return;
    this.end = end;
    const err = end.error ?? probeError('SPDY_SESSION_CLOSED', `the SPDY session ended (${end.cause})`, { cause: end.cause });
    for (const s of this.streams.values()) s.onSessionEnd(err);
    this.streams.clear();
    for (const p of this.pings.values()) p.reject(err);
    this.pings.clear();
    if (!this.transport.destroyed && end.cause !== 'local' && end.cause !== 'goaway') this.transport.destroy();
    this.resolveClosed(end);
  }
}
