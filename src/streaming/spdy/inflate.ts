/**
 * The inflating half of a SPDY/3 header-block zlib stream (RFC 1950 / RFC 1951), written for what a header
 * block is: a few dozen bytes per block, each block ending in a sync flush, one stream per connection direction.
 *
 * Why not pako or node:zlib: a zlib context keeps a 32 KiB window and ~7 KiB of tables in ArrayBuffers (pako)
 * or malloc'd memory (node:zlib) for the whole life of a session, and pako's are freed only when V8 collects the
 * old generation: 100 idle SPDY exec sessions left ~8 MiB of malloc heap behind (bench: memory per idle session).
 * Here the history is the connection's own output (hundreds of bytes), read together with the shared SPDY/3
 * dictionary, and nothing else outlives a call. node:zlib's one-shot inflate, with no persistent context, would
 * re-inflate every earlier block on each call.
 *
 * It refuses what zlib refuses (a bad header, a dictionary whose Adler-32 is not the one asked for, a distance
 * before the start of the data, an invalid or over-subscribed code, a bad stored length, a wrong Adler-32 trailer,
 * data after the end) and stops a zlib bomb at the first byte past the limit. The differential tests inflate
 * node:zlib's and pako's output at every level; real kubectl's Go compress/zlib blocks reach it in the emulator.
 * Structure after Mark Adler's puff.c (zlib contrib/puff), the reference decoder of RFC 1951.
 */

/** A malformed zlib stream; the message says what and where. */
export class InflateError extends Error {}

/** More output than the caller allows from one block; `produced` is how far it got. */
export class InflateLimitError extends Error {
  constructor(readonly produced: number) {
    super(`inflates past the limit (${produced} bytes so far)`);
  }
}

const MAXBITS = 15;
const EMPTY = Buffer.alloc(0);
const LENGTH_BASE = [3, 4, 5, 6, 7, 8, 9, 10, 11, 13, 15, 17, 19, 23, 27, 31, 35, 43, 51, 59, 67, 83, 99, 115, 131, 163, 195, 227, 258];
const LENGTH_EXTRA = [0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3, 4, 4, 4, 4, 5, 5, 5, 5, 0];
const DIST_BASE = [
  1, 2, 3, 4, 5, 7, 9, 13, 17, 25, 33, 49, 65, 97, 129, 193, 257, 385, 513, 769, 1025, 1537, 2049, 3073, 4097, 6145, 8193, 12289, 16385, 24577,
];
const DIST_EXTRA = [0, 0, 0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6, 7, 7, 8, 8, 9, 9, 10, 10, 11, 11, 12, 12, 13, 13];
const CODE_LENGTH_ORDER = [16, 17, 18, 0, 8, 7, 9, 6, 10, 5, 11, 4, 12, 3, 13, 2, 14, 1, 15];

/** A canonical Huffman code: how many codes of each length, and the symbols in code order. */
interface Huffman {
  readonly count: Uint16Array;
  readonly symbol: Uint16Array;
}

/** Builds a code from code lengths; returns how many codes are left unused (negative: over-subscribed). */
function buildHuffman(lengths: ArrayLike<number>, n: number): { code: Huffman; left: number } {
  const count = new Uint16Array(MAXBITS + 1);
  const symbol = new Uint16Array(n);
  for (let s = 0; s < n; s++) count[lengths[s]!]!++;
  let left = 1;
  if (count[0] === n) return { code: { count, symbol }, left: 0 };
  for (let len = 1; len <= MAXBITS; len++) {
    left = (left << 1) - count[len]!;
    if (left < 0) return { code: { count, symbol }, left };
  }
  const offs = new Uint16Array(MAXBITS + 1);
  for (let len = 1; len < MAXBITS; len++) offs[len + 1] = offs[len]! + count[len]!;
  for (let s = 0; s < n; s++) if (lengths[s] !== 0) symbol[offs[lengths[s]!]!++] = s;
  return { code: { count, symbol }, left };
}

/** Over-subscribed, or incomplete other than as a single one-bit code (the only incomplete code zlib's inftrees.c allows). */
function incomplete(h: { code: Huffman; left: number }): boolean {
  return h.left < 0 || (h.left > 0 && h.code.count[1]! + h.code.count[0]! !== h.code.symbol.length);
}

let fixedCodes: { lengths: Huffman; distances: Huffman } | undefined;
function fixed(): { lengths: Huffman; distances: Huffman } {
  if (!fixedCodes) {
    const l = new Uint8Array(288);
    l.fill(8, 0, 144).fill(9, 144, 256).fill(7, 256, 280).fill(8, 280, 288);
    fixedCodes = { lengths: buildHuffman(l, 288).code, distances: buildHuffman(new Uint8Array(30).fill(5), 30).code };
  }
  return fixedCodes;
}

