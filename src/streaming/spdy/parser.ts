/**
 * Incremental SPDY/3 frame parser: an explicit two-state machine (frame
 * header, then payload) that is safe at every chunk boundary. "Need more
 * bytes" is simply returning fewer frames; malformed input throws a
 * ProbeError with the byte offset, and the parser stays failed afterwards.
 *
 * Every rule that makes spdystream's reader end the session is enforced here
 * (moby/spdystream spdy/read.go, connection.go), plus our own limits, each
 * checked before the payload is buffered (CVE-2026-35469).
 */
import { ProbeError, probeError, type ErrorContexts } from '../../errors.js';
import {
  CONTROL_TYPE_NAMES,
  ControlType,
  DEFAULT_SPDY_LIMITS,
  FLAG_FIN,
  FRAME_HEADER_BYTES,
  PROTOCOL_MAX_PAYLOAD_BYTES,
  SPDY_VERSION,
  type SpdyLimits,
} from './constants.js';
import type { SpdyFrame, SpdyHeaders } from './frames.js';
import { HeaderBlockDecoder } from './header-block.js';
import { ByteQueue } from '../byte-queue.js';

interface PendingHeader {
  readonly control: boolean;
  readonly version: number;
  readonly type: number; // control type, or stream id for DATA
  readonly flags: number;
  readonly length: number;
  readonly offset: number; // stream offset of the frame's first byte
}

export interface SpdyParserOptions {
  /**
   * Hand DATA payloads on as they arrive, in pieces that are views of the received chunks (`partial` on all
   * but the last), instead of waiting for a frame to be complete and copying the chunks it spans into one
   * buffer. A session streams: half the frames of a bulk transfer span two socket reads. @default false
   */
  readonly streamData?: boolean;
}

export class SpdyFrameParser {
  private readonly limits: SpdyLimits;
  private readonly streamData: boolean;
  /** Payload bytes of the streamed DATA frame in `pending` not yet handed on. */
  private dataLeft = 0;
  private headerDecoder: HeaderBlockDecoder | undefined;
  private readonly queue = new ByteQueue();
  private pending: PendingHeader | undefined;
  private failure: ProbeError | undefined;

  constructor(limits: Partial<SpdyLimits> = {}, options: SpdyParserOptions = {}) {
    this.limits = { ...DEFAULT_SPDY_LIMITS, ...limits };
    this.streamData = options.streamData ?? false;
    if (this.limits.maxFramePayloadBytes > PROTOCOL_MAX_PAYLOAD_BYTES) {
      throw probeError('CONFIG_INVALID', `maxFramePayloadBytes ${this.limits.maxFramePayloadBytes} exceeds the protocol's ${PROTOCOL_MAX_PAYLOAD_BYTES}`, {
        field: 'maxFramePayloadBytes',
      });
    }
    this.headerDecoder = new HeaderBlockDecoder(this.limits);
  }

  /**
   * Frees the header decompression state (its output history). For sessions that
   * will receive no more header blocks; one arriving later is a protocol error.
   */
  releaseHeaderDecoder(): void {
    this.headerDecoder = undefined;
  }

  /** Bytes received so far but not yet part of a complete frame. */
  get bufferedBytes(): number {
    return this.queue.length;
  }

  /**
   * Feeds bytes; returns every frame completed by them (and, when streaming DATA, every DATA piece they carry).
   * Throws a ProbeError on malformed input.
   */
  push(chunk: Buffer): SpdyFrame[] {
    if (this.failure) throw this.failure;
    this.queue.push(chunk);
    const frames: SpdyFrame[] = [];
    try {
      for (;;) {
        if (!this.pending) {
          if (this.queue.length < FRAME_HEADER_BYTES) break;
          this.pending = this.readHeader(this.queue.take(FRAME_HEADER_BYTES));
          if (this.streamData && !this.pending.control) {
            if (this.pending.type === 0) throw this.badFrame(this.pending, 'stream id 0');
            this.dataLeft = this.pending.length;
          }
        }
        if (this.streamData && !this.pending.control && this.pending.length > 0) {
          // A streamed DATA frame: every buffered byte of it goes on now, as views of the chunks.
          if (this.queue.length === 0) break;
          const h = this.pending;
          const piece = this.queue.view(this.dataLeft);
          this.dataLeft -= piece.length;
          if (this.dataLeft > 0) frames.push({ type: 'DATA', streamId: h.type, flags: h.flags & ~FLAG_FIN, data: piece, partial: true });
          else {
            frames.push({ type: 'DATA', streamId: h.type, flags: h.flags, data: piece });
            this.pending = undefined;
          }
          continue;
        }
        if (this.queue.length < this.pending.length) break;
        const header = this.pending;
        this.pending = undefined;
        frames.push(this.decode(header, this.queue.take(header.length)));
      }
    } catch (err) {
      this.failure = err as ProbeError;
      this.queue.clear();
      throw err;
    }
    return frames;
  }

