/**
 * Reads a proxy's reply from a socket until `done` says the collected bytes
 * are complete, then puts any bytes beyond that back (socket.unshift) for
 * whoever reads next, and leaves the socket ready for them to read. Bounded by
 * maxBytes so a hostile proxy cannot make us buffer forever.
 */
import type { Socket } from 'node:net';
import { probeError, type ErrorContexts } from '../errors.js';

/** The most a proxy's reply head may take before we call it broken. */
export const MAX_PROXY_REPLY_BYTES = 16 * 1024;

export function readUntil(
  socket: Socket,
  done: (buf: Buffer) => number | undefined, // returns the length of the complete message
  what: string,
  context: ErrorContexts['DIAL_PROXY'],
  maxBytes = MAX_PROXY_REPLY_BYTES,
): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    let buf = Buffer.alloc(0);
    const cleanup = () => {
      // Removing the last 'readable' listener leaves the socket neither paused nor flowing (Node's
      // updateReadableListening), so whoever reads next starts it with a 'data' listener. pause()
      // here would leave it paused for good: an http.request on an http:// server then never reads
      // its reply (the bug behind every upgrade timing out through a proxy).
      socket.off('readable', onReadable);
      socket.off('end', onEnd);
      socket.off('error', onError);
      socket.off('close', onEnd);
    };
    const onReadable = () => {
      let chunk: Buffer | null;
      while ((chunk = socket.read() as Buffer | null) !== null) {
        buf = Buffer.concat([buf, chunk]);
        const n = done(buf);
        if (n !== undefined) {
          cleanup();
          // Bytes past the reply belong to whoever reads next.
          if (n < buf.length) socket.unshift(buf.subarray(n));
          resolve(buf.subarray(0, n));
          return;
        }
        if (buf.length > maxBytes) {
          cleanup();
          socket.destroy();
          reject(probeError('DIAL_PROXY', `${what}: more than ${maxBytes} bytes without a complete reply`, context));
          return;
        }
      }
    };
    const onEnd = () => {
      cleanup();
      reject(probeError('DIAL_PROXY', `${what}: the connection closed after ${buf.length} bytes of the reply`, context));
    };
    const onError = (err: NodeJS.ErrnoException) => {
      cleanup();
      reject(probeError('DIAL_PROXY', `${what}: ${err.code ?? err.message}`, { ...context, errno: err.code }, err));
    };
    socket.on('readable', onReadable);
    socket.on('end', onEnd);
    socket.on('close', onEnd);
    socket.on('error', onError);
  });
}

/** Length of an HTTP head (through CRLFCRLF), or undefined while incomplete. */
export function httpHeadLength(buf: Buffer): number | undefined {
  const i = buf.indexOf('\r\n\r\n');
  return i < 0 ? undefined : i + 4;
}

/**
 * Printable first bytes of a peer's reply, for error messages: at most `max`, every byte outside printable ASCII shown
 * as ".", and a clipped reply says how long it was (`total`: the bytes that came, when more than `buf` holds). A peer
 * may echo a secret back; results are masked where they are shown (src/kube/secrets.ts).
 */
export function printable(buf: Buffer, max = 120, total = buf.length): string {
  const shown = buf
    .subarray(0, max)
    .toString('latin1')
    .replace(/[^\x20-\x7e]/g, '.');
  return total > max ? `${shown}… (${total.toLocaleString('en-US')} bytes)` : shown;
}
