import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { SPDY3_DICTIONARY } from '../../src/streaming/spdy/dictionary.js';

/** Adler-32 (RFC 1950 §9), written out here so the check does not lean on zlib. */
function adler32(b: Buffer): number {
  let a = 1;
  let s = 0;
  for (const byte of b) {
    a = (a + byte) % 65521;
    s = (s + a) % 65521;
  }
  return ((s << 16) | a) >>> 0;
}

describe('the SPDY/3 header dictionary', () => {
  it('is the 1423 bytes spdystream uses: DICTID 0xE3C6A7C2, the published SHA-256, its first and last words', () => {
    expect(SPDY3_DICTIONARY.length).toBe(1423);
    expect(adler32(SPDY3_DICTIONARY)).toBe(0xe3c6a7c2);
    expect(createHash('sha256').update(SPDY3_DICTIONARY).digest('hex')).toBe('51d27341373f923f3cd88e1eb7162aeaa3723d7585ff2399201dc06498407f02');
    expect(SPDY3_DICTIONARY.subarray(0, 11)).toEqual(Buffer.from('\0\0\0\x07options', 'latin1'));
    expect(SPDY3_DICTIONARY.subarray(-16).toString('latin1')).toBe('-1,utf-,*,enq=0.');
  });
});
