/**
 * Proving a channel: a line written to `cat`'s stdin must come back on
 * stdout; bytes written to a forwarded connection must come back from the
 * pod's echo port. Each echo carries a fresh nonce so stale bytes never count.
 */
import { endWords } from '../streaming/types.js';
import { randomBytes } from 'node:crypto';
import type { Readable, Writable } from 'node:stream';
import { probeError, type ProbeError } from '../errors.js';
import { printable } from '../net/read-until.js';

export function nonce(): string {
  return `ksp-${randomBytes(6).toString('hex')}`;
}

/** How many of the bytes that came back instead of the echo are kept for the message. */
const MISMATCH_PREFIX_BYTES = 64;

type EchoFailure = ProbeError<'ECHO_TIMEOUT' | 'ECHO_MISMATCH' | 'ECHO_CONNECTION_ENDED' | 'ECHO_WRITE_FAILED'>;

interface Waiter {
  needle: string;
  /** After the needle, wait for this too (a TTY's answer line); its match is what the echo resolves with. */
  then?: RegExp;
  /** Bytes received while waiting, and the first of them (for ECHO_MISMATCH). */
  received: number;
  prefix: string;
  resolve(match?: RegExpExecArray): void;
}

/** How much text after the needle is kept while waiting for `then` (a terminal line is far shorter). */
const THEN_WINDOW = 256;

/** Collects what a readable says, so echoes can wait for their nonce. */
export class EchoReader {
  private text = '';
  private waiter: Waiter | undefined;

  constructor(stream: Readable) {
    stream.on('data', (c: Buffer) => {
      // Bytes that arrive while no echo is pending can never be an echo (it is written first): drop them.
      const w = this.waiter;
      if (!w) return;
      w.received += c.length;
      if (w.prefix.length < MISMATCH_PREFIX_BYTES) w.prefix += c.toString('latin1').slice(0, MISMATCH_PREFIX_BYTES - w.prefix.length);
      this.text += c.toString('latin1');
      this.check();
    });
  }

  /**
   * Looks for the pending nonce. Only a tail shorter than the nonce is kept
   * between chunks (enough for a nonce split across them), so a peer that
   * floods us costs O(bytes), never O(bytes²).
   */
  private check(): void {
    const w = this.waiter;
    if (!w) return;
    if (w.needle) {
      const i = this.text.indexOf(w.needle);
      if (i < 0) {
        if (this.text.length >= w.needle.length) this.text = this.text.slice(-(w.needle.length - 1));
        return;
      }
      this.text = this.text.slice(i + w.needle.length);
      w.needle = '';
    }
    const match = w.then?.exec(this.text);
    if (!w.then || match) {
      this.text = '';
      this.waiter = undefined;
      w.resolve(match ?? undefined);
    } else if (this.text.length > THEN_WINDOW) this.text = this.text.slice(-THEN_WINDOW);
  }

  /**
   * Writes `payload` (unless `out` is undefined) and resolves with the round trip in ms once it is read
   * back. Fails with ECHO_CONNECTION_ENDED when `lost` settles first,
   * ECHO_WRITE_FAILED when the write fails, and at `timeoutMs` with
   * ECHO_MISMATCH when other bytes came back, else ECHO_TIMEOUT.
   */
  echo(out: Writable | undefined, payload: string, timeoutMs: number, lost: Promise<{ readonly cause: string }>): Promise<number> {
    return this.echoThen(out, payload, { needle: payload }, timeoutMs, lost).then((r) => r.ms);
  }

  /**
   * echo(), waiting for `expect.needle` instead of the payload itself (a terminal echoes NL as CR NL), then for
   * `expect.then` after it (the line a TTY's process answers with); resolves with the round trip and that match.
   */
  echoThen(
    out: Writable | undefined,
    payload: string,
    expect: { readonly needle: string; readonly then?: RegExp },
    timeoutMs: number,
    lost: Promise<{ readonly cause: string }>,
  ): Promise<{ ms: number; match?: RegExpExecArray }> {
    const t0 = performance.now();
    return new Promise((resolve, reject) => {
      let settled = false;
      const settle = (err?: EchoFailure, match?: RegExpExecArray) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        if (this.waiter === waiter) this.waiter = undefined;
        if (err) reject(err);
        else resolve({ ms: Math.round((performance.now() - t0) * 1000) / 1000, ...(match ? { match } : {}) });
      };
      const timer = setTimeout(() => {
        if (waiter.received > 0) {
          const receivedPrefix = printable(Buffer.from(waiter.prefix, 'latin1'), MISMATCH_PREFIX_BYTES);
          settle(
            probeError(
              'ECHO_MISMATCH',
              `${waiter.received} bytes came back within ${timeoutMs} ms, but not the ${payload.length} bytes written: "${receivedPrefix}"`,
              {
                expectedBytes: payload.length,
                receivedBytes: waiter.received,
                receivedPrefix,
              },
            ),
          );
        } else settle(probeError('ECHO_TIMEOUT', `the echo did not come back within ${timeoutMs} ms`, { timeoutMs }));
      }, timeoutMs);
      const waiter: Waiter = {
        needle: expect.needle,
        ...(expect.then ? { then: expect.then } : {}),
        received: 0,
        prefix: '',
        resolve: (m) => settle(undefined, m),
      };
      this.text = '';
      this.waiter = waiter;
      void lost.then((end) =>
        settle(probeError('ECHO_CONNECTION_ENDED', `the connection ended (${endWords(end)}) before the echo came back`, { cause: end.cause })),
      );
      // Without a writable, only wait for `payload` (a shaped hold's tick, written by the pod itself).
      out?.write(payload, (err) => {
        if (err) settle(probeError('ECHO_WRITE_FAILED', `the echo could not be written: ${err.message}`, { reason: err.message }, err));
      });
    });
  }
}
