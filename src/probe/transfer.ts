/**
 * The `kubectl cp` path (issue 24): SIZE bytes through an upgraded session and back — exec stdin → `cat` →
 * stdout, then the exit status (what `kubectl cp` rides on: `tar cf -` / `tar xf -` over exec), or a forwarded
 * connection to the pod's echo port — verified byte for byte as they arrive (no second copy is kept), with the
 * numbers an SRE needs: MiB/s, time to the first byte back, the longest stall, whether the exit status came
 * before the last byte, and how much of the tail was lost.
 *
 * Written as kubectl writes: stdin in 32 KiB pieces — client-go copies stdin with io.Copy through a reader
 * wrapper that hides WriteTo (client-go tools/remotecommand reader.go), so Go's io.Copy uses its 32 KiB buffer and
 * each read becomes one message / DATA frame — waiting for the stream's own flow control (`write()` → false → 'drain').
 * Read from client-go's source, not measured on the wire.
 */
import { randomBytes } from 'node:crypto';
import type { Readable, Writable } from 'node:stream';
import { probeError, type ProbeError } from '../errors.js';
import type { ExecExit } from '../streaming/types.js';
import type { Clock } from '../timers.js';
import { BYTES_PER_MIB, type TransferShape } from '../vocabulary.js';

/** client-go's stdin copy buffer (io.Copy, 32 KiB): one WebSocket message or SPDY DATA frame per piece. */
export const TRANSFER_CHUNK_BYTES = 32 * 1024;
/** No byte back for this long ends the transfer as stalled (a hop that buffers the stream, or a stuck peer). */
export const DEFAULT_STALL_SECONDS = 10;
/** The slowest path a transfer waits for: below it the transfer ends TRANSFER_TIMEOUT (the time limit is 10 s + size at this rate). */
export const TRANSFER_FLOOR_BYTES_PER_SECOND = 256 * 1024;
/** After the exit status: how long the last bytes may still take before the tail counts as lost. */
export const TAIL_GRACE_MS = 1_000;
/** exec, every byte back: how long the exit status may still take (the session's own close grace). */
export const STATUS_GRACE_MS = 3_000;
/** How often the stall watch looks. */
const STALL_POLL_MS = 100;
/** A gap shorter than this between bytes is not a stall worth naming. */
const STALL_RESOLUTION_MS = 100;

export type TransferEnd = 'complete' | 'truncated' | 'stalled' | 'mismatch' | 'timeout' | 'ended' | 'no-status';

/** Bytes over milliseconds as MiB/s (2^20 bytes per second, the contract's TransferThroughput), to 0.01. */
export function mibPerSecond(bytes: number, ms: number): number {
  return ms > 0 ? Math.round((bytes / BYTES_PER_MIB / (ms / 1000)) * 100) / 100 : 0;
}

export interface TransferOutcome {
  readonly bytes: number;
  readonly sentBytes: number;
  readonly receivedBytes: number;
  /** First byte written to the last byte back (or to the end), s. */
  readonly seconds: number;
  /** Bytes back per second, in MiB/s (2^20 bytes), over `seconds`. */
  readonly mibPerSecond: number;
  /** First byte written to first byte back, ms; null when none came. */
  readonly firstByteMs: number | null;
  /** The longest time with no byte back while more was due, s (0.1 s resolution). */
  readonly longestStallSeconds: number;
  /** Where that stall began: bytes received until then (a fixed count across runs points at a buffer or body limit). */
  readonly longestStallAtBytes: number;
  /** exec: the exit status arrived before the last byte of stdout (the tail-truncation race); null for port-forward. */
  readonly exitBeforeLastByte: boolean | null;
  /** exec: the exit code the server reported; null when none (or port-forward). */
  readonly exitCode: number | null;
  /** Bytes of the tail that never came back (sent − received) when the transfer ended; 0 when complete. */
  readonly lostTailBytes: number;
  readonly end: TransferEnd;
}

/** Where the transfer goes: the writable it sends on, the readable it reads back, and how the session ends. */
export interface TransferChannel {
  readonly writer: Writable;
  readonly reader: Readable;
  /** exec: the exit status (stdin is ended once everything is written). */
  readonly exit?: Promise<ExecExit>;
  readonly lost: Promise<{ readonly cause: string }>;
}