/** Adler-32 of `data[from, to)` continued from `adler`. */
function adler32(adler: number, data: Uint8Array, from: number, to: number): number {
  let a = adler & 0xffff;
  let b = adler >>> 16;
  for (let i = from; i < to; ) {
    const end = Math.min(to, i + 3800); // 3800 bytes keep a and b exact in doubles before the modulo
    for (; i < end; i++) {
      a += data[i]!;
      b += a;
    }
    a %= 65521;
    b %= 65521;
  }
  return ((b << 16) | a) >>> 0;
}

export class ZlibStreamInflater {
  /** This stream's output so far: the last window of it (what a distance can still reach) and this call's. */
  private out: Buffer = EMPTY;
  private outLength = 0;
  /** Output bytes dropped from the front of `out`: once any are, the dictionary is out of reach. */
  private slid = false;
  private windowBytes = 32768;
  private useDictionary = false;
  private headerRead = false;
  private ended = false;
  private adler = 1;
  private adlerDone = 0;
  // Input of the current call, and bits carried from one call to the next.
  private input: Buffer = EMPTY;
  private pos = 0;
  private bitBuffer = 0;
  private bitCount = 0;
  private limit = 0;
  private produced = 0;

  /** `dictionary`: the preset dictionary the stream may ask for (FDICT), e.g. SPDY/3's. */
  constructor(private readonly dictionary: Uint8Array) {}

  /**
   * Inflates the next piece of the stream (one header block, ending in a sync flush) and returns its output.
   * Throws InflateError on a malformed stream and InflateLimitError past `limit` bytes of output.
   */
  push(input: Buffer, limit: number): Buffer {
    this.input = input;
    this.pos = 0;
    this.limit = limit;
    this.produced = 0;
    if (!this.headerRead) this.readHeader();
    while (this.pos < input.length) {
      if (this.ended) throw new InflateError('data after the end of the zlib stream');
      const last = this.bits(1);
      const type = this.bits(2);
      if (type === 0) this.stored();
      else if (type === 1) this.codes(fixed().lengths, fixed().distances);
      else if (type === 2) this.dynamic();
      else throw new InflateError('invalid block type 3');
      if (last) this.finish();
    }
    this.input = EMPTY;
    return Buffer.from(this.out.subarray(this.outLength - this.produced, this.outLength));
  }

  private readHeader(): void {
    const cmf = this.byte();
    const flg = this.byte();
    if ((cmf & 0x0f) !== 8) throw new InflateError(`unknown compression method ${cmf & 0x0f} in the zlib header`);
    if (cmf >>> 4 > 7) throw new InflateError(`invalid window size ${cmf >>> 4} in the zlib header`);
    if (((cmf << 8) | flg) % 31 !== 0) throw new InflateError('incorrect zlib header check');
    this.windowBytes = 1 << ((cmf >>> 4) + 8);
    if (flg & 0x20) {
      const id = ((this.byte() << 24) | (this.byte() << 16) | (this.byte() << 8) | this.byte()) >>> 0;
      const ours = adler32(1, this.dictionary, 0, this.dictionary.length);
      if (id !== ours) throw new InflateError(`the stream asks for dictionary ${id.toString(16)}, not SPDY/3's (${ours.toString(16)})`);
      this.useDictionary = true;
    }
    this.headerRead = true;
  }

  private finish(): void {
    this.bitBuffer = 0;
    this.bitCount = 0;
    const expected = ((this.byte() << 24) | (this.byte() << 16) | (this.byte() << 8) | this.byte()) >>> 0;
    this.adler = adler32(this.adler, this.out, this.adlerDone, this.outLength);
    this.adlerDone = this.outLength;
    if (expected !== this.adler) throw new InflateError('incorrect data check (Adler-32)');
    this.ended = true;
  }

  private byte(): number {
    if (this.pos >= this.input.length) throw new InflateError('the block ends inside the zlib stream (no sync flush)');
    return this.input[this.pos++]!;
  }

  private bits(need: number): number {
    let buf = this.bitBuffer;
    while (this.bitCount < need) {
      buf |= this.byte() << this.bitCount;
      this.bitCount += 8;
    }
    this.bitBuffer = buf >>> need;
    this.bitCount -= need;
    return buf & ((1 << need) - 1);
  }

