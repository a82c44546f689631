/**
 * A session's options, its limits and its deadline: what callers (the runner, the CLI's progress, the Lambda's
 * time budget) need of a session without the session itself.
 */
import type { Clock } from '../timers.js';
import { DEFAULT_DIAL_TIMEOUT_MS, DEFAULT_UPGRADE_TIMEOUT_MS } from '../net/connection.js';
import type { ClusterTarget, SessionSpec } from './types.js';
import type { StartPacer } from './start-pacer.js';
import type { HoldTurn } from './shared-process.js';

export type SessionState = 'connecting' | 'transferring' | 'holding' | 'lost' | 'done';

export interface SessionProgress {
  readonly spec: SessionSpec;
  readonly state: SessionState;
  /** For `lost`: seconds since the 101. */
  readonly atSeconds?: number;
}

export interface SessionOptions {
  /** How long one echo may take, ms (DEFAULT_ECHO_TIMEOUT_MS). */
  readonly echoTimeoutMs: number;
  /** How long each SPDY SYN_REPLY may take, ms (DEFAULT_STREAM_REPLY_TIMEOUT_MS). */
  readonly streamReplyTimeoutMs?: number;
  readonly onProgress?: (event: SessionProgress) => void;
  readonly clock?: Clock;
  /** Aborting it (SIGINT, SIGTERM) closes the session the way kubectl does and ends it `interrupted`. */
  readonly signal?: AbortSignal;
  /** Paces the sessions' starts by the process's CPU share (start-pacer.ts); none: every session starts at once. */
  readonly pacer?: Pick<StartPacer, 'turn'>;
  /** Called once the session's start (upgrade and first echo, or its failure) is over: its CPU-heavy part. */
  readonly onStarted?: () => void;
  /**
   * The session shares the container's process with others (attach): it arrives once its first echo is done, and its
   * hold begins when the whole group has (shared-process.ts).
   */
  readonly holdTurn?: HoldTurn;
}

export const DEFAULT_ECHO_TIMEOUT_MS = 5_000;
/**
 * kubectl waits 30 s for each SYN_REPLY (STREAM_REPLY_TIMEOUT_MS); a kubelet
 * replies in milliseconds, so a probe that has waited 10 s has its answer.
 */
export const DEFAULT_STREAM_REPLY_TIMEOUT_MS = 10_000;
/** After stdin is closed: how long the exit status may take; also the close handshake's grace. */
export const CLOSE_GRACE_MS = 3_000;
/** How long a failed echo waits to learn how the connection ended (it is usually already known). */
export const END_CAUSE_GRACE_MS = 200;
/** Room for scheduling between phases, in the deadline. */
export const SLACK_MS = 2_000;
/** The kubelet's words for a pod port nothing listens on (kubelet portforward: "failed to connect to localhost:PORT … connection refused"). */
export const POD_PORT_REFUSED = /unable to do port forwarding|failed to connect to localhost|connection refused|no such port/i;
/** How often the hold looks whether a byte moved (the resolution of idleSeconds and of the quiet gaps). */
export const ACTIVITY_POLL_MS = 100;
/**
 * A reset this soon after a packet of ours answers it (hold-activity.ts): one round trip, which is under 0.4 s to any
 * API server on Earth, plus a sample of ACTIVITY_POLL_MS; a hop's own timer that happens to fire this close to a packet
 * of ours is not told apart, and is rare (a timer that counts our packets restarts with them).
 */
export const REPLY_WINDOW_MS = 1_000;

/** The session's own deadline, ms: every phase's limit added up. */
export function sessionDeadlineMs(
  holdSeconds: number,
  connection: Pick<ClusterTarget['connection'], 'dialTimeoutMs' | 'upgradeTimeoutMs'>,
  options: Pick<SessionOptions, 'echoTimeoutMs' | 'streamReplyTimeoutMs'>,
): number {
  const dial = connection.dialTimeoutMs ?? DEFAULT_DIAL_TIMEOUT_MS;
  const upgrade = connection.upgradeTimeoutMs ?? DEFAULT_UPGRADE_TIMEOUT_MS;
  const streams = options.streamReplyTimeoutMs ?? DEFAULT_STREAM_REPLY_TIMEOUT_MS;
  return dial + upgrade + streams + holdSeconds * 1000 + 2 * options.echoTimeoutMs + CLOSE_GRACE_MS + SLACK_MS;
}
