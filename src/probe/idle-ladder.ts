/**
 * Narrowing a forgotten flow's idle timeout within the run (idle-bracket.ts): rounds of sessions held at once, each
 * crossing one quiet gap without pings and echoing once after it, so each says "still known after g s" or "forgotten
 * by g s". When a ping set the upper end, the first round also crosses a gap past it: data answered there means the
 * ping was lost for another reason (a hop that drops control frames), and there is no idle timer to bracket. A rung goes just below every documented device timeout inside the bracket (idle-devices.ts), so a round
 * usually leaves the bracket holding one product's figure; the rest are spread evenly. Rounds run while the bracket is
 * wider than a second or a tenth of its upper end, and only when the whole round fits the time left (`untilMs`).
 */
import { quietOperation } from './shared-process.js';
import { forgettingTimeouts } from './idle-devices.js';
import { idleBracket, resolved, type IdleBracket } from './idle-bracket.js';
import type { SessionResult, SessionSpec } from './types.js';

/** Sessions per round: a round costs one longest gap of wall time, whatever its size. */
export const LADDER_RUNGS = 6;
/** At most this many rounds. */
export const LADDER_ROUNDS = 2;
/** Rungs closer than this to each other, or to the bracket's ends, say nothing new (the wire is sampled every 0.1 s). */
const MIN_SPACING_SECONDS = 0.2;

const tenth = (s: number) => Math.round(s * 10) / 10;

/** Where the rungs of one round go inside (above, atMost): below each documented timeout first, then evenly. */
export function rungGaps(above: number, atMost: number, count = LADDER_RUNGS): number[] {
  const inside = (g: number) => g > above + MIN_SPACING_SECONDS / 2 && g < atMost - MIN_SPACING_SECONDS / 2;
  const known = forgettingTimeouts()
    .map((t) => tenth(t - Math.max(1, t * 0.03)))
    .filter(inside);
  const gaps = known.slice(0, count);
  const even = count - gaps.length;
  for (let i = 1; i <= even; i++) gaps.push(tenth(above + ((atMost - above) * i) / (even + 1)));
  const sorted = [...new Set(gaps.filter(inside))].sort((a, b) => a - b);
  return sorted.filter((g, i) => i === 0 || g - sorted[i - 1]! >= MIN_SPACING_SECONDS);
}

export interface LadderOptions {
  /** performance.now() by which every round must be over; a round that cannot finish by then is not started. */
  readonly untilMs: number;
  readonly echoTimeoutMs: number;
  /** @default LADDER_ROUNDS */
  readonly rounds?: number;
  readonly signal?: AbortSignal;
  readonly now?: () => number;
}

/**
 * Runs the ladder for the run's `results`; returns the rung sessions (the bracket is idleBracket(results, rungs)).
 * `run` runs one session as the runner runs the others.
 */
export async function runLadder(
  results: readonly SessionResult[],
  run: (spec: SessionSpec) => Promise<SessionResult>,
  o: LadderOptions,
): Promise<SessionResult[]> {
  const now = o.now ?? (() => performance.now());
  const rungs: SessionResult[] = [];
  // How long connecting took here: a rung needs it again before its quiet gap begins.
  const connectMs = Math.max(0, ...results.map((r) => r.upgrade.handshakeMs ?? 0), ...results.map((r) => r.firstEchoMs ?? 0));
  for (let round = 0; round < (o.rounds ?? LADDER_ROUNDS); round++) {
    if (o.signal?.aborted) break;
    const b: IdleBracket | undefined = idleBracket(results, rungs);
    if (!b || resolved(b)) break;
    // An upper end set by an unanswered ping may be a hop that drops control frames, not a forgotten flow: the first
    // round also sends data after a longer gap, which such a hop answers (and the bracket then falls apart).
    const confirm = round === 0 && b.seenOn.packet === 'ping' ? [tenth(b.atMostSeconds + Math.max(0.5, b.atMostSeconds / 10))] : [];
    const gaps = [...rungGaps(b.aboveSeconds, b.atMostSeconds), ...confirm];
    if (!gaps.length) break;
    const roundMs = Math.max(...gaps) * 1000 + 2 * connectMs + o.echoTimeoutMs + 1_000;
    if (now() + roundMs > o.untilMs) break;
    // Its rungs hold at once: as exec where attach showed it (shared-process.ts: attach's holds would hear each other).
    const operation = quietOperation(b.seenOn.operation);
    const { transport } = b.seenOn;
    rungs.push(...(await Promise.all(gaps.map((holdSeconds) => run({ operation, transport, keepalive: 'none', holdSeconds })))));
  }
  return rungs;
}