  /**
   * Room for `n` more output bytes within the limit. Keeps the window (what a distance can reach) and this call's
   * output, in a buffer that grows to the window plus 4 KiB and then slides: a long-lived port-forward session's
   * decoder stays near 36 KiB, a short exec session's at a few hundred bytes.
   */
  private reserve(n: number): void {
    if (this.produced + n > this.limit) throw new InflateLimitError(this.produced + n);
    const keep = this.windowBytes + this.produced;
    this.produced += n;
    if (this.outLength + n <= this.out.length) return;
    if (this.outLength > keep) {
      this.adler = adler32(this.adler, this.out, this.adlerDone, this.outLength);
      this.out.copy(this.out, 0, this.outLength - keep, this.outLength);
      this.adlerDone = keep;
      this.outLength = keep;
      this.slid = true;
      if (this.outLength + n <= this.out.length) return;
    }
    const needed = this.outLength + n;
    const grown = Buffer.alloc(Math.max(needed, Math.min(2 * needed, this.windowBytes + 4096), 256));
    this.out.copy(grown, 0, 0, this.outLength);
    this.out = grown;
  }

  private stored(): void {
    this.bitBuffer = 0;
    this.bitCount = 0;
    const len = this.byte() | (this.byte() << 8);
    const nlen = this.byte() | (this.byte() << 8);
    if (len !== (~nlen & 0xffff)) throw new InflateError('invalid stored block lengths');
    if (this.pos + len > this.input.length) throw new InflateError('the block ends inside a stored block (no sync flush)');
    this.reserve(len);
    this.input.copy(this.out, this.outLength, this.pos, this.pos + len);
    this.outLength += len;
    this.pos += len;
  }

  private decode(h: Huffman): number {
    let code = 0;
    let first = 0;
    let index = 0;
    for (let len = 1; len <= MAXBITS; len++) {
      code |= this.bits(1);
      const count = h.count[len]!;
      if (code - count < first) return h.symbol[index + (code - first)]!;
      index += count;
      first = (first + count) << 1;
      code <<= 1;
    }
    throw new InflateError('invalid code');
  }

  private codes(lengths: Huffman, distances: Huffman): void {
    for (;;) {
      const symbol = this.decode(lengths);
      if (symbol < 256) {
        this.reserve(1);
        this.out[this.outLength++] = symbol;
        continue;
      }
      if (symbol === 256) return;
      const s = symbol - 257;
      if (s >= 29) throw new InflateError('invalid literal/length code');
      const len = LENGTH_BASE[s]! + this.bits(LENGTH_EXTRA[s]!);
      const d = this.decode(distances);
      if (d >= 30) throw new InflateError('invalid distance code');
      const dist = DIST_BASE[d]! + this.bits(DIST_EXTRA[d]!);
      if (dist > this.windowBytes) throw new InflateError('invalid distance too far back');
      this.reserve(len);
      const dictionaryReach = this.useDictionary && !this.slid ? this.dictionary.length : 0;
      if (dist > this.outLength + dictionaryReach) throw new InflateError('invalid distance too far back');
      for (let i = 0; i < len; i++) {
        const back = this.outLength - dist;
        this.out[this.outLength++] = back >= 0 ? this.out[back]! : this.dictionary[this.dictionary.length + back]!;
      }
    }
  }

  private dynamic(): void {
    const nlen = this.bits(5) + 257;
    const ndist = this.bits(5) + 1;
    const ncode = this.bits(4) + 4;
    if (nlen > 286 || ndist > 30) throw new InflateError('too many length or distance symbols');
    const lengths = new Uint8Array(nlen + ndist);
    for (let i = 0; i < ncode; i++) lengths[CODE_LENGTH_ORDER[i]!] = this.bits(3);
    const lencode = buildHuffman(lengths, 19);
    if (lencode.left !== 0) throw new InflateError('invalid code lengths set');
    lengths.fill(0, 0, 19);
    for (let i = 0; i < nlen + ndist; ) {
      let symbol = this.decode(lencode.code);
      if (symbol < 16) {
        lengths[i++] = symbol;
        continue;
      }
      let len = 0;
      if (symbol === 16) {
        if (i === 0) throw new InflateError('invalid bit length repeat');
        len = lengths[i - 1]!;
        symbol = 3 + this.bits(2);
      } else if (symbol === 17) symbol = 3 + this.bits(3);
      else symbol = 11 + this.bits(7);
      if (i + symbol > nlen + ndist) throw new InflateError('invalid bit length repeat');
      while (symbol--) lengths[i++] = len;
    }
    if (lengths[256] === 0) throw new InflateError('invalid code -- missing end-of-block');
    const litlen = buildHuffman(lengths, nlen);
    if (incomplete(litlen)) throw new InflateError('invalid literal/lengths set');
    const dist = buildHuffman(lengths.subarray(nlen), ndist);
    if (incomplete(dist)) throw new InflateError('invalid distances set');
    this.codes(litlen.code, dist.code);
  }
}
