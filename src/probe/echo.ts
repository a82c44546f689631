/**
 * Proving a channel: a line written to `cat`'s stdin must come back on
 * stdout; bytes written to a forwarded connection must come back from the
 * pod's echo port. Each echo carries a fresh nonce so stale bytes never count.
 */
import { randomBytes } from 'node:crypto';
import type { Readable, Writable } from 'node:stream';
import { probeError } from '../errors.js';

export function nonce(): string {
  return `ksp-${randomBytes(6).toString('hex')}`;
}

/** Collects what a readable says, so echoes can wait for their nonce. */
export class EchoReader {
  private text = '';
  private waiter: { needle: string; resolve: () => void } | undefined;
  ended = false;

  constructor(stream: Readable) {
    stream.on('data', (c: Buffer) => {
      // Bytes that arrive while no echo is pending can never be an echo (it is written first): drop them.
      if (!this.waiter) return;
      this.text += c.toString('latin1');
      this.check();
    });
    stream.on('end', () => (this.ended = true));
    stream.on('close', () => (this.ended = true));
  }

  /**
   * Looks for the pending nonce. Only a tail shorter than the nonce is kept
   * between chunks (enough for a nonce split across them), so a peer that
   * floods us costs O(bytes), never O(bytes²).
   */
  private check(): void {
    if (!this.waiter) return;
    const needle = this.waiter.needle;
    const i = this.text.indexOf(needle);
    if (i >= 0) {
      this.text = '';
      const w = this.waiter;
      this.waiter = undefined;
      w.resolve();
    } else if (this.text.length >= needle.length) {
      this.text = this.text.slice(-(needle.length - 1));
    }
  }

  /** Writes `payload` and resolves with the round trip in ms once it is read back. */
  echo(out: Writable, payload: string, timeoutMs: number, abort: Promise<unknown>): Promise<number> {
    const t0 = performance.now();
    return new Promise<number>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.waiter = undefined;
        reject(probeError('ECHO_TIMEOUT', `the echo did not come back within ${timeoutMs} ms`, { timeoutMs }));
      }, timeoutMs);
      this.text = '';
      this.waiter = {
        needle: payload,
        resolve: () => {
          clearTimeout(timer);
          resolve(Math.round((performance.now() - t0) * 1000) / 1000);
        },
      };
      abort.then(() => {
        clearTimeout(timer);
        this.waiter = undefined;
        reject(probeError('ECHO_TIMEOUT', 'the connection ended before the echo came back'));
      });
      out.write(payload, (err) => {
        if (err) {
          clearTimeout(timer);
          this.waiter = undefined;
          reject(probeError('ECHO_TIMEOUT', `the echo could not be written: ${err.message}`));
        }
      });
      this.check();
    });
  }
}
