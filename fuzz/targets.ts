/**
 * Fuzz targets: the SPDY frame parser, the header-block inflater, the
 * WebSocket frame reader and the channel decoders. The invariants: on any input only our typed errors escape
 * (anything else is a crash); whole and split input agree; and a parser or
 * decoder that failed stays failed with the same code, as documented, instead
 * of decoding garbage afterwards. Used by jsfuzz (scripts/fuzz.mjs) and
 * replayed over the committed corpus by test/unit/fuzz-corpus.test.ts.
 */
import { isProbeError, type ProbeError } from '../src/errors.js';
import { decodeChannelMessage } from '../src/streaming/channel/codec.js';
import { decodeExecStatus } from '../src/streaming/channel/exec-status.js';
import { HeaderBlockDecoder, decodePlainHeaderBlock } from '../src/streaming/spdy/header-block.js';
import type { SpdyFrame } from '../src/streaming/spdy/frames.js';
import { SpdyFrameParser } from '../src/streaming/spdy/parser.js';
import { WsReceiver } from '../src/streaming/ws-receiver.js';

const VALID_DATA = Buffer.from('0000000100000003686921', 'hex'); // DATA stream 1 "hi!"
const LIMITS = { maxHeaderBlockBytes: 64 * 1024, maxHeaderPairs: 128 };

function typedOnly(fn: () => void): void {
  try {
    fn();
  } catch (err) {
    if (!isProbeError(err)) throw err; // a crash: the parser leaked an untyped exception
  }
}

/** A parser that failed with `code` must fail again, with the same code, on a valid frame. */
function staysFailed(parser: SpdyFrameParser, code: string): void {
  let again: string | undefined;
  try {
    parser.push(VALID_DATA);
  } catch (e) {
    again = (e as { code?: string }).code;
  }
  if (again !== code) throw new Error(`a failed parser (${code}) accepted more input (${again ?? 'no error'})`);
}

export function fuzzSpdyFrames(data: Buffer): void {
  // The same bytes fed whole and split at a data-chosen offset must agree.
  const whole = new SpdyFrameParser({ maxFramePayloadBytes: 64 * 1024 });
  const split = new SpdyFrameParser({ maxFramePayloadBytes: 64 * 1024 });
  let a: unknown[] = [];
  let b: unknown[] = [];
  let errA: string | undefined;
  let errB: string | undefined;
  typedOnly(() => {
    try {
      a = whole.push(data);
    } catch (e) {
      errA = (e as { code: string }).code;
      throw e;
    }
  });
  const cut = data.length ? data[0]! % (data.length + 1) : 0;
  typedOnly(() => {
    try {
      b = [...split.push(data.subarray(0, cut)), ...split.push(data.subarray(cut))];
    } catch (e) {
      errB = (e as { code: string }).code;
      throw e;
    }
  });
  if (errA !== errB) throw new Error(`whole and split disagree: ${errA} vs ${errB}`);
  if (!errA && JSON.stringify(a) !== JSON.stringify(b)) throw new Error('whole and split give different frames');
  if (errA) {
    staysFailed(whole, errA);
    staysFailed(split, errA);
  }
  fuzzStreamedData(data, cut, a, errA);
}

/** Frames of a streaming parser with each DATA frame's pieces joined; pieces of an unfinished frame dropped. */
function joinPieces(frames: SpdyFrame[]): SpdyFrame[] {
  const out: SpdyFrame[] = [];
  let parts: Buffer[] = [];
  for (const f of frames) {
    if (f.type === 'DATA' && f.partial) {
      parts.push(f.data);
      continue;
    }
    if (f.type === 'DATA' && parts.length > 0) out.push({ type: 'DATA', streamId: f.streamId, flags: f.flags, data: Buffer.concat([...parts, f.data]) });
    else out.push(f);
    parts = [];
  }
  return out;
}

/**
 * A session's parser streams DATA (pieces as they arrive): fed the same bytes in three parts, its pieces joined
 * must be the whole parser's frames, and it fails with the same code, or earlier only for DATA on stream 0
 * (found at the header instead of after the payload).
 */
function fuzzStreamedData(data: Buffer, cut: number, wholeFrames: unknown[], wholeError: string | undefined): void {
  const streamed = new SpdyFrameParser({ maxFramePayloadBytes: 64 * 1024 }, { streamData: true });
  const second = cut + ((data[1] ?? 0) % (data.length - cut + 1));
  const got: SpdyFrame[] = [];
  let err: ProbeError | undefined;
  typedOnly(() => {
    try {
      for (const part of [data.subarray(0, cut), data.subarray(cut, second), data.subarray(second)]) got.push(...streamed.push(part));
    } catch (e) {
      err = e as ProbeError;
      throw e;
    }
  });
  if (wholeError && err?.code !== wholeError) throw new Error(`whole failed with ${wholeError}, streamed with ${err?.code ?? 'nothing'}`);
  if (!wholeError && err && !(err.code === 'SPDY_BAD_FRAME' && /^DATA frame .*stream id 0$/.test(err.message))) {
    throw new Error(`streamed failed (${err.code}: ${err.message}) where whole did not`);
  }
  if (!err && JSON.stringify(joinPieces(got)) !== JSON.stringify(wholeFrames)) throw new Error('streamed DATA pieces joined differ from the whole frames');
  if (err) staysFailed(streamed, err.code);
}