export interface TransferOptions {
  readonly bytes: number;
  readonly clock: Clock;
  /** How the bytes move (vocabulary.ts TRANSFER_SHAPES); absent: echo. */
  readonly shape?: TransferShape;
}

/** What a download's client writes once it reads, and gets back before the zeros (the pod's second `head -n 1`). */
export const DOWNLOAD_GO = 'ksp-go\n';

/** tar's block size: how `kubectl cp` of many small files writes (a header and a data block per file). */
export const SMALL_WRITE_BYTES = 512;

/**
 * What the pod runs for an exec transfer of each shape (busybox, the target's image; emulated in lab/emulator). The
 * first line written is echoed first (`head -n 1`: the session's first echo, as every session proves itself), then:
 * echo and small `cat` the rest back; upload counts it (`wc -c`, printed after stdin's end: what arrived, as
 * `tar xf -` consumes `kubectl cp file pod:`; exiting a second later); download sends SIZE zero bytes (`head -c`, as `tar cf -` sends
 * `kubectl cp pod:file .`).
 */
export function transferCommand(shape: TransferShape | undefined, bytes: number): string[] {
  switch (shape) {
    case 'upload':
      // The count a second before the exit: an upload writes nothing back that the exit could overtake (kubectl cp
      // into a pod is not hit by the tail-loss race), and neither is its proof.
      return ['sh', '-c', 'head -n 1; wc -c; sleep 1'];
    case 'download':
      // The second line is the go: the pod sends only once the client reads (DOWNLOAD_GO, echoed before the zeros).
      return ['sh', '-c', `head -n 1; head -n 1; exec head -c ${bytes} /dev/zero`];
    default:
      return ['cat'];
  }
}

/** The transfer's time limit, ms: 10 s plus the size at the floor rate. */
export function transferLimitMs(bytes: number): number {
  return 10_000 + Math.ceil((bytes / TRANSFER_FLOOR_BYTES_PER_SECOND) * 1000);
}

/**
 * The byte at offset i is BLOCK[(i mod 64 KiB + 7919·k) mod 64 KiB], k = i div 64 KiB: a fresh random block per
 * transfer, rotated differently for each 64 KiB (7919 is prime to 2^16: no rotation repeats within 4 GiB), so stale
 * or replayed bytes never match and a block duplicated or dropped is caught at its offset. Building and checking
 * it are copies and compares of the block (native), not a loop per byte.
 */
class Pattern {
  static readonly BLOCK = 64 * 1024;
  /** The block twice over: any rotation of it is one contiguous slice. */
  private readonly doubled: Buffer;

  constructor() {
    const block = randomBytes(Pattern.BLOCK);
    this.doubled = Buffer.concat([block, block]);
  }

  /** The runs of the stream in [from, from+length), each within one 64 KiB block: [offset in the run list, source slice]. */
  private *runs(from: number, length: number): Generator<[number, Buffer]> {
    let k = 0;
    while (k < length) {
      const i = from + k;
      const inBlock = i % Pattern.BLOCK;
      const run = Math.min(length - k, Pattern.BLOCK - inBlock);
      const start = (inBlock + ((Math.floor(i / Pattern.BLOCK) * 7919) % Pattern.BLOCK)) % Pattern.BLOCK;
      yield [k, this.doubled.subarray(start, start + run)];
      k += run;
    }
  }

  /**
   * Bytes [from, from+length) of the stream, as views of the block (one or two, never copied: the block is never
   * written, and a writer only reads what it is given; issue 42: a copy per chunk was 64 MiB of garbage a transfer).
   */
  *pieces(from: number, length: number): Generator<Buffer> {
    for (const [, src] of this.runs(from, length)) yield src;
  }

  /** The offset of the first byte of `chunk` (at stream offset `at`) that differs, or -1. */
  firstDifference(chunk: Buffer, at: number): number {
    for (const [k, src] of this.runs(at, chunk.length)) {
      const got = chunk.subarray(k, k + src.length);
      if (got.equals(src)) continue;
      for (let j = 0; j < src.length; j++) if (got[j] !== src[j]) return at + k + j;
    }
    return -1;
  }
}

/** A download's bytes: SIZE zeros (`head -c SIZE /dev/zero`). */
class Zeros {
  firstDifference(chunk: Buffer, at: number): number {
    const i = chunk.findIndex((b) => b !== 0);
    return i < 0 ? -1 : at + i;
  }
}