  private readHeader(h: Buffer): PendingHeader {
    const offset = this.queue.consumed - FRAME_HEADER_BYTES;
    const word = h.readUInt32BE(0);
    const control = (word & 0x80000000) !== 0;
    const flags = h.readUInt8(4);
    const length = h.readUInt32BE(4) & 0xffffff;
    const header: PendingHeader = control
      ? { control, version: (word >>> 16) & 0x7fff, type: word & 0xffff, flags, length, offset }
      : { control, version: SPDY_VERSION, type: word & 0x7fffffff, flags, length, offset };
    if (length > this.limits.maxFramePayloadBytes) {
      const what = control ? (CONTROL_TYPE_NAMES[header.type] ?? `control type ${header.type}`) : `DATA on stream ${header.type}`;
      throw probeError('SPDY_FRAME_TOO_LARGE', `${what} frame of ${length} bytes exceeds the limit of ${this.limits.maxFramePayloadBytes} at byte ${offset}`, {
        offset,
        length,
        limit: this.limits.maxFramePayloadBytes,
      });
    }
    if (control) {
      if (header.version !== SPDY_VERSION) {
        throw probeError('SPDY_BAD_VERSION', `control frame version ${header.version} (expected 3) at byte ${offset}: the peer does not speak SPDY/3`, {
          offset,
          version: header.version,
        });
      }
      if (!(header.type in CONTROL_TYPE_NAMES)) {
        throw probeError('SPDY_UNKNOWN_CONTROL_TYPE', `unknown control frame type ${header.type} at byte ${offset}`, { offset, controlType: header.type });
      }
    }
    return header;
  }

  private badFrame(h: PendingHeader, msg: string): ProbeError<'SPDY_BAD_FRAME'> {
    return probeError('SPDY_BAD_FRAME', `${h.control ? CONTROL_TYPE_NAMES[h.type] : 'DATA'} frame at byte ${h.offset}: ${msg}`, {
      offset: h.offset,
      frameType: h.control ? (CONTROL_TYPE_NAMES[h.type] ?? String(h.type)) : 'DATA',
    });
  }

  /** Throws unless the payload has `min` bytes (exactly, if `exact`). */
  private needLength(h: PendingHeader, p: Buffer, min: number, exact = false): void {
    if (exact ? p.length !== min : p.length < min) throw this.badFrame(h, `length ${p.length}, expected ${exact ? '' : 'at least '}${min}`);
  }

  private streamIdAt(h: PendingHeader, p: Buffer, o: number): number {
    const id = p.readUInt32BE(o) & 0x7fffffff;
    if (id === 0) throw this.badFrame(h, 'stream id 0');
    return id;
  }

  private headersFrom(h: PendingHeader, block: Buffer): SpdyHeaders {
    if (!this.headerDecoder) {
      throw probeError(
        'SPDY_PROTOCOL',
        `${CONTROL_TYPE_NAMES[h.type]} frame at byte ${h.offset}: a header block after the session's streams were set up (none is expected)`,
        { offset: h.offset },
      );
    }
    try {
      return this.headerDecoder.decode(block);
    } catch (err) {
      const e = err as ProbeError<'SPDY_HEADER_BLOCK' | 'SPDY_HEADER_LIMIT'>;
      throw new ProbeError(
        e.code,
        `${CONTROL_TYPE_NAMES[h.type]} frame at byte ${h.offset}: ${e.message}`,
        { ...e.context, offset: h.offset } as ErrorContexts[typeof e.code],
        e,
      );
    }
  }

