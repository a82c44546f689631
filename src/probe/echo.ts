/**
 * Proving a channel: a line written to `cat`'s stdin must come back on
 * stdout; bytes written to a forwarded connection must come back from the
 * pod's echo port. Each echo carries a fresh nonce so stale bytes never count.
 */
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
  readonly needle: string;
  /** Bytes received while waiting, and the first of them (for ECHO_MISMATCH). */
  received: number;
  prefix: string;
  resolve(): void;
}

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
    const i = this.text.indexOf(w.needle);
    if (i >= 0) {
      this.text = '';
      this.waiter = undefined;
      w.resolve();
    } else if (this.text.length >= w.needle.length) {
      this.text = this.text.slice(-(w.needle.length - 1));
    }
  }

  /**
   * Writes `payload` (unless `out` is undefined) and resolves with the round trip in ms once it is read
   * back. Fails with ECHO_CONNECTION_ENDED when `lost` settles first,
   * ECHO_WRITE_FAILED when the write fails, and at `timeoutMs` with
   * ECHO_MISMATCH when other bytes came back, else ECHO_TIMEOUT.
   */
  echo(out: Writable | undefined, payload: string, timeoutMs: number, lost: Promise<{ readonly cause: string }>): Promise<number> {
    const t0 = performance.now();
    return new Promise<number>((resolve, reject) => {
      let settled = false;
      const settle = (err?: EchoFailure) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        if (this.waiter === waiter) this.waiter = undefined;
        if (err) reject(err);
        else resolve(Math.round((performance.now() - t0) * 1000) / 1000);
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
      const waiter: Waiter = { needle: payload, received: 0, prefix: '', resolve: () => settle() };
      this.text = '';
      this.waiter = waiter;
      void lost.then((end) =>
        settle(probeError('ECHO_CONNECTION_ENDED', `the connection ended (${end.cause}) before the echo came back`, { cause: end.cause })),
      );
      // Without a writable, only wait for `payload` (a shaped hold's tick, written by the pod itself).
      out?.write(payload, (err) => {
        if (err) settle(probeError('ECHO_WRITE_FAILED', `the echo could not be written: ${err.message}`, { reason: err.message }, err));
      });
    });
  }
}
