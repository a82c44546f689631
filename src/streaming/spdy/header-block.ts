/**
 * SPDY/3 header blocks: the plain name/value encoding and the per-connection
 * zlib contexts primed with the SPDY/3 dictionary.
 *
 * Each direction of a connection keeps ONE zlib stream for its whole life,
 * flushed with Z_SYNC_FLUSH after every block (spdystream write.go / read.go).
 * A stateless inflate cannot read the second block, so these objects must be
 * owned by exactly one session direction.
 *
 * pako is used instead of node:zlib because it inflates synchronously on a
 * persistent context, which keeps frame handling strictly ordered and lets us
 * stop a zlib bomb after the first over-limit chunk.
 */
import pako from 'pako';
import { probeError } from '../../errors.js';
import { SPDY3_DICTIONARY } from './dictionary.js';
import type { SpdyHeaders } from './frames.js';

const Z_SYNC_FLUSH = 2;
const DICTIONARY = new Uint8Array(SPDY3_DICTIONARY);
/**
 * Output is produced in chunks of this size, so a bomb costs at most limit + one
 * chunk. Small, because every held session keeps one per direction (bench:
 * memory per idle session); Kubernetes header blocks are a few dozen bytes.
 */
const INFLATE_CHUNK_BYTES = 4 * 1024;
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

/** Encodes the uncompressed name/value block (names lower-cased, values NUL-joined). */
export function encodePlainHeaderBlock(headers: SpdyHeaders): Buffer {
  const entries = Object.entries(headers);
  const parts: Buffer[] = [];
  const count = Buffer.alloc(4);
  count.writeUInt32BE(entries.length);
  parts.push(count);
  for (const [rawName, values] of entries) {
    const name = Buffer.from(rawName.toLowerCase(), 'utf8');
    const value = Buffer.from(values.join('\0'), 'utf8');
    const nl = Buffer.alloc(4);
    nl.writeUInt32BE(name.length);
    const vl = Buffer.alloc(4);
    vl.writeUInt32BE(value.length);
    parts.push(nl, name, vl, value);
  }
  return Buffer.concat(parts);
}

/**
 * Decodes the uncompressed block. Every count is checked against the bytes
 * that remain before anything is allocated (CVE-2026-35469).
 */
export function decodePlainHeaderBlock(block: Buffer, limits: HeaderBlockLimits): SpdyHeaders {
  const fail = (msg: string, offset: number) => probeError('SPDY_HEADER_BLOCK', `header block: ${msg} at byte ${offset}`, { blockOffset: offset });
  if (block.length < 4) throw fail('shorter than its 4-byte pair count', 0);
  const count = block.readUInt32BE(0);
  if (count > limits.maxHeaderPairs) {
    throw probeError('SPDY_HEADER_LIMIT', `header block has ${count} pairs; the limit is ${limits.maxHeaderPairs}`, {
      value: count,
      limit: limits.maxHeaderPairs,
    });
  }
  // Each pair needs at least two 4-byte lengths.
  if (count * 8 > block.length - 4) throw fail(`pair count ${count} exceeds the block's ${block.length} bytes`, 0);
  const out: Record<string, string[]> = Object.create(null) as Record<string, string[]>;
  let off = 4;
  const readField = (what: string): Buffer => {
    if (off + 4 > block.length) throw fail(`truncated ${what} length`, off);
    const len = block.readUInt32BE(off);
    off += 4;
    if (len > block.length - off) throw fail(`${what} length ${len} exceeds the bytes left`, off - 4);
    const field = block.subarray(off, off + len);
    off += len;
    return field;
  };
  for (let i = 0; i < count; i++) {
    const nameOffset = off;
    const name = readField('name').toString('latin1');
    // spdystream rejects empty, upper-case and duplicated names (read.go).
    if (name.length === 0) throw fail('empty header name', nameOffset);
    if (name !== name.toLowerCase()) throw fail(`upper-case header name "${name}"`, nameOffset);
    if (name in out) throw fail(`duplicated header name "${name}"`, nameOffset);
    const value = readField('value').toString('utf8');
    out[name] = value.split('\0');
  }
  if (off !== block.length) throw fail(`${block.length - off} bytes after the last pair`, off);
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
    const parts: Buffer[] = [];
    if (!this.started) {
      // CMF 0x78 (deflate, 32 KiB window), FLG 0x01: no FDICT, (0x7801 % 31) === 0.
      parts.push(Buffer.from([0x78, 0x01]));
      this.started = true;
    }
    for (let off = 0; off < plain.length; off += 0xffff) {
      const piece = plain.subarray(off, off + 0xffff);
      const head = Buffer.alloc(5);
      head[0] = 0x00; // BFINAL 0, BTYPE 00 (stored); we are always byte-aligned here
      head.writeUInt16LE(piece.length, 1);
      head.writeUInt16LE(~piece.length & 0xffff, 3);
      parts.push(head, piece);
    }
    // The Z_SYNC_FLUSH marker: an empty stored block. Go's compress/flate hands out a stored
    // block's bytes only when it reaches the next block header; without this marker it reads
    // past the frame, hits EOF, and its (sticky) error breaks every later header block.
    parts.push(SYNC_FLUSH_MARKER);
    return Buffer.concat(parts);
  }
}

/** One per connection direction we read: inflates header blocks within limits. */
export class HeaderBlockDecoder {
  private readonly inflate: pako.Inflate;
  private chunks: Uint8Array[] = [];
  private produced = 0;
  private broken: Error | undefined;

  constructor(private readonly limits: HeaderBlockLimits) {
    this.inflate = new pako.Inflate({ dictionary: DICTIONARY, chunkSize: INFLATE_CHUNK_BYTES });
    this.inflate.onData = (chunk: Uint8Array) => {
      this.produced += chunk.length;
      // Thrown from inside pako's loop: inflation stops at the first chunk past the limit.
      if (this.produced > this.limits.maxHeaderBlockBytes) {
        throw probeError('SPDY_HEADER_LIMIT', `header block inflates past ${this.limits.maxHeaderBlockBytes} bytes (zlib bomb or oversized headers)`, {
          limit: this.limits.maxHeaderBlockBytes,
          value: this.produced,
        });
      }
      this.chunks.push(chunk);
    };
  }

  decode(compressed: Buffer): SpdyHeaders {
    // A failed block leaves the shared zlib stream in an unknown state: every later block is unreadable.
    if (this.broken) throw probeError('SPDY_HEADER_BLOCK', 'header decompression context is broken by an earlier error', {}, this.broken);
    this.chunks = [];
    this.produced = 0;
    try {
      const ok = this.inflate.push(compressed, Z_SYNC_FLUSH);
      if (!ok || (this.inflate.err !== 0 && this.inflate.err !== 1)) {
        throw probeError('SPDY_HEADER_BLOCK', `header block does not inflate: ${this.inflate.msg || `zlib error ${this.inflate.err}`}`, {});
      }
    } catch (err) {
      this.broken = err as Error;
      this.chunks = [];
      throw err;
    }
    const plain = Buffer.concat(this.chunks);
    this.chunks = [];
    return decodePlainHeaderBlock(plain, this.limits);
  }
}