export function fuzzHeaderBlock(data: Buffer): void {
  typedOnly(() => void decodePlainHeaderBlock(data, LIMITS));
  const decoder = new HeaderBlockDecoder(LIMITS);
  let failed = false;
  typedOnly(() => {
    try {
      decoder.decode(data);
    } catch (e) {
      failed = true;
      throw e;
    }
  });
  if (failed) {
    // A broken zlib context cannot be trusted again: every later block must fail, typed.
    let again: unknown;
    try {
      decoder.decode(data);
    } catch (e) {
      again = e;
    }
    if (!isProbeError(again)) throw new Error('a header decoder that failed decoded the next block');
  }
}

const PROTOCOLS = ['v5.channel.k8s.io', 'v4.channel.k8s.io', 'v4.base64.channel.k8s.io', 'base64.channel.k8s.io', 'channel.k8s.io', ''];

export function fuzzChannel(data: Buffer): void {
  const protocol = PROTOCOLS[(data[0] ?? 0) % PROTOCOLS.length]!;
  const isBinary = ((data[1] ?? 0) & 1) === 1;
  typedOnly(() => void decodeChannelMessage(data.subarray(2), isBinary, protocol));
  const status = decodeExecStatus(data.subarray(2).toString('utf8'), protocol);
  if (status.exitCode !== undefined && (!Number.isInteger(status.exitCode) || status.exitCode < 0 || status.exitCode > 255))
    throw new Error(`exit code out of range: ${status.exitCode}`);
}

/**
 * The WebSocket frame reader: it never throws (a bad frame is an `error` event); nothing follows a close or an
 * error; the bytes fed whole, or cut at two data-chosen offsets, give the same events; streamed, the binary bytes
 * are those of the whole messages (plus what arrived of one never finished) and nothing else changes; a streamed
 * piece is empty only as the one first piece of a message of no bytes.
 */
export function fuzzWsFrames(data: Buffer): void {
  const limit = [0, 3, 200, 70_000][(data[0] ?? 0) & 3]!;
  const cut = data.length ? data[0]! % (data.length + 1) : 0;
  const second = cut + ((data[1] ?? 0) % (data.length - cut + 1));
  const run = (parts: readonly Buffer[], stream: boolean) => {
    const events: string[] = [];
    let binary = '';
    let over = false;
    const note = (e: string) => {
      if (over) throw new Error(`an event after the reader stopped: ${e}`);
      events.push(e);
    };
    const r = new WsReceiver(limit, {
      message: (d, isBinary) => (isBinary ? (binary += d.toString('hex')) : note(`text ${d.toString('hex')}`)),
      ping: (d) => note(`ping ${d.toString('hex')}`),
      pong: (d) => note(`pong ${d.toString('hex')}`),
      conclude: (code, reason) => (note(`close ${code} ${reason.toString('hex')}`), (over = true)),
      error: (err) => (note(`error ${err.code} ${err.statusCode}`), (over = true)),
    });
    // A piece is never empty, except the one first piece of a message of no bytes.
    let emptyMessage = false;
    if (stream)
      r.onBinaryPiece = (p, first) => {
        if (over) throw new Error('a piece after the reader stopped');
        if (!first && emptyMessage) throw new Error('a message went on after its empty first piece');
        if (p.length === 0 && !first) throw new Error('an empty piece that is not a whole message of no bytes');
        emptyMessage = p.length === 0;
        binary += p.toString('hex');
      };
    for (const p of parts) r.push(p);
    return { events: events.join('\n'), binary };
  };
  const whole = run([data], false);
  const split = run([data.subarray(0, cut), data.subarray(cut, second), data.subarray(second)], false);
  if (split.events !== whole.events || split.binary !== whole.binary) throw new Error('whole and split input disagree');
  const streamed = run([data.subarray(0, cut), data.subarray(cut)], true);
  if (streamed.events !== whole.events || !streamed.binary.startsWith(whole.binary)) throw new Error('streamed input disagrees with whole messages');
}

export const TARGETS = { 'spdy-frames': fuzzSpdyFrames, 'header-block': fuzzHeaderBlock, 'ws-frames': fuzzWsFrames, channel: fuzzChannel } as const;
