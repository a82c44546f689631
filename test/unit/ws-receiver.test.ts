/**
 * Our WebSocket frame reader (ws-receiver.ts) against ws's own Receiver, the parser it replaces and that we did
 * not write: the same byte streams (frames valid and broken in every way RFC 6455 §5 allows, cut into chunks at
 * random places) must give the same messages, pings, pongs, close, and the same first error with the same code
 * and close status. Streamed, a binary message's bytes arrive in pieces that are views of the chunks read
 * (nothing copied), and everything else is unchanged.
 */
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import * as wsModule from 'ws';
import { WsReceiver, isValidCloseCode } from '../../src/streaming/ws-receiver.js';

type WsReceiverLike = NodeJS.WritableStream & { on(e: string, l: (...a: any[]) => void): void };
const { Receiver } = wsModule as unknown as { Receiver: new (o: object) => WsReceiverLike };

type Event = readonly (string | number | boolean)[];

/** One frame as bytes: any header bits, any length form (minimal or not), masked or not. */
interface FrameSpec {
  readonly b0: number;
  readonly masked: boolean;
  readonly payload: Uint8Array;
  /** 0: the shortest length form; 2 or 8: that extended form even when shorter would do. */
  readonly form: 0 | 2 | 8;
  /** A 64-bit length's high word, to reach lengths past 2^53 (the payload is then not sent). */
  readonly hugeHigh?: number;
}

function frameBytes(f: FrameSpec): Buffer {
  const n = f.payload.length;
  const form = f.hugeHigh !== undefined ? 8 : f.form === 0 ? (n < 126 ? 0 : n < 65536 ? 2 : 8) : n >= 65536 ? 8 : f.form;
  const head = Buffer.alloc(2 + form + (f.masked ? 4 : 0));
  head[0] = f.b0;
  head[1] = (f.masked ? 0x80 : 0) | (form === 0 ? n : form === 2 ? 126 : 127);
  if (form === 2) head.writeUInt16BE(n, 2);
  if (form === 8) {
    head.writeUInt32BE(f.hugeHigh ?? Math.floor(n / 2 ** 32), 2);
    head.writeUInt32BE(n >>> 0, 6);
  }
  if (f.hugeHigh !== undefined) return head;
  const payload = Buffer.from(f.payload);
  if (f.masked) {
    const key = head.subarray(head.length - 4);
    key.set([0x11, 0x22, 0x33, 0x44]);
    for (let i = 0; i < payload.length; i++) payload[i]! ^= key[i & 3]!;
  }
  return Buffer.concat([head, payload]);
}

const FIN = 0x80;
const utf8 = (s: string) => new Uint8Array(Buffer.from(s, 'utf8'));
const closePayload = (code: number, reason: Uint8Array) => {
  const b = Buffer.alloc(2 + reason.length);
  b.writeUInt16BE(code, 0);
  b.set(reason, 2);
  return new Uint8Array(b);
};

const payloadArb = fc.oneof(
  { weight: 6, arbitrary: fc.uint8Array({ maxLength: 300 }) },
  { weight: 1, arbitrary: fc.integer({ min: 65530, max: 70_000 }).map((n) => new Uint8Array(n).fill(7)) },
);
const textArb = fc.oneof(fc.string({ maxLength: 200 }).map(utf8), fc.uint8Array({ maxLength: 40 }));
const closeArb = fc.oneof(
  fc.constant(new Uint8Array(0)),
  fc.constant(new Uint8Array([3])),
  fc
    .tuple(fc.oneof(fc.constantFrom(1000, 1001, 1002, 1004, 1005, 1006, 1011, 1014, 1015, 2999, 3000, 4999, 5000), fc.integer({ min: 0, max: 65535 })), textArb)
    .map(([code, reason]) => closePayload(code, reason.subarray(0, 123))),
);

