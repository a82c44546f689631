/**
 * Corks a writable until the next tick, once per tick: the writes of this tick leave together (one writev on
 * a socket: fewer system calls and larger TCP segments). Used by every writer of bulk data: a SPDY session on
 * a socket, our WebSocket client's frames, the emulator's pod-side connections.
 */
import type { Writable } from 'node:stream';

const corked = new WeakSet<Writable>();

export function corkForTick(w: Writable): void {
  if (corked.has(w)) return;
  corked.add(w);
  w.cork();
  process.nextTick(() => {
    corked.delete(w);
    w.uncork();
  });
}
