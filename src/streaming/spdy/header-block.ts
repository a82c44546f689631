/**
 * SPDY/3 header blocks: the plain name/value encoding and the per-connection
 * zlib contexts primed with the SPDY/3 dictionary.
 *
 * Each direction of a connection keeps ONE zlib stream for its whole life,
 * flushed with Z_SYNC_FLUSH after every block (spdystream write.go / read.go).
 * A stateless inflate cannot read the second block, so these objects must be
 * owned by exactly one session direction.
 *
 * Reading uses our own inflater (inflate.ts): synchronous, so frame handling stays strictly ordered, it stops a
 * zlib bomb at the first byte past the limit, and a session keeps only its output history, not a zlib context.
 * Writing sends stored blocks, or pako's deflate when a level is asked for.
 */
import pako from 'pako';
import { probeError } from '../../errors.js';
import { SPDY3_DICTIONARY } from './dictionary.js';
import type { SpdyHeaders } from './frames.js';
import { InflateLimitError, ZlibStreamInflater } from './inflate.js';

const Z_SYNC_FLUSH = 2;
const DICTIONARY = new Uint8Array(SPDY3_DICTIONARY);
const DEFLATE_CHUNK_BYTES = 1024;
/** BFINAL 0, BTYPE 00, aligned; LEN 0, NLEN 0xffff. */
const SYNC_FLUSH_MARKER = Buffer.from([0x00, 0x00, 0x00, 0xff, 0xff]);

export interface HeaderBlockLimits {
  readonly maxHeaderBlockBytes: number;
  readonly maxHeaderPairs: number;
}

export interface DeflateTuning {
  /** zlib level 0-9; any level interoperates with Go. 0 (default) sends stored blocks and keeps no deflate state. */
  readonly level?: number;
  /** 9-15; smaller windows cost less memory per session. */
  readonly windowBits?: number;
  /** 1-9; smaller costs less memory per session. */
  readonly memLevel?: number;
}

/**
 * Encodes the uncompressed name/value block (names lower-cased, values NUL-joined) into one buffer, sized
 * first: a session's setup encodes several blocks, and a Buffer per field was most of their garbage.
 */
export function encodePlainHeaderBlock(headers: SpdyHeaders): Buffer {
  const names: string[] = [];
  const values: string[] = [];
  let size = 4;
  for (const rawName in headers) {
    if (!Object.hasOwn(headers, rawName)) continue;
    const name = rawName.toLowerCase();
    const value = headers[rawName]!.join('\0');
    names.push(name);
    values.push(value);
    size += 8 + Buffer.byteLength(name, 'utf8') + Buffer.byteLength(value, 'utf8');
  }
  const out = Buffer.allocUnsafe(size);
  let off = out.writeUInt32BE(names.length, 0);
  for (let i = 0; i < names.length; i++) {
    const nameLength = out.write(names[i]!, off + 4, 'utf8');
    out.writeUInt32BE(nameLength, off);
    off += 4 + nameLength;
    const valueLength = out.write(values[i]!, off + 4, 'utf8');
    out.writeUInt32BE(valueLength, off);
    off += 4 + valueLength;
  }
  return out;
}

function blockError(msg: string, offset: number) {
  return probeError('SPDY_HEADER_BLOCK', `header block: ${msg} at byte ${offset}`, { blockOffset: offset });
}

/** The length-prefixed field at `off` ("name" or "value"), checked against the bytes left. */
function fieldLength(block: Buffer, off: number, what: string): number {
  if (off + 4 > block.length) throw blockError(`truncated ${what} length`, off);
  const len = block.readUInt32BE(off);
  if (len > block.length - off - 4) throw blockError(`${what} length ${len} exceeds the bytes left`, off);
  return len;
}

/**
 * Decodes the uncompressed block. Every count is checked against the bytes
 * that remain before anything is allocated (CVE-2026-35469).
 */
export function decodePlainHeaderBlock(block: Buffer, limits: HeaderBlockLimits): SpdyHeaders {
  if (block.length < 4) throw blockError('shorter than its 4-byte pair count', 0);
  const count = block.readUInt32BE(0);
  if (count > limits.maxHeaderPairs) {
    throw probeError('SPDY_HEADER_LIMIT', `header block has ${count} pairs; the limit is ${limits.maxHeaderPairs}`, {
      value: count,
      limit: limits.maxHeaderPairs,
    });
  }
  // Each pair needs at least two 4-byte lengths.
  if (count * 8 > block.length - 4) throw blockError(`pair count ${count} exceeds the block's ${block.length} bytes`, 0);
  const out: Record<string, string[]> = Object.create(null) as Record<string, string[]>;
  let off = 4;
  for (let i = 0; i < count; i++) {
    const nameOffset = off;
    const nameLength = fieldLength(block, off, 'name');
    const name = block.toString('latin1', off + 4, off + 4 + nameLength);
    off += 4 + nameLength;
    // spdystream rejects empty, upper-case and duplicated names (read.go).
    if (name.length === 0) throw blockError('empty header name', nameOffset);
    if (name !== name.toLowerCase()) throw blockError(`upper-case header name "${name}"`, nameOffset);
    if (name in out) throw blockError(`duplicated header name "${name}"`, nameOffset);
    const valueLength = fieldLength(block, off, 'value');
    out[name] = block.toString('utf8', off + 4, off + 4 + valueLength).split('\0');
    off += 4 + valueLength;
  }
  if (off !== block.length) throw blockError(`${block.length - off} bytes after the last pair`, off);
  return out;
}

