/**
 * Writing one binary WebSocket message made of several pieces (a SPDY frame's
 * 8-byte header and its payload, or a tick's frames) without joining them
 * first (RFC 6455 §5.2). Reading frames is ws-receiver.ts.
 *
 * A client masks: the pieces are masked straight into one new buffer, header
 * included (one pass over the bytes, the only copy masking allows, since the
 * pieces belong to the caller). A server does not mask: the emulator's writer
 * (lab/emulator/ws-server-pieces.ts) sends its header and the pieces as they
 * are, in one writev, with the header helpers exported here.
 */
import { randomFillSync } from 'node:crypto';
import { createRequire } from 'node:module';
import { endianness } from 'node:os';
import { frameBuffer, type FrameBuffer } from './frame-pool.js';

const OPCODE_BINARY = 0x2;
const FIN = 0x80;
const MASK_BIT = 0x80;

type MaskFn = (source: Buffer, mask: Buffer, output: Buffer, offset: number, length: number) => void;

const LITTLE_ENDIAN = endianness() === 'LE';

/**
 * `output[offset + i] = source[i] ^ mask[i & 3]` in JavaScript, where bufferutil cannot load (the arm64 Lambda
 * and task: it has no linux-arm64 prebuild). Four bytes at a time when both sides are 4-byte aligned (5× ws's
 * byte loop on this machine: 2.3 GB/s against 0.42), byte by byte otherwise. Exported for its test.
 */
export const maskInJs: MaskFn = (source, key, output, offset, length) => {
  let i = 0;
  if (length >= 16 && (source.byteOffset & 3) === 0 && ((output.byteOffset + offset) & 3) === 0) {
    const words = length >>> 2;
    const from = new Uint32Array(source.buffer, source.byteOffset, words);
    const to = new Uint32Array(output.buffer, output.byteOffset + offset, words);
    // A Uint32Array reads in the platform's byte order; the key must be read the same way.
    const k = LITTLE_ENDIAN ? key.readUInt32LE(0) : key.readUInt32BE(0);
    for (let w = 0; w < words; w++) to[w] = from[w]! ^ k;
    i = words << 2;
  }
  for (; i < length; i++) output[offset + i] = source[i]! ^ key[i & 3]!;
};

/**
 * Masks as ws does (exported for its test): with the optional native bufferutil when it loads (required at run time: a native addon is
 * never bundled, scripts/build.mjs), else in JavaScript; short pieces always in JavaScript (ws's threshold).
 */
export const mask: MaskFn = (() => {
  try {
    const native = createRequire(import.meta.url)('bufferutil') as { mask: MaskFn };
    return (source, key, output, offset, length) => (length < 48 ? maskInJs : native.mask)(source, key, output, offset, length);
  } catch {
    return maskInJs;
  }
})();

/** Bytes of the frame header for a payload of `length` bytes, with the 4-byte masking key when masked. */
export function headerBytes(length: number, masked: boolean): number {
  return (length < 126 ? 2 : length < 65536 ? 4 : 10) + (masked ? 4 : 0);
}

/** Writes a FIN binary frame header at `out[0..]`; returns its length. */
export function writeHeader(out: Buffer, length: number, maskKey: Buffer | undefined): number {
  out[0] = FIN | OPCODE_BINARY;
  const m = maskKey ? MASK_BIT : 0;
  let at: number;
  if (length < 126) {
    out[1] = m | length;
    at = 2;
  } else if (length < 65536) {
    out[1] = m | 126;
    out.writeUInt16BE(length, 2);
    at = 4;
  } else {
    out[1] = m | 127;
    out.writeUInt32BE(Math.floor(length / 2 ** 32), 2);
    out.writeUInt32BE(length >>> 0, 6);
    at = 10;
  }
  if (maskKey) {
    maskKey.copy(out, at);
    at += 4;
  }
  return at;
}

// Masking keys come from a pool of random bytes refilled 8 KiB at a time (as ws does): RFC 6455 §5.3 wants
// them unpredictable, and one randomFillSync per frame would cost more than the masking.
const KEY_POOL_BYTES = 8 * 1024;
const keyPool = Buffer.alloc(KEY_POOL_BYTES);
let keyPoolAt = KEY_POOL_BYTES;

function nextMaskKey(): Buffer {
  if (keyPoolAt === KEY_POOL_BYTES) {
    randomFillSync(keyPool);
    keyPoolAt = 0;
  }
  const key = keyPool.subarray(keyPoolAt, keyPoolAt + 4);
  keyPoolAt += 4;
  return key;
}

const rotated = Buffer.alloc(4);

export function total(pieces: readonly Buffer[]): number {
  let n = 0;
  for (const p of pieces) n += p.length;
  return n;
}

/**
 * One masked binary frame holding `pieces` in order: header and masked payload in one buffer (a client's
 * message), from the frame pool: release it once the socket has written it. A piece that starts at a payload offset not divisible by 4 is masked with the key rotated to match.
 */
export function maskedBinaryFrame(pieces: readonly Buffer[]): FrameBuffer {
  const length = total(pieces);
  const key = nextMaskKey();
  const frame = frameBuffer(headerBytes(length, true) + length);
  const out = frame.buf;
  let at = writeHeader(out, length, key);
  let payloadAt = 0;
  for (const piece of pieces) {
    if (piece.length === 0) continue;
    const r = payloadAt & 3;
    const k = r === 0 ? key : (rotated.set([key[r]!, key[(r + 1) & 3]!, key[(r + 2) & 3]!, key[(r + 3) & 3]!]), rotated);
    mask(piece, k, out, at, piece.length);
    at += piece.length;
    payloadAt += piece.length;
  }
  return frame;
}