  // No closures per frame: a session's setup decodes a dozen control frames, and each closure is garbage the
  // young generation has to size for (bench: memory per idle session).
  private decode(h: PendingHeader, p: Buffer): SpdyFrame {
    if (!h.control) {
      if (h.type === 0) throw this.badFrame(h, 'stream id 0');
      return { type: 'DATA', streamId: h.type, flags: h.flags, data: p };
    }
    switch (h.type) {
      case ControlType.SYN_STREAM: {
        this.needLength(h, p, 10);
        const streamId = this.streamIdAt(h, p, 0);
        return {
          type: 'SYN_STREAM',
          streamId,
          associatedId: p.readUInt32BE(4) & 0x7fffffff,
          priority: p.readUInt8(8) >>> 5,
          slot: p.readUInt8(9),
          flags: h.flags,
          headers: this.headersFrom(h, p.subarray(10)),
        };
      }
      case ControlType.SYN_REPLY:
      case ControlType.HEADERS: {
        this.needLength(h, p, 4);
        const streamId = this.streamIdAt(h, p, 0);
        const headers = this.headersFrom(h, p.subarray(4));
        return h.type === ControlType.SYN_REPLY
          ? { type: 'SYN_REPLY', streamId, flags: h.flags, headers }
          : { type: 'HEADERS', streamId, flags: h.flags, headers };
      }
      case ControlType.RST_STREAM: {
        this.needLength(h, p, 8, true);
        const streamId = this.streamIdAt(h, p, 0);
        const status = p.readUInt32BE(4);
        if (status === 0) throw this.badFrame(h, 'status 0');
        return { type: 'RST_STREAM', streamId, status };
      }
      case ControlType.SETTINGS: {
        this.needLength(h, p, 4);
        const count = p.readUInt32BE(0);
        if (count > this.limits.maxSettingsEntries) {
          throw probeError('SPDY_HEADER_LIMIT', `SETTINGS frame at byte ${h.offset} has ${count} entries; the limit is ${this.limits.maxSettingsEntries}`, {
            offset: h.offset,
            value: count,
            limit: this.limits.maxSettingsEntries,
          });
        }
        if (p.length !== 4 + count * 8) throw this.badFrame(h, `${count} entries need ${4 + count * 8} bytes, got ${p.length}`);
        const entries = [];
        for (let i = 0; i < count; i++) {
          const w = p.readUInt32BE(4 + i * 8);
          entries.push({ flags: w >>> 24, id: w & 0xffffff, value: p.readUInt32BE(8 + i * 8) });
        }
        return { type: 'SETTINGS', flags: h.flags, entries };
      }
      case ControlType.PING: {
        this.needLength(h, p, 4, true);
        if (h.flags !== 0) throw this.badFrame(h, `flags ${h.flags}, must be 0`);
        const id = p.readUInt32BE(0);
        if (id === 0) throw this.badFrame(h, 'ping id 0');
        return { type: 'PING', id };
      }
      case ControlType.GOAWAY: {
        this.needLength(h, p, 8, true);
        if (h.flags !== 0) throw this.badFrame(h, `flags ${h.flags}, must be 0`);
        return { type: 'GOAWAY', lastGoodStreamId: p.readUInt32BE(0) & 0x7fffffff, status: p.readUInt32BE(4) };
      }
      case ControlType.WINDOW_UPDATE: {
        this.needLength(h, p, 8, true);
        if (h.flags !== 0) throw this.badFrame(h, `flags ${h.flags}, must be 0`);
        return { type: 'WINDOW_UPDATE', streamId: p.readUInt32BE(0) & 0x7fffffff, delta: p.readUInt32BE(4) & 0x7fffffff };
      }
      default:
        throw probeError('SPDY_UNKNOWN_CONTROL_TYPE', `unknown control frame type ${h.type} at byte ${h.offset}`, { offset: h.offset, controlType: h.type });
    }
  }
}