const r1 = (ms: number) => Math.round(ms / 100) / 10;

export type TransferFailure = ProbeError<
  'TRANSFER_TRUNCATED' | 'TRANSFER_STALLED' | 'TRANSFER_MISMATCH' | 'TRANSFER_TIMEOUT' | 'TRANSFER_ENDED' | 'EXEC_NO_STATUS'
>;

/** Streams `bytes` through the channel and back; always resolves, with the outcome and (when not complete) why. */
export function runTransfer(channel: TransferChannel, options: TransferOptions): Promise<{ outcome: TransferOutcome; failure?: TransferFailure }> {
  return new TransferRun(channel, options).run();
}

type TransferResult = { outcome: TransferOutcome; failure?: TransferFailure };

/** One transfer's state: the bytes out and back, the exit status, the gaps; it ends once, at the first end reached. */
class TransferRun {
  private readonly bytes: number;
  private readonly clock: Clock;
  private readonly shape: TransferShape;
  private readonly pattern = new Pattern();
  /** What must come back: what was written (echo, small), or zeros (download). */
  private readonly expected: Pick<Pattern, 'firstDifference'>;
  /** An upload's answer: the pod's count of what arrived, as it comes. */
  private countText = '';
  /** An upload's last progress: a write the stream took (nothing comes back until the count). */
  private lastWriteAt: number;
  /** A download's go line, still to come back before the zeros. */
  private goLeft: string;
  private readonly t0: number;
  private sent = 0;
  private received = 0;
  private firstByteAt: number | undefined;
  private lastByteAt: number;
  private longestStallMs = 0;
  private longestStallAtBytes = 0;
  private exitAt: number | undefined;
  private exit: ExecExit | undefined;
  private mismatchAt = -1;
  private finished = false;
  private waitingForStatus = false;
  private readonly cancels: (() => void)[] = [];
  private resolve!: (r: TransferResult) => void;
  private readonly onData = (chunk: Buffer) => this.data(chunk);

  constructor(
    private readonly channel: TransferChannel,
    options: TransferOptions,
  ) {
    this.bytes = options.bytes;
    this.clock = options.clock;
    this.shape = options.shape ?? 'echo';
    this.expected = this.shape === 'download' ? new Zeros() : this.pattern;
    this.t0 = this.clock.now();
    this.lastByteAt = this.t0;
    this.lastWriteAt = this.t0;
    this.goLeft = this.shape === 'download' ? DOWNLOAD_GO : '';
  }

  run(): Promise<TransferResult> {
    return new Promise((resolve) => {
      this.resolve = resolve;
      const { channel, clock } = this;
      channel.reader.on('data', this.onData);
      void channel.exit?.then((e) => this.exited(e));
      void channel.lost.then((end) => this.lost(end));
      this.cancels.push(clock.after(STALL_POLL_MS, () => this.watch()));
      const limitMs = transferLimitMs(this.bytes);
      this.cancels.push(
        clock.after(limitMs, () =>
          this.finish(
            'timeout',
            probeError(
              'TRANSFER_TIMEOUT',
              `${this.received} of ${this.bytes} bytes came back within the limit of ${limitMs / 1000} s (below ${TRANSFER_FLOOR_BYTES_PER_SECOND / 1024} KiB/s)`,
              { receivedBytes: this.received, limitSeconds: limitMs / 1000 },
            ),
          ),
        ),
      );
      channel.writer.on('error', () => undefined);
      this.pump();
    });
  }

  /** Write as client-go does, waiting for the stream's flow control; exec then ends stdin (EOF for cat). */
  private pump(): void {
    const { channel } = this;
    // A download writes nothing: the pod sends (stdin is ended at once, as kubectl cp from a pod sends none).
    const piece = this.shape === 'small' ? SMALL_WRITE_BYTES : TRANSFER_CHUNK_BYTES;
    // A download's go: the pod starts sending now that this transfer reads.
    if (this.shape === 'download' && this.sent === 0) channel.writer.write(DOWNLOAD_GO);
    while (!this.finished && this.shape !== 'download' && this.sent < this.bytes) {
      const n = Math.min(piece, this.bytes - this.sent);
      let more = true;
      for (const p of this.pattern.pieces(this.sent, n)) more = channel.writer.write(p);
      this.sent += n;
      this.lastWriteAt = this.clock.now();
      if (!more) return void channel.writer.once('drain', () => this.pump());
    }
    if (this.shape === 'download') this.sent = this.bytes;
    if (!this.finished && channel.exit) channel.writer.end();
  }

