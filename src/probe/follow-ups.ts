/**
 * Sessions a run adds after its holds, only when the holds raised a question they cannot answer themselves, and only
 * within the time the caller gives (`untilMs`):
 *
 * - a device forgot a flow after a quiet gap: the idle ladder narrows its timeout (idle-ladder.ts), then, unless a
 *   session of the run already showed that activity keeps its flows known, an activity check shows whether it times
 *   idleness at all (activity-check.ts);
 * - a hop cut a session as early with pings as without: the activity check tells a cap on a connection's life from a
 *   timer that counts only data.
 *
 * What they found goes into the report (`idleBracket`, `lifetimeCheck`) and the diagnoses.
 */
import { idleCheckSpec, keptKnownByActivity, lifetimeCheck, lifetimeCheckSpec, lifetimeQuestion, withIdleProof } from './activity-check.js';
import { idleBracket } from './idle-bracket.js';
import { runLadder } from './idle-ladder.js';
import type { IdleBracket, LifetimeCheck, SessionResult, SessionSpec } from './types.js';

export interface FollowUps {
  readonly idleBracket?: IdleBracket;
  readonly lifetimeCheck?: LifetimeCheck;
}

export interface FollowUpOptions {
  /** performance.now() by which every follow-up must be over. */
  readonly untilMs: number;
  readonly echoTimeoutMs: number;
  readonly signal?: AbortSignal;
}

const finished = (r: SessionResult | undefined): r is SessionResult => r !== undefined && r.errorCode !== 'INTERRUPTED';

/** Runs what the holds asked for, and says what the run found (nothing when the holds raised no question). */
export async function followUps(results: readonly SessionResult[], run: (spec: SessionSpec) => Promise<SessionResult>, o: FollowUpOptions): Promise<FollowUps> {
  // A session needs its hold, two round trips of connecting and an echo: it runs only when that fits.
  const connectMs = Math.max(0, ...results.map((r) => (r.upgrade.handshakeMs ?? 0) + (r.firstEchoMs ?? 0)));
  const fits = (spec: SessionSpec) => !o.signal?.aborted && performance.now() + spec.holdSeconds * 1000 + 2 * connectMs + o.echoTimeoutMs + 1_000 <= o.untilMs;
  const question = lifetimeQuestion(results);
  const lifetimeSpec = question ? lifetimeCheckSpec(question) : undefined;
  const idle = async (): Promise<IdleBracket | undefined> => {
    const rungs = (await runLadder(results, run, o)).filter(finished);
    const bracket = idleBracket(results, rungs);
    if (!bracket) return undefined;
    const spec = keptKnownByActivity(results, bracket) ? undefined : idleCheckSpec(bracket);
    return withIdleProof(bracket, results, spec && fits(spec) ? await run(spec) : undefined);
  };
  const [bracket, checked] = await Promise.all([idle(), lifetimeSpec && fits(lifetimeSpec) ? run(lifetimeSpec) : undefined]);
  return {
    ...(bracket ? { idleBracket: bracket } : {}),
    ...(question && finished(checked) ? { lifetimeCheck: lifetimeCheck(question, checked) } : {}),
  };
}
