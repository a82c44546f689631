/**
 * One session that keeps application data moving (an echo every few seconds, `SessionSpec.echoEverySeconds`) past
 * the time a path cut or forgot its quieter sessions, to answer what the holds alone cannot:
 *
 * - Cut as early with kubectl's pings as without (by a hop, while the pings moved): the hop's idle timer counts only
 *   application data (pings do not reset it), or the hop caps a connection's life whatever moves (GCP's external
 *   Application Load Balancer ends a WebSocket at its backend service timeout, 30 s by default). Both cut a silent
 *   session T s after the 101. The check echoes every HOLD_SHAPE_PERIOD_SECONDS past 1.5 T: cut again about T s after
 *   its 101, a lifetime cap; survived, a timer that counts only data (pings-ignored, now proven).
 * - A flow forgotten after a quiet gap (idle-bracket.ts): a device that forgets *idle* flows, or one that drops every
 *   flow some time after it began? Unless a session of the run already kept its flow known past the bracket by
 *   moving bytes more often than its lower end, the check echoes more often than that (0.8 × the lower end) past the
 *   upper end: survived, the device forgets idle flows; lost, it drops flows whatever moves.
 */
import { quietOperation } from './shared-process.js';
import { HOLD_SHAPE_PERIOD_SECONDS, type Transport } from '../vocabulary.js';
import { kubectlPingPeriodMs } from '../streaming/keepalive.js';
import type { IdleBracket, LifetimeCheck, SessionResult, SessionSpec } from './types.js';
import { heldAlike } from './types.js';

export type { LifetimeCheck } from './types.js';

/** Two cuts this close (s) are the same timer. */
export const sameCut = (a: number, b: number) => Math.abs(a - b) <= Math.max(1.5, Math.max(a, b) * 0.1);

const tenth = (s: number) => Math.round(s * 10) / 10;

/** A hop's own cut (nothing of ours outstanding), with its time since the 101. */
const hopCut = (r: SessionResult): number | null =>
  r.hold.survived === false && r.hold.quiet?.cut === 'hop' && r.hold.disconnectSeconds !== null ? r.hold.disconnectSeconds : null;

/**
 * A session with kubectl's pings cut by a hop (bytes still moving: the last one within a ping period of the cut) at
 * about the time its silent twin was cut, where the twin's idle time was longer than the ping period (pings should have
 * kept it open).
 */
export function cutDespitePings(r: SessionResult, twin: SessionResult): boolean {
  const withPings = hopCut(r);
  const without = hopCut(twin);
  if (withPings === null || without === null || r.keepalive !== 'kubectl' || twin.keepalive !== 'none') return false;
  const pingSeconds = kubectlPingPeriodMs(r.operation, r.transport) / 1000;
  return (r.hold.idleSeconds ?? Number.POSITIVE_INFINITY) <= pingSeconds + 1 && (twin.hold.idleSeconds ?? 0) > pingSeconds && sameCut(withPings, without);
}

/** The lifetime question, when the run raises it (cutDespitePings on some pair); undefined otherwise. */
export function lifetimeQuestion(results: readonly SessionResult[]): { readonly cutSeconds: number; readonly transport: Transport } | undefined {
  for (const r of results) {
    if (r.keepalive !== 'kubectl' || r.holdShape || r.transferBytes) continue;
    const twin = results.find((x) => x.keepalive === 'none' && heldAlike(x, r));
    if (twin && cutDespitePings(r, twin)) return { cutSeconds: tenth((hopCut(r)! + hopCut(twin)!) / 2), transport: r.transport };
  }
  return undefined;
}

/** The check session for the lifetime question: kubectl's pings and an echo every period, past the cut by half again. */
export function lifetimeCheckSpec(q: { readonly cutSeconds: number; readonly transport: Transport }): SessionSpec {
  const holdSeconds = Math.ceil(q.cutSeconds * 1.5 + 2 * HOLD_SHAPE_PERIOD_SECONDS);
  return { operation: 'exec', transport: q.transport, keepalive: 'kubectl', holdSeconds, echoEverySeconds: HOLD_SHAPE_PERIOD_SECONDS };
}

/** What the lifetime check session says. */
export function lifetimeCheck(q: { readonly cutSeconds: number; readonly transport: Transport }, check: SessionResult): LifetimeCheck {
  const base = {
    cutSeconds: q.cutSeconds,
    transport: q.transport,
    holdSeconds: check.holdSeconds,
    everySeconds: check.echoEverySeconds ?? HOLD_SHAPE_PERIOD_SECONDS,
  };
  if (!check.upgrade.ok || check.firstEchoMs === null) return { ...base, outcome: 'inconclusive', checkCutSeconds: null };
  if (check.ok) return { ...base, outcome: 'data-only-timer', checkCutSeconds: null };
  const at = check.hold.disconnectSeconds;
  return { ...base, outcome: at !== null && sameCut(at, q.cutSeconds) ? 'lifetime-cap' : 'inconclusive', checkCutSeconds: at };
}

/**
 * Whether a session of the run already showed that activity keeps the flow known past the bracket: it lived longer
 * than the upper end with every quiet gap answered (its gaps were all shorter: the bracket's lower end is the longest).
 */
export function keptKnownByActivity(results: readonly SessionResult[], b: Pick<IdleBracket, 'atMostSeconds'>): boolean {
  return results.some(
    (r) =>
      r.upgrade.ok &&
      r.hold.survived === true &&
      r.holdSeconds > b.atMostSeconds &&
      !r.transferBytes &&
      !r.holdShape &&
      r.hold.quiet?.answeredQuietSeconds !== undefined,
  );
}

/** The check session for a forgotten flow, or undefined when nothing answered below the bracket (no safe period). */
export function idleCheckSpec(b: IdleBracket): SessionSpec | undefined {
  if (b.aboveSeconds <= 0) return undefined;
  const everySeconds = Math.max(0.2, tenth(b.aboveSeconds * 0.8));
  return {
    operation: quietOperation(b.seenOn.operation),
    transport: b.seenOn.transport,
    keepalive: 'none',
    holdSeconds: Math.ceil(b.atMostSeconds + 2 * everySeconds + 1),
    echoEverySeconds: everySeconds,
  };
}

/** The bracket with what proves (or disproves) that idleness is what the device times. */
export function withIdleProof(b: IdleBracket, results: readonly SessionResult[], check: SessionResult | undefined): IdleBracket {
  if (keptKnownByActivity(results, b)) return { ...b, proof: 'sessions' };
  if (!check || !check.upgrade.ok || check.firstEchoMs === null || check.errorCode === 'INTERRUPTED') return { ...b, proof: 'unchecked' };
  const every = check.echoEverySeconds ?? 0;
  if (check.ok) return { ...b, proof: 'check', check: { everySeconds: every, holdSeconds: check.holdSeconds, lostAtSeconds: null } };
  return { ...b, proof: 'not-idle', check: { everySeconds: every, holdSeconds: check.holdSeconds, lostAtSeconds: check.hold.disconnectSeconds } };
}
