/**
 * During a hold and the echo after it: what moved on the connection, each way (pings included), sampled every
 * ACTIVITY_POLL_MS on the session's clock, and what that says about a loss.
 *
 * Devices that forget an idle flow (NAT gateways, L4 load balancers, stateful firewalls: lab/kernel-hops) say nothing
 * when they forget it. They show only when the next packet comes: a reset in answer to it, or no answer at all. So
 * the moment a session is lost is not the device's timeout when the loss answers a packet of ours; what dates the
 * timeout is the quiet gap before that packet. Each packet of ours that follows a quiet gap (nothing moved either way)
 * is watched: answered (something read after it) gives a lower bound on the device's timeout, never answered an
 * upper bound (idle-bracket.ts).
 */
import type { ExecSession, PortForwardSession, WireCounters } from '../streaming/types.js';
import type { Clock } from '../timers.js';
import type { Lost } from './session-channel.js';
import { ACTIVITY_POLL_MS, REPLY_WINDOW_MS } from './session-options.js';
import type { HoldOutcome, QuietEvidence } from './types.js';

const tenths = (ms: number) => Math.round(Math.max(0, ms) / 100) / 10;

export class HoldActivity {
  /** When the hold began (the last application data). */
  startedAt: number | undefined;
  private lastMovedAt: number | undefined;
  private last: WireCounters | undefined;
  private session: Pick<ExecSession | PortForwardSession, 'wire'> | undefined;
  /** The oldest packet of ours not answered yet: when it went, and the quiet gap before it, ms. */
  private pending: { readonly at: number; readonly quietMs: number } | undefined;
  private answeredQuietMs: number | null = null;
  private cancel: (() => void) | undefined;
  private since101: ((at: number) => number) | undefined;
  private tracksQuiet = true;

  constructor(private readonly clock: Clock) {}

  /**
   * `since101` turns a time on the session's clock into seconds since the 101 (for the evidence). A shaped hold
   * (`quiet: false`) writes or reads by design and says nothing about quiet gaps: it gets no evidence.
   */
  start(session: Pick<ExecSession | PortForwardSession, 'wire'>, since101: (at: number) => number, quiet = true): void {
    this.session = session;
    this.since101 = since101;
    this.tracksQuiet = quiet;
    this.startedAt = this.clock.now();
    this.lastMovedAt = this.startedAt;
    this.last = session.wire();
    const poll = () => {
      this.sample();
      this.cancel = this.clock.after(ACTIVITY_POLL_MS, poll);
    };
    this.cancel = this.clock.after(ACTIVITY_POLL_MS, poll);
  }

  /** Reads the counters now: a write after a quiet gap starts waiting for its answer; a read answers it. */
  sample(): void {
    if (!this.session || !this.last || this.lastMovedAt === undefined) return;
    const now = this.clock.now();
    const w = this.session.wire();
    const wrote = w.writtenBytes !== this.last.writtenBytes;
    const read = w.readBytes !== this.last.readBytes;
    // Within one sample a write and a read are taken in that order: the far side speaks when spoken to (the API
    // server never pings a client; it sends only what the pod writes, and our pod writes only echoes).
    if (wrote && !this.pending) this.pending = { at: now, quietMs: now - this.lastMovedAt };
    if (read && this.pending) {
      this.answeredQuietMs = Math.max(this.answeredQuietMs ?? 0, this.pending.quietMs);
      this.pending = undefined;
    }
    if (wrote || read) this.lastMovedAt = now;
    this.last = w;
  }

  stop(): void {
    this.cancel?.();
    this.cancel = undefined;
  }

  /** The evidence so far, for a session that ended without a loss event (survived, or no echo back). */
  evidence(): QuietEvidence | undefined {
    this.sample();
    this.stop();
    if (!this.session || !this.tracksQuiet) return undefined;
    return { ...this.seen(), ...(this.pending ? { cut: 'no-reply' as const } : {}) };
  }

  /** What every outcome carries: the longest answered quiet gap, and the packet of ours still unanswered. */
  private seen(): QuietEvidence {
    const p = this.pending;
    return {
      answeredQuietSeconds: this.answeredQuietMs === null ? null : tenths(this.answeredQuietMs),
      ...(p ? { unanswered: { quietSeconds: tenths(p.quietMs), atSeconds: this.since101!(p.at) } } : {}),
    };
  }

  /** The hold's outcome for a loss; `disconnectSeconds` is the caller's (seconds since the 101). */
  lostAt(end: Lost, disconnectSeconds: number): HoldOutcome {
    this.sample();
    this.stop();
    // The hold's start and the last activity are on the session's clock: so is the loss (sessionAtMs), not the transport's atMs.
    const at = end.sessionAtMs ?? end.atMs;
    const p = this.pending;
    // A reset within a round trip of a packet of ours answers that packet: the device no longer knew the flow. Unless
    // a packet after as long a quiet gap was answered before: then it was not the quiet (a hop resetting on its own
    // timer just after one of our pings). A loss long after a packet that was never answered: the flow had vanished
    // (the kernel or our pong deadline gave up).
    const longerThanAnswered = p !== undefined && (this.answeredQuietMs === null || p.quietMs > this.answeredQuietMs + 2 * ACTIVITY_POLL_MS);
    const cut: QuietEvidence['cut'] = !p ? 'hop' : at - p.at > REPLY_WINDOW_MS ? 'no-reply' : end.cause === 'rst' && longerThanAnswered ? 'reset-reply' : 'hop';
    // Idle before the loss: since the last byte that moved, not counting a packet of ours that was never answered.
    const lastMoved = p && this.tracksQuiet ? p.at - p.quietMs : this.lastMovedAt;
    const secondsBefore = (t: number | undefined) => (t === undefined ? null : tenths(at - t));
    return {
      survived: false,
      disconnectSeconds,
      cause: end.cause,
      sinceDataSeconds: secondsBefore(this.startedAt),
      idleSeconds: secondsBefore(lastMoved),
      ...(this.tracksQuiet ? { quiet: { ...this.seen(), cut } } : {}),
    };
  }
}