/**
 * One per connection direction we write. By default header blocks are sent as
 * zlib *stored* blocks: a 2-byte zlib header (no FDICT) once, then each block
 * byte-aligned as it is. Any level interoperates (spdystream reads with
 * zlib.NewReaderDict, which ignores the dictionary when FDICT is unset), and a
 * stored stream needs no deflate state at all: no window, hash tables or
 * buffers per held session. `level` 1-9 compresses with pako instead.
 */
export class HeaderBlockEncoder {
  private readonly deflate: pako.Deflate | undefined;
  private chunks: Uint8Array[] = [];
  private started = false;

  constructor(tuning: DeflateTuning = {}) {
    if (!tuning.level) return;
    this.deflate = new pako.Deflate({
      level: tuning.level as pako.DeflateFunctionOptions['level'],
      windowBits: tuning.windowBits ?? 11,
      memLevel: (tuning.memLevel ?? 1) as pako.DeflateFunctionOptions['memLevel'],
      dictionary: DICTIONARY,
      chunkSize: DEFLATE_CHUNK_BYTES,
    });
    this.deflate.onData = (chunk: Uint8Array) => {
      this.chunks.push(chunk);
    };
  }

  encode(headers: SpdyHeaders): Buffer {
    const plain = encodePlainHeaderBlock(headers);
    if (!this.deflate) return this.stored(plain);
    this.chunks = [];
    if (!this.deflate.push(plain, Z_SYNC_FLUSH)) {
      throw probeError('SPDY_HEADER_BLOCK', `header compression failed: ${this.deflate.msg || 'zlib error'}`, {});
    }
    const out = Buffer.concat(this.chunks);
    this.chunks = [];
    return out;
  }

  private stored(plain: Buffer): Buffer {
    const pieces = Math.ceil(plain.length / 0xffff);
    const zlibHeader = this.started ? 0 : 2;
    const out = Buffer.allocUnsafe(zlibHeader + pieces * 5 + plain.length + SYNC_FLUSH_MARKER.length);
    let at = 0;
    if (!this.started) {
      // CMF 0x78 (deflate, 32 KiB window), FLG 0x01: no FDICT, (0x7801 % 31) === 0.
      out[at++] = 0x78;
      out[at++] = 0x01;
      this.started = true;
    }
    for (let off = 0; off < plain.length; off += 0xffff) {
      const length = Math.min(0xffff, plain.length - off);
      out[at] = 0x00; // BFINAL 0, BTYPE 00 (stored); we are always byte-aligned here
      out.writeUInt16LE(length, at + 1);
      out.writeUInt16LE(~length & 0xffff, at + 3);
      at += 5 + plain.copy(out, at + 5, off, off + length);
    }
    // The Z_SYNC_FLUSH marker: an empty stored block. Go's compress/flate hands out a stored
    // block's bytes only when it reaches the next block header; without this marker it reads
    // past the frame, hits EOF, and its (sticky) error breaks every later header block.
    SYNC_FLUSH_MARKER.copy(out, at);
    return out;
  }
}

/** One per connection direction we read: inflates header blocks within limits. */
export class HeaderBlockDecoder {
  private readonly inflater = new ZlibStreamInflater(DICTIONARY);
  private broken: Error | undefined;

  constructor(private readonly limits: HeaderBlockLimits) {}

  decode(compressed: Buffer): SpdyHeaders {
    // A failed block leaves the shared zlib stream in an unknown state: every later block is unreadable.
    if (this.broken) throw probeError('SPDY_HEADER_BLOCK', 'header decompression context is broken by an earlier error', {}, this.broken);
    let plain: Buffer;
    try {
      plain = this.inflater.push(compressed, this.limits.maxHeaderBlockBytes);
    } catch (err) {
      this.broken = err as Error;
      if (err instanceof InflateLimitError) {
        // Inflation stopped at the first byte past the limit.
        throw probeError('SPDY_HEADER_LIMIT', `header block inflates past ${this.limits.maxHeaderBlockBytes} bytes (zlib bomb or oversized headers)`, {
          limit: this.limits.maxHeaderBlockBytes,
          value: err.produced,
        });
      }
      throw probeError('SPDY_HEADER_BLOCK', `header block does not inflate: ${(err as Error).message}`, {});
    }
    return decodePlainHeaderBlock(plain, this.limits);
  }
}
