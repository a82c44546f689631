/**
 * SPDY/3 frame serializer. Each call returns one complete frame; header blocks
 * go through the caller's persistent HeaderBlockEncoder (one per connection).
 */
import { probeError } from '../../errors.js';
import { ControlType, FRAME_HEADER_BYTES, MAX_STREAM_ID, PROTOCOL_MAX_PAYLOAD_BYTES, SPDY_VERSION } from './constants.js';
import type { SpdyFrame } from './frames.js';
import type { HeaderBlockEncoder } from './header-block.js';

function controlHeader(type: number, flags: number, length: number): Buffer {
  if (length > PROTOCOL_MAX_PAYLOAD_BYTES) {
    throw probeError('SPDY_FRAME_TOO_LARGE', `control frame payload of ${length} bytes exceeds 24 bits`, { length, limit: PROTOCOL_MAX_PAYLOAD_BYTES });
  }
  const h = Buffer.alloc(FRAME_HEADER_BYTES);
  h.writeUInt16BE(0x8000 | SPDY_VERSION, 0);
  h.writeUInt16BE(type, 2);
  h.writeUInt32BE((((flags & 0xff) << 24) | length) >>> 0, 4);
  return h;
}

function u32(...values: number[]): Buffer {
  const b = Buffer.alloc(values.length * 4);
  values.forEach((v, i) => b.writeUInt32BE(v >>> 0, i * 4));
  return b;
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
  return u32(checkStreamId(streamId) & MAX_STREAM_ID, (((flags & 0xff) << 24) | length) >>> 0);
}

/** Serializes any frame into one buffer, ready to write. */
export function serializeFrame(frame: SpdyFrame, encoder?: HeaderBlockEncoder): Buffer {
  const needEncoder = (): HeaderBlockEncoder => {
    if (!encoder) throw probeError('SPDY_PROTOCOL', `${frame.type} needs a header encoder`, {});
    return encoder;
  };
  switch (frame.type) {
    case 'DATA':
      return Buffer.concat([dataFrameHeader(frame.streamId, frame.flags, frame.data.length), frame.data]);
    case 'SYN_STREAM': {
      const block = needEncoder().encode(frame.headers);
      const fixed = Buffer.alloc(10);
      fixed.writeUInt32BE(checkStreamId(frame.streamId), 0);
      fixed.writeUInt32BE(frame.associatedId & MAX_STREAM_ID, 4);
      fixed.writeUInt8((frame.priority & 0x7) << 5, 8);
      fixed.writeUInt8(frame.slot & 0xff, 9);
      return Buffer.concat([controlHeader(ControlType.SYN_STREAM, frame.flags, 10 + block.length), fixed, block]);
    }
    case 'SYN_REPLY':
    case 'HEADERS': {
      const block = needEncoder().encode(frame.headers);
      const type = frame.type === 'SYN_REPLY' ? ControlType.SYN_REPLY : ControlType.HEADERS;
      return Buffer.concat([controlHeader(type, frame.flags, 4 + block.length), u32(checkStreamId(frame.streamId)), block]);
    }
    case 'RST_STREAM':
      return Buffer.concat([controlHeader(ControlType.RST_STREAM, 0, 8), u32(checkStreamId(frame.streamId), frame.status)]);
    case 'SETTINGS': {
      const body = Buffer.alloc(4 + frame.entries.length * 8);
      body.writeUInt32BE(frame.entries.length, 0);
      frame.entries.forEach((e, i) => {
        body.writeUInt32BE((((e.flags & 0xff) << 24) | (e.id & 0xffffff)) >>> 0, 4 + i * 8);
        body.writeUInt32BE(e.value >>> 0, 8 + i * 8);
      });
      return Buffer.concat([controlHeader(ControlType.SETTINGS, frame.flags, body.length), body]);
    }
    case 'PING':
      return Buffer.concat([controlHeader(ControlType.PING, 0, 4), u32(frame.id)]);
    case 'GOAWAY':
      return Buffer.concat([controlHeader(ControlType.GOAWAY, 0, 8), u32(frame.lastGoodStreamId & MAX_STREAM_ID, frame.status)]);
    case 'WINDOW_UPDATE':
      return Buffer.concat([controlHeader(ControlType.WINDOW_UPDATE, 0, 8), u32(checkStreamId(frame.streamId), frame.delta & MAX_STREAM_ID)]);
  }
}
