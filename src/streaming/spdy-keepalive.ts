/** kubectl's SPDY keepalive (periods in keepalive.ts) and the mapping of a session's end to the probe's causes. */
import type { Socket } from 'node:net';
import { isProbeError } from '../errors.js';
import type { SpdySession } from './spdy/session.js';
import type { ConnectionEnd } from './types.js';

export function startSpdyKeepalive(session: SpdySession, periodMs: number): { stop(): void } {
  // Like spdystream, an unanswered ping never fails the session by itself.
  const timer = setInterval(() => session.ping().catch(() => undefined), periodMs);
  timer.unref();
  return { stop: () => clearInterval(timer) };
}

export function spdyEnd(session: SpdySession, raw: Socket): Promise<ConnectionEnd> {
  let sawRst = false;
  let sawFin = false;
  raw.once('end', () => (sawFin = true));
  raw.on('error', (err: NodeJS.ErrnoException) => {
    // Only a reset that came before the peer's FIN: after a FIN our own ping write fails with EPIPE/ECONNRESET,
    // and the cut is still a FIN (as the WebSocket transport says of the same hop, ws-connection.ts).
    if ((err.code === 'ECONNRESET' || err.code === 'EPIPE') && !sawFin) sawRst = true;
  });
  return session.closed.then((end) => {
    const cause = end.cause === 'error' && sawRst ? 'rst' : end.cause === 'fin' && sawRst ? 'rst' : end.cause;
    return { cause, atMs: performance.now(), message: end.error?.message, ...(isProbeError(end.error) ? { error: end.error } : {}) };
  });
}
