/**
 * SPDY/3 frame serializer. Each call returns one complete frame; header blocks
 * go through the caller's persistent HeaderBlockEncoder (one per connection).
 */
import { probeError } from '../../errors.js';
import { ControlType, FRAME_HEADER_BYTES, MAX_STREAM_ID, PROTOCOL_MAX_PAYLOAD_BYTES, SPDY_VERSION } from './constants.js';
import type { SpdyFrame } from './frames.js';
import type { HeaderBlockEncoder } from './header-block.js';

/** A control frame of `length` payload bytes with its 8-byte header written; the caller fills the payload. */
function controlFrame(type: number, flags: number, length: number): Buffer {
  if (length > PROTOCOL_MAX_PAYLOAD_BYTES) {
    throw probeError('SPDY_FRAME_TOO_LARGE', `control frame payload of ${length} bytes exceeds 24 bits`, { length, limit: PROTOCOL_MAX_PAYLOAD_BYTES });
  }
  // One buffer per frame, from Node's pool: a session's setup writes a dozen frames.
  const h = Buffer.allocUnsafe(FRAME_HEADER_BYTES + length);
  h.writeUInt16BE(0x8000 | SPDY_VERSION, 0);
  h.writeUInt16BE(type, 2);
  h.writeUInt32BE((((flags & 0xff) << 24) | length) >>> 0, 4);
  return h;
}

/** A control frame whose payload is 32-bit words. */
function wordsFrame(type: number, first: number, second?: number): Buffer {
  const f = controlFrame(type, 0, second === undefined ? 4 : 8);
  f.writeUInt32BE(first >>> 0, FRAME_HEADER_BYTES);
  if (second !== undefined) f.writeUInt32BE(second >>> 0, FRAME_HEADER_BYTES + 4);
  return f;
}

function needEncoder(frame: SpdyFrame, encoder: HeaderBlockEncoder | undefined): HeaderBlockEncoder {
  if (!encoder) throw probeError('SPDY_PROTOCOL', `${frame.type} needs a header encoder`, {});
  return encoder;
}

function checkStreamId(id: number): number {
  if (!Number.isInteger(id) || id < 1 || id > MAX_STREAM_ID) {
    throw probeError('SPDY_PROTOCOL', `stream id ${id} is outside 1..${MAX_STREAM_ID}`, { streamId: id });
  }
  return id;
}

export function dataFrameHeader(streamId: number, flags: number, length: number): Buffer {
  if (length > PROTOCOL_MAX_PAYLOAD_BYTES) {
    throw probeError('SPDY_FRAME_TOO_LARGE', `DATA payload of ${length} bytes exceeds 24 bits`, { streamId, length, limit: PROTOCOL_MAX_PAYLOAD_BYTES });
  }
  const h = Buffer.allocUnsafe(FRAME_HEADER_BYTES);
  h.writeUInt32BE(checkStreamId(streamId) & MAX_STREAM_ID, 0);
  h.writeUInt32BE((((flags & 0xff) << 24) | length) >>> 0, 4);
  return h;
}

/** Serializes any frame into one buffer, ready to write. */
export function serializeFrame(frame: SpdyFrame, encoder?: HeaderBlockEncoder): Buffer {
  switch (frame.type) {
    case 'DATA':
      return Buffer.concat([dataFrameHeader(frame.streamId, frame.flags, frame.data.length), frame.data]);
    case 'SYN_STREAM': {
      const block = needEncoder(frame, encoder).encode(frame.headers);
      const f = controlFrame(ControlType.SYN_STREAM, frame.flags, 10 + block.length);
      f.writeUInt32BE(checkStreamId(frame.streamId), 8);
      f.writeUInt32BE(frame.associatedId & MAX_STREAM_ID, 12);
      f.writeUInt8((frame.priority & 0x7) << 5, 16);
      f.writeUInt8(frame.slot & 0xff, 17);
      block.copy(f, 18);
      return f;
    }
    case 'SYN_REPLY':
    case 'HEADERS': {
      const block = needEncoder(frame, encoder).encode(frame.headers);
      const type = frame.type === 'SYN_REPLY' ? ControlType.SYN_REPLY : ControlType.HEADERS;
      const f = controlFrame(type, frame.flags, 4 + block.length);
      f.writeUInt32BE(checkStreamId(frame.streamId), 8);
      block.copy(f, 12);
      return f;
    }
    case 'RST_STREAM':
      return wordsFrame(ControlType.RST_STREAM, checkStreamId(frame.streamId), frame.status);
    case 'SETTINGS': {
      const f = controlFrame(ControlType.SETTINGS, frame.flags, 4 + frame.entries.length * 8);
      f.writeUInt32BE(frame.entries.length, 8);
      for (let i = 0; i < frame.entries.length; i++) {
        const e = frame.entries[i]!;
        f.writeUInt32BE((((e.flags & 0xff) << 24) | (e.id & 0xffffff)) >>> 0, 12 + i * 8);
        f.writeUInt32BE(e.value >>> 0, 16 + i * 8);
      }
      return f;
    }
    case 'PING':
      return wordsFrame(ControlType.PING, frame.id);
    case 'GOAWAY':
      return wordsFrame(ControlType.GOAWAY, frame.lastGoodStreamId & MAX_STREAM_ID, frame.status);
    case 'WINDOW_UPDATE':
      return wordsFrame(ControlType.WINDOW_UPDATE, checkStreamId(frame.streamId), frame.delta & MAX_STREAM_ID);
  }
}
