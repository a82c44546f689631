/**
 * During a hold: when it began and when a byte last moved on the connection (pings included), polled every
 * ACTIVITY_POLL_MS on the session's clock, so that a loss can say how long the session had been idle.
 */
import type { ExecSession, PortForwardSession } from '../streaming/types.js';
import type { Clock } from '../timers.js';
import type { Lost } from './session-channel.js';
import { ACTIVITY_POLL_MS } from './session-options.js';
import type { HoldOutcome } from './types.js';

export class HoldActivity {
  /** When the hold began (the last application data). */
  startedAt: number | undefined;
  private lastMovedAt: number | undefined;
  private cancel: (() => void) | undefined;

  constructor(private readonly clock: Clock) {}

  start(session: ExecSession | PortForwardSession): void {
    this.startedAt = this.clock.now();
    this.lastMovedAt = this.startedAt;
    let seen = session.bytesMoved();
    const poll = () => {
      const now = session.bytesMoved();
      if (now !== seen) {
        seen = now;
        this.lastMovedAt = this.clock.now();
      }
      this.cancel = this.clock.after(ACTIVITY_POLL_MS, poll);
    };
    this.cancel = this.clock.after(ACTIVITY_POLL_MS, poll);
  }

  stop(): void {
    this.cancel?.();
    this.cancel = undefined;
  }

  /** The hold's outcome for a loss; `disconnectSeconds` is the caller's (seconds since the 101). */
  lostAt(end: Lost, disconnectSeconds: number): HoldOutcome {
    this.stop();
    // The hold's start and the last activity are on the session's clock: so is the loss (sessionAtMs), not the transport's atMs.
    const at = end.sessionAtMs ?? end.atMs;
    const secondsBefore = (t: number | undefined) => (t === undefined ? null : Math.round(Math.max(0, at - t) / 100) / 10);
    return {
      survived: false,
      disconnectSeconds,
      cause: end.cause,
      sinceDataSeconds: secondsBefore(this.startedAt),
      idleSeconds: secondsBefore(this.lastMovedAt),
    };
  }
}