  private data(chunk: Buffer): void {
    if (this.shape === 'upload') return this.counted(chunk);
    if (this.goLeft) {
      // The go line comes back first; what follows it is the download.
      const head = chunk.subarray(0, this.goLeft.length).toString('latin1');
      if (!this.goLeft.startsWith(head))
        return this.finish(
          'mismatch',
          probeError('TRANSFER_MISMATCH', `the download began with "${head.slice(0, 20)}", not the go line echoed`, { offset: 0 }),
        );
      this.goLeft = this.goLeft.slice(head.length);
      chunk = chunk.subarray(head.length);
      if (!chunk.length) return;
    }
    const now = this.clock.now();
    if (this.firstByteAt === undefined) this.firstByteAt = now;
    else this.noteGap(now);
    this.lastByteAt = now;
    if (this.received + chunk.length > this.bytes) this.mismatchAt = this.received + Math.max(0, this.bytes - this.received);
    else if (this.mismatchAt < 0) this.mismatchAt = this.expected.firstDifference(chunk, this.received);
    this.received += chunk.length;
    if (this.mismatchAt >= 0) {
      const offset = this.mismatchAt;
      return this.finish(
        'mismatch',
        probeError('TRANSFER_MISMATCH', `the transfer came back different from what was sent, from byte ${offset} on`, { offset }),
      );
    }
    this.complete();
  }

  /** An upload's answer: the pod's count of the bytes that reached it (`wc -c`), once its line is whole. */
  private counted(chunk: Buffer): void {
    const now = this.clock.now();
    if (this.firstByteAt === undefined) this.firstByteAt = now;
    this.lastByteAt = now;
    this.countText += chunk.toString('latin1');
    const line = /^\s*(\d+)\s*\n/.exec(this.countText);
    if (!line) {
      if (this.countText.length > 64)
        this.finish(
          'mismatch',
          probeError('TRANSFER_MISMATCH', `the pod answered the upload with something other than a byte count: "${this.countText.slice(0, 40)}"`, {
            offset: 0,
          }),
        );
      return;
    }
    this.received = Number(line[1]);
    if (this.received !== this.bytes) {
      const lost = Math.max(0, this.bytes - this.received);
      const message = `the pod counted ${this.received} of the ${this.bytes} bytes uploaded when stdin ended: ${lost ? `the last ${lost} never reached it` : 'more than was sent'}`;
      return this.finish('truncated', probeError('TRANSFER_TRUNCATED', message, { sentBytes: this.sent, receivedBytes: this.received, lostBytes: lost }));
    }
    this.complete();
  }

  private noteGap(now: number): void {
    if (this.firstByteAt === undefined) return;
    const gap = now - this.lastByteAt;
    if (gap >= STALL_RESOLUTION_MS && gap > this.longestStallMs) {
      this.longestStallMs = gap;
      this.longestStallAtBytes = this.received;
    }
  }

  /** Every byte is back: exec is done when the exit status is in too (in whichever order), and only a zero one completes it. */
  private complete(): void {
    if (this.received < this.bytes) return;
    if (this.channel.exit && this.exitAt === undefined) {
      if (this.waitingForStatus) return;
      this.waitingForStatus = true;
      const message = `all ${this.received} bytes came back, but no exit status within ${STATUS_GRACE_MS / 1000} s`;
      this.cancels.push(this.clock.after(STATUS_GRACE_MS, () => this.finish('no-status', probeError('EXEC_NO_STATUS', message, { cause: 'timeout' }))));
      return;
    }
    if (this.channel.exit && this.exit?.exitCode !== 0) return this.endWithExit();
    this.finish('complete');
  }

  private exited(e: ExecExit): void {
    if (this.finished) return;
    this.exit = e;
    this.exitAt = this.clock.now();
    if (this.received >= this.bytes) return this.complete();
    this.cancels.push(this.clock.after(TAIL_GRACE_MS, () => this.endWithExit()));
  }