/** Mostly well-formed frames, with every header bit, opcode, mask and length class sometimes wrong. */
const frameArb: fc.Arbitrary<FrameSpec> = fc.oneof(
  {
    weight: 8,
    arbitrary: fc
      .record({ fin: fc.boolean(), op: fc.constantFrom(0, 2, 2, 0), payload: payloadArb, form: fc.constantFrom<0 | 2 | 8>(0, 0, 0, 2, 8) })
      .map(({ fin, op, payload, form }) => ({ b0: (fin ? FIN : 0) | op, masked: false, payload, form })),
  },
  {
    weight: 3,
    arbitrary: fc
      .record({ fin: fc.boolean(), op: fc.constantFrom(0, 1), payload: textArb })
      .map(({ fin, op, payload }) => ({ b0: (fin ? FIN : 0) | op, masked: false, payload, form: 0 as const })),
  },
  {
    weight: 3,
    arbitrary: fc
      .record({ op: fc.constantFrom(9, 10), payload: fc.uint8Array({ maxLength: 125 }) })
      .map(({ op, payload }) => ({ b0: FIN | op, masked: false, payload, form: 0 as const })),
  },
  { weight: 1, arbitrary: closeArb.map((payload) => ({ b0: FIN | 8, masked: false, payload, form: 0 as const })) },
  // Anything at all in the first byte, a mask, an oversized control frame, a length past 2^53.
  {
    weight: 1,
    arbitrary: fc.record({
      b0: fc.integer({ min: 0, max: 255 }),
      masked: fc.boolean(),
      payload: fc.uint8Array({ maxLength: 200 }),
      form: fc.constantFrom<0 | 2 | 8>(0, 2, 8),
    }),
  },
  {
    weight: 1,
    arbitrary: fc
      .integer({ min: 2 ** 21 - 2, max: 2 ** 32 - 1 })
      .map((hugeHigh) => ({ b0: FIN | 2, masked: false, payload: new Uint8Array(0), form: 8 as const, hugeHigh })),
  },
);

/** A byte stream and where to cut it into chunks. */
const streamArb = fc
  .tuple(fc.array(frameArb, { minLength: 1, maxLength: 12 }), fc.array(fc.integer({ min: 1, max: 70_000 }), { maxLength: 12 }))
  .map(([frames, cutsRaw]) => {
    const bytes = Buffer.concat(frames.map(frameBytes));
    const cuts = [...new Set(cutsRaw.map((c) => c % Math.max(1, bytes.length)))].filter((c) => c > 0).sort((a, b) => a - b);
    const chunks: Buffer[] = [];
    let at = 0;
    for (const c of [...cuts, bytes.length]) {
      // Each chunk in a buffer of its own, as a socket delivers them.
      chunks.push(Buffer.from(bytes.subarray(at, c)));
      at = c;
    }
    return chunks.filter((c) => c.length > 0);
  });

const hex = (b: Buffer) => b.toString('hex');

/** What ws's Receiver makes of the chunks, up to its close or its first error. */
async function wsEvents(chunks: readonly Buffer[], maxPayload: number): Promise<Event[]> {
  const r = new Receiver({ isServer: false, binaryType: 'nodebuffer', extensions: {}, maxPayload, allowSynchronousEvents: true });
  const out: Event[] = [];
  let over = false;
  r.on('message', (d: Buffer, isBinary: boolean) => !over && out.push(['message', isBinary, hex(d)]));
  r.on('ping', (d: Buffer) => !over && out.push(['ping', hex(d)]));
  r.on('pong', (d: Buffer) => !over && out.push(['pong', hex(d)]));
  r.on('conclude', (code: number, reason: Buffer) => {
    if (!over) out.push(['conclude', code, hex(reason)]);
    over = true;
  });
  r.on('error', (err: Error & { code: string }) => {
    const status = (err as unknown as Record<symbol, number>)[Object.getOwnPropertySymbols(err).find((s) => s.description === 'status-code')!];
    if (!over && err.code?.startsWith('WS_ERR')) out.push(['error', err.code, status!, err.message]);
    over = true;
  });
  for (const c of chunks) if (!over) r.write(c);
  await new Promise((resolve) => setImmediate(resolve));
  return out;
}

/** What ours makes of them; streamed binary payloads are returned apart, as pieces. */
function ourEvents(chunks: readonly Buffer[], maxPayload: number, stream: boolean): { events: Event[]; pieces: Buffer[]; messages: Buffer[][] } {
  const events: Event[] = [];
  const pieces: Buffer[] = [];
  /** The streamed binary messages, as their first pieces group them. */
  const messages: Buffer[][] = [];
  const r = new WsReceiver(maxPayload, {
    message: (d, isBinary) => events.push(['message', isBinary, hex(d)]),
    ping: (d) => events.push(['ping', hex(d)]),
    pong: (d) => events.push(['pong', hex(d)]),
    conclude: (code, reason) => events.push(['conclude', code, hex(reason)]),
    error: (err) => events.push(['error', err.code, err.statusCode, err.message]),
  });
  if (stream)
    r.onBinaryPiece = (p, first) => {
      pieces.push(p);
      if (first) messages.push([]);
      messages.at(-1)!.push(p);
    };
  for (const c of chunks) r.push(c);
  return { events, pieces, messages };
}

