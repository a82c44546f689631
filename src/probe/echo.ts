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
      this.text += c.toString('latin1');
      if (this.text.length > 1 << 20) this.text = this.text.slice(-4096);
      this.check();
    });
    stream.on('end', () => (this.ended = true));
    stream.on('close', () => (this.ended = true));
  }

  private check(): void {
    if (!this.waiter) return;
    const i = this.text.indexOf(this.waiter.needle);
    if (i >= 0) {
      this.text = this.text.slice(i + this.waiter.needle.length);
      const w = this.waiter;
      this.waiter = undefined;
      w.resolve();
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
