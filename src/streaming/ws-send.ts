/**
 * How our writers hand binary messages to a WebSocket: the same rule as a SPDY session's DATA frames
 * (SEND_QUEUE_BYTES): go on at once while the socket's queue is short, wait for this message to reach the socket
 * past it. Waiting for every message's own callback instead makes each 32 KiB frame wait for the one before
 * (stop-and-go: 0.87× kubectl on the tunnel; exec stdin paid it until issue 42).
 */
import { SEND_QUEUE_BYTES } from './spdy/constants.js';
import type { WsLike } from './ws-client.js';

/**
 * Sends `pieces` as one binary message (masked straight into one frame where the socket allows it) and says
 * whether the writer must wait: false while the queue is under SEND_QUEUE_BYTES — go on now; a failure of this
 * message later goes to `failed` — true past it, and `sent` runs once this message has reached the socket.
 */
export function sendBinaryMessage(ws: WsLike, pieces: readonly Buffer[], sent: (err: Error | null) => void, failed: (err: Error) => void): boolean {
  let waiting = false;
  const done = (err?: Error | null) => {
    if (waiting) sent(err ?? null);
    else if (err) failed(err);
  };
  if (ws.sendPieces) ws.sendPieces(pieces, done);
  else ws.send(pieces.length === 1 ? pieces[0]! : Buffer.concat(pieces as Buffer[]), { binary: true }, done);
  waiting = (ws.bufferedAmount ?? 0) >= SEND_QUEUE_BYTES;
  return waiting;
}
