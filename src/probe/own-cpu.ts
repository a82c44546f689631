/**
 * When a handshake's time is more this process's than the path's (issue 26, "measure the path, not ourselves"):
 * under a Lambda's CPU share, or with many sessions starting at once, the 101 can sit unread while our own
 * JavaScript runs (zlib, TLS, other sessions' handshakes), and HandshakeLatency would report our CPU as the
 * network's. The upgrade records how busy our event loop was over the handshake (UpgradeTiming.loopBusy); a
 * handshake whose busy time is at least DISTORTED_SHARE of it and at least DISTORTED_BUSY_MS is marked, shown with
 * a `*` and not published as HandshakeLatency. On loopback a whole handshake is a few ms of our own work, under
 * the absolute bound: only time that could move a reading is counted.
 */
export const DISTORTED_SHARE = 0.5;
export const DISTORTED_BUSY_MS = 20;

export interface OwnCpu {
  /** The share (0..1) of the handshake our event loop was busy. */
  readonly loopBusy: number;
  /** loopBusy × handshake, ms: at most this much of the reading is our own CPU. */
  readonly busyMs: number;
  /** busyMs ≥ DISTORTED_BUSY_MS and loopBusy ≥ DISTORTED_SHARE: the reading is more ours than the path's. */
  readonly distorted: boolean;
}

export function ownCpu(handshakeMs: number, loopBusy: number): OwnCpu {
  const busyMs = Math.round(loopBusy * handshakeMs * 10) / 10;
  return { loopBusy, busyMs, distorted: loopBusy >= DISTORTED_SHARE && busyMs >= DISTORTED_BUSY_MS };
}
