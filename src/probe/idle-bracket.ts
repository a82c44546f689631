/**
 * A device that forgets idle flows (NAT gateway, L4 load balancer, stateful firewall) is never seen at its timeout:
 * only at the next packet, which it resets or drops. So its timeout is bracketed, never read off a cut: every packet
 * of ours that crossed a quiet gap and was answered says the timeout is longer than that gap; the first one that was
 * reset or never answered says it is at most that gap (hold-activity.ts records both for every held session). The
 * bracket is (longest answered gap, shortest unanswered gap]. The ladder (idle-ladder.ts) narrows it with sessions
 * that each cross one chosen gap.
 */
import { devicesWithin, type IdleDevice } from './idle-devices.js';
import type { IdleBracket, LadderRung, SessionResult } from './types.js';

export type { IdleBracket, LadderRung } from './types.js';

/** The sessions whose holds say something about quiet gaps: upgraded, proven, held in silence. */
function held(results: readonly SessionResult[]): SessionResult[] {
  return results.filter((r) => r.upgrade.ok && r.firstEchoMs !== null && r.holdSeconds > 0 && !r.transferBytes && !r.holdShape && r.hold.quiet);
}

/** A session cut because a device no longer knew its flow: a reset in answer to our packet, or no answer at all. */
export function forgotten(r: SessionResult): boolean {
  const cut = r.hold.quiet?.cut;
  return (cut === 'reset-reply' || cut === 'no-reply') && r.hold.quiet?.unanswered !== undefined;
}

/**
 * The bracket from the run's sessions (and the ladder's): undefined when no session met a forgotten flow, or when the
 * evidence contradicts an idle timer (a packet after a longer quiet gap answered than one that was not: something
 * else dropped the flow).
 */
export function idleBracket(results: readonly SessionResult[], ladder: readonly SessionResult[] = []): IdleBracket | undefined {
  const main = held(results);
  const rungs = held(ladder);
  const all = [...main, ...rungs];
  const lost = all.filter(forgotten);
  if (!lost.length) return undefined;
  const upperOf = (r: SessionResult) => r.hold.quiet!.unanswered!.quietSeconds;
  const tightest = lost.reduce((a, b) => (upperOf(b) < upperOf(a) ? b : a));
  const atMost = upperOf(tightest);
  const answered = all.filter((r) => (r.hold.quiet?.answeredQuietSeconds ?? 0) > 0);
  const loosest = answered.reduce<SessionResult | undefined>(
    (a, b) => (a === undefined || b.hold.quiet!.answeredQuietSeconds! > a.hold.quiet!.answeredQuietSeconds! ? b : a),
    undefined,
  );
  const above = loosest?.hold.quiet!.answeredQuietSeconds ?? 0;
  if (above >= atMost) return undefined;
  const reset = lost.some((r) => r.hold.quiet!.cut === 'reset-reply');
  const method = [
    loosest ? `a packet after ${above} s of quiet was answered` : 'no packet after a quiet gap was answered',
    `one after ${atMost} s was ${tightest.hold.quiet!.cut === 'reset-reply' ? 'reset' : 'never answered'}`,
    `${main.length} held sessions${rungs.length ? ` and ${rungs.length} ladder sessions` : ''}`,
  ].join(', ');
  return {
    proof: 'unchecked',
    atExpiry: reset ? 'reset' : 'drop',
    aboveSeconds: above,
    atMostSeconds: atMost,
    method,
    rungs: rungs.map((r) => ({ quietSeconds: r.holdSeconds, met: rungOutcome(r) })),
    seenOn: { operation: tightest.operation, transport: tightest.transport, packet: pingOrData(tightest) },
  };
}

/**
 * What the first unanswered packet of a session carried: with kubectl's keepalive, a packet sent well before the hold's
 * end is a ping; the hold's end is the echo (data). Sampling puts the echo within a second of the hold's end.
 */
export function pingOrData(r: SessionResult): 'ping' | 'data' {
  return r.keepalive === 'kubectl' && r.hold.quiet!.unanswered!.quietSeconds < r.holdSeconds - 1 ? 'ping' : 'data';
}

function rungOutcome(r: SessionResult): LadderRung['met'] {
  if (!r.upgrade.ok || r.firstEchoMs === null) return 'failed';
  if (r.hold.survived) return 'answered';
  const cut = r.hold.quiet?.cut;
  return cut === 'reset-reply' ? 'reset' : cut === 'no-reply' ? 'no-answer' : cut === 'hop' ? 'closed' : 'failed';
}

/** Narrow enough to name a device: within a second, or a tenth of the upper end. */
export function resolved(b: Pick<IdleBracket, 'aboveSeconds' | 'atMostSeconds'>): boolean {
  return b.atMostSeconds - b.aboveSeconds <= Math.max(1, b.atMostSeconds / 10);
}

/** "between 3.8 and 4.0 s", or "at most 12 s" when nothing bounds it below. */
export function bracketText(b: Pick<IdleBracket, 'aboveSeconds' | 'atMostSeconds'>): string {
  const f = (s: number) => (s >= 100 ? s.toFixed(0) : s.toFixed(1));
  return b.aboveSeconds > 0 ? `between ${f(b.aboveSeconds)} and ${f(b.atMostSeconds)} s` : `at most ${f(b.atMostSeconds)} s`;
}

/** The documented devices that forget flows the same way, with a default inside the bracket. */
export function bracketDevices(b: IdleBracket): IdleDevice[] {
  return devicesWithin(b.atExpiry === 'reset' ? 'forgets-reset' : 'forgets-silent', b.aboveSeconds, b.atMostSeconds);
}
