/** SPDY/3 wire constants as moby/spdystream spdy/types.go defines them. */

export const SPDY_VERSION = 3;
export const FRAME_HEADER_BYTES = 8;
/** The length field is 24 bits (spdystream MaxDataLength). */
export const PROTOCOL_MAX_PAYLOAD_BYTES = 0xffffff;
export const MAX_STREAM_ID = 0x7fffffff;

export const ControlType = {
  SYN_STREAM: 1,
  SYN_REPLY: 2,
  RST_STREAM: 3,
  SETTINGS: 4,
  PING: 6,
  GOAWAY: 7,
  HEADERS: 8,
  WINDOW_UPDATE: 9,
} as const;
export type ControlTypeName = keyof typeof ControlType;

export const CONTROL_TYPE_NAMES: Readonly<Record<number, ControlTypeName>> = Object.fromEntries(
  Object.entries(ControlType).map(([name, code]) => [code, name as ControlTypeName]),
);

export const FLAG_FIN = 0x01;
export const FLAG_UNIDIRECTIONAL = 0x02;
export const FLAG_SETTINGS_CLEAR = 0x01;

export const RstStatus = {
  PROTOCOL_ERROR: 1,
  INVALID_STREAM: 2,
  REFUSED_STREAM: 3,
  UNSUPPORTED_VERSION: 4,
  CANCEL: 5,
  INTERNAL_ERROR: 6,
  FLOW_CONTROL_ERROR: 7,
  STREAM_IN_USE: 8,
  STREAM_ALREADY_CLOSED: 9,
  INVALID_CREDENTIALS: 10,
  FRAME_TOO_LARGE: 11,
} as const;

export const RST_STATUS_NAMES: Readonly<Record<number, string>> = Object.fromEntries(Object.entries(RstStatus).map(([name, code]) => [code, name]));

export const GoAwayStatus = { OK: 0, PROTOCOL_ERROR: 1, INTERNAL_ERROR: 2 } as const;

export const GOAWAY_STATUS_NAMES: Readonly<Record<number, string>> = Object.fromEntries(Object.entries(GoAwayStatus).map(([name, code]) => [code, name]));

/**
 * Limits for everything a peer can make us allocate (CVE-2026-35469 is the
 * reason each exists). Each default is far above what Kubernetes sends
 * (DATA ≤ 32 KiB, header blocks of a few dozen bytes) and far below what
 * would hurt a 128 MB Lambda.
 */
export interface SpdyLimits {
  /** Largest frame payload accepted, in bytes (DATA and control). Max 16 777 215. */
  readonly maxFramePayloadBytes: number;
  /** Largest header block after inflation, in bytes; stops zlib bombs. */
  readonly maxHeaderBlockBytes: number;
  /** Most name/value pairs in one header block. */
  readonly maxHeaderPairs: number;
  /** Most entries in one SETTINGS frame. */
  readonly maxSettingsEntries: number;
  /** Most streams open at once on one session. */
  readonly maxConcurrentStreams: number;
}

export const DEFAULT_SPDY_LIMITS: SpdyLimits = Object.freeze({
  maxFramePayloadBytes: 1024 * 1024,
  maxHeaderBlockBytes: 64 * 1024,
  maxHeaderPairs: 128,
  maxSettingsEntries: 32,
  maxConcurrentStreams: 256,
});

/** apimachinery spdy connection.go createStreamResponseTimeout: how long kubectl waits for each SYN_REPLY. */
export const STREAM_REPLY_TIMEOUT_MS = 30_000;

/** client-go copies stdin in chunks of at most 32 KiB; we write DATA no larger. */
export const DATA_CHUNK_BYTES = 32 * 1024;

/**
 * How much a writer lets queue on its transport before it waits (a SPDY session for 'drain', the tunnel's
 * byte stream for its WebSocket): at Node's 16 KiB mark every 32 KiB frame would wait for the one before
 * it to leave (stop-and-go, measured at 0.87× kubectl).
 */
export const SEND_QUEUE_BYTES = 1024 * 1024;

/**
 * A stream's high-water marks (both sides) in a session with readBackpressure: how much of one stream may wait
 * unread before the connection's reading stops, and how much it may queue to write before its writer is told to
 * wait. At Node's 16 KiB every 32 KiB frame paused and resumed the socket's reading (the emulator's echo pipes a
 * stream into itself); 256 KiB read 1.08–1.35× faster in four side-by-side runs (2026-12-05). spdystream's own
 * bound is a queue of 50 frames (moby/spdystream connection.go QUEUE_SIZE), up to 1.6 MiB of 32 KiB frames.
 */
export const HELD_STREAM_BYTES = 256 * 1024;