describe('our WebSocket frame reader against ws', () => {
  it('gives ws’s events and errors for any byte stream, however it is cut', async () => {
    await fc.assert(
      fc.asyncProperty(streamArb, fc.oneof(fc.constantFrom(0, 0, 200, 66_000), fc.integer({ min: 1, max: 6 })), async (chunks, maxPayload) => {
        expect(ourEvents(chunks, maxPayload, false).events).toEqual(await wsEvents(chunks, maxPayload));
      }),
      { numRuns: 600 },
    );
  });

  it('streamed: binary bytes arrive in views of the chunks, each message from its first piece, the rest unchanged', async () => {
    await fc.assert(
      fc.asyncProperty(streamArb, fc.constantFrom(0, 200), async (chunks, maxPayload) => {
        const theirs = await wsEvents(chunks, maxPayload);
        const ours = ourEvents(chunks, maxPayload, true);
        expect(ours.events).toEqual(theirs.filter((e) => !(e[0] === 'message' && e[1] === true)));
        // A piece is a view of a chunk, never empty unless it is the one piece of a message of no bytes.
        for (const m of ours.messages) {
          expect(m.length === 1 || m.every((p) => p.length > 0)).toBe(true);
          for (const p of m) if (p.length) expect(chunks.some((c) => c.buffer === p.buffer)).toBe(true);
        }
        const whole = theirs.filter((e) => e[0] === 'message' && e[1] === true).map((e) => e[2]);
        const streamed = ours.messages.map((m) => hex(Buffer.concat(m)));
        // Message by message the same bytes; where ws kept back a message it never finished (cut off by the
        // input's end, a close or an error), ours has already passed on what arrived of it.
        expect(streamed.slice(0, whole.length)).toEqual(whole);
        expect(streamed.length - whole.length).toBeLessThanOrEqual(1);
        if (streamed.length > whole.length) expect(ours.messages.at(-1)!.every((p) => p.length > 0)).toBe(true);
      }),
      { numRuns: 400 },
    );
  });

  it('a binary frame split across three reads goes on as three views, before its last byte is in', () => {
    const payload = Buffer.alloc(100_000, 9);
    const bytes = frameBytes({ b0: FIN | 2, masked: false, payload, form: 0 });
    const pieces: Buffer[] = [];
    const r = new WsReceiver(0, {
      message: () => expect.fail('a streamed binary message is not a message'),
      ping() {},
      pong() {},
      conclude() {},
      error: (e) => expect.fail(e.message),
    });
    r.onBinaryPiece = (p) => pieces.push(p);
    const chunks = [bytes.subarray(0, 40_000), bytes.subarray(40_000, 80_000), bytes.subarray(80_000)].map((c) => Buffer.from(c));
    r.push(chunks[0]!);
    r.push(chunks[1]!);
    expect(Buffer.concat(pieces).length).toBe(80_000 - 10);
    r.push(chunks[2]!);
    expect(pieces.map((p, i) => p.buffer === chunks[i]!.buffer)).toEqual([true, true, true]);
    expect(Buffer.concat(pieces).equals(payload)).toBe(true);
    expect(r.bufferedBytes).toBe(0);
  });

  it('a close code is valid exactly where ws’s own check says so, for every 16-bit code', () => {
    // ws does not export lib/validation.js (its package exports), so it is loaded by path beside ws's entry point.
    const require = createRequire(import.meta.url);
    const wsValidation = require(join(dirname(require.resolve('ws')), 'lib/validation.js')) as { isValidStatusCode(code: number): boolean };
    const differing = Array.from({ length: 65536 }, (_, c) => c).filter((c) => isValidCloseCode(c) !== wsValidation.isValidStatusCode(c));
    expect(differing).toEqual([]);
    // And RFC 6455 §7.4's registered codes below 3000 are the ones a peer may send (1004-1006 never on the wire).
    expect(Array.from({ length: 3000 }, (_, c) => c).filter(isValidCloseCode)).toEqual([
      1000, 1001, 1002, 1003, 1007, 1008, 1009, 1010, 1011, 1012, 1013, 1014,
    ]);
  });
});