  /** The exit status is in and the bytes are not all back (after the tail's grace), or it was not zero. */
  private endWithExit(): void {
    const { received, sent } = this;
    if (received >= this.bytes && this.exit?.exitCode === 0) return this.finish('complete');
    const lost = Math.max(0, sent - received);
    const status = this.exit?.exitCode === undefined ? 'no exit status' : `exit status ${this.exit.exitCode}`;
    if (this.shape === 'upload' && !this.countText) {
      const message = `${status} came, but not the pod's count of the ${sent} bytes uploaded: its output was lost with the exit (the tail-loss race), so what arrived is not known`;
      return this.finish('truncated', probeError('TRANSFER_TRUNCATED', message, { sentBytes: sent, receivedBytes: received, lostBytes: lost }));
    }
    const message =
      lost > 0 ? `${status} came with ${received} of ${sent} bytes back: the last ${lost} bytes were lost` : `${status} after all ${received} bytes came back`;
    this.finish('truncated', probeError('TRANSFER_TRUNCATED', message, { sentBytes: sent, receivedBytes: received, lostBytes: lost }));
  }

  /** The connection ended. exec: the status may be a moment behind the end it came with; it decides truncated vs ended. */
  private lost(end: { cause: string }): void {
    if (this.finished) return;
    this.cancels.push(
      this.clock.after(this.channel.exit ? 200 : 0, () => {
        if (this.finished) return;
        if (this.exitAt !== undefined) return this.endWithExit();
        const message = `the connection ended (${end.cause}) with ${this.received} of ${this.bytes} bytes back`;
        this.finish('ended', probeError('TRANSFER_ENDED', message, { receivedBytes: this.received, cause: end.cause }));
      }),
    );
  }

  /** The stall watch: no byte back for the stall limit, while bytes are still due, ends the transfer. */
  private watch(): void {
    const now = this.clock.now();
    // An upload's progress is the stream taking its writes (nothing comes back until the count); all written, the count is due.
    const quietMs = this.shape === 'upload' ? now - this.lastWriteAt : now - (this.firstByteAt === undefined ? this.t0 : this.lastByteAt);
    if (this.received < this.bytes && this.exitAt === undefined && quietMs >= DEFAULT_STALL_SECONDS * 1000) {
      if (quietMs > this.longestStallMs) {
        this.longestStallMs = quietMs;
        this.longestStallAtBytes = this.received;
      }
      const message =
        this.shape === 'upload'
          ? this.sent < this.bytes
            ? `the stream took no byte for ${r1(quietMs)} s after ${this.sent} of ${this.bytes} bytes written: something on the path holds the upload`
            : `all ${this.bytes} bytes were written, and the pod's count did not come for ${r1(quietMs)} s: stdin's end or the bytes did not reach it`
          : `no byte came back for ${r1(quietMs)} s after ${this.received} of ${this.bytes} bytes (${this.sent} sent): something on the path holds the stream`;
      return this.finish('stalled', probeError('TRANSFER_STALLED', message, { receivedBytes: this.received, stallSeconds: r1(quietMs) }));
    }
    this.cancels.push(this.clock.after(STALL_POLL_MS, () => this.watch()));
  }

  private finish(end: TransferEnd, failure?: TransferFailure): void {
    if (this.finished) return;
    this.finished = true;
    for (const c of this.cancels) c();
    this.channel.reader.off('data', this.onData);
    this.resolve({ outcome: this.outcome(end), ...(failure ? { failure } : {}) });
  }

  private outcome(end: TransferEnd): TransferOutcome {
    const { bytes, sent, received, exitAt } = this;
    const ms = Math.max(1, (end === 'complete' ? this.lastByteAt : this.clock.now()) - this.t0);
    return {
      bytes,
      sentBytes: sent,
      receivedBytes: received,
      seconds: Math.round(ms) / 1000,
      mibPerSecond: mibPerSecond(received, ms),
      // An upload gets nothing back but the pod's count at the end: no first byte to time.
      firstByteMs: this.firstByteAt === undefined || this.shape === 'upload' ? null : Math.round((this.firstByteAt - this.t0) * 10) / 10,
      longestStallSeconds: r1(this.longestStallMs),
      longestStallAtBytes: this.longestStallAtBytes,
      exitBeforeLastByte: this.channel.exit ? exitAt !== undefined && (received < bytes || exitAt < this.lastByteAt) : null,
      exitCode: this.exit?.exitCode ?? null,
      lostTailBytes: end === 'complete' || end === 'mismatch' ? 0 : Math.max(0, sent - received),
      end,
    };
  }
}
