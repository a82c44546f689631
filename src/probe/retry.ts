/**
 * Retry before it counts: a session that failed before its hold (or transfer) began (its upgrade, or the first echo
 * right after it) is tried once more, after a short pause, on a fresh connection, and the second attempt is what the
 * run reports. A one-off reset or timeout then costs nothing but a `flapping` finding and the Flapping metric (a
 * ticket, never a page); a path that refuses twice is reported as failed, both attempts in its evidence.
 *
 * Why only before the hold: a hold's cut is itself the measurement (a device's idle timeout, a lifetime cap), and
 * repeating it would double the run; the alarms' M-of-N periods absorb a one-off cut. Synthetic monitors do the same
 * for a failing check (Datadog: "retry X times before location is marked as failed",
 * https://docs.datadoghq.com/synthetics/api_tests/#retries; CloudWatch Synthetics: canary retries).
 */
import { unlessAborted } from '../timers.js';
import type { AttemptRecord, Diagnosis, RetryOutcome, SessionResult } from './types.js';

/** The pause before the second attempt, ms: long enough for a hop's one-off (a reset, a restart) to pass. */
export const RETRY_PAUSE_MS = 1000;

/** Failed before its hold or transfer began, and not because the run was stopped. */
export function retryable(r: SessionResult): boolean {
  if (r.ok || r.errorCode === 'INTERRUPTED' || r.upgrade.errorCode === 'INTERRUPTED') return false;
  return !r.upgrade.ok || r.firstEchoMs === null;
}

/** How a failure shows, for "failed the same way": the upgrade's status or code, else the session's code. */
export function failureKey(r: SessionResult): string {
  if (!r.upgrade.ok) return `upgrade:${r.upgrade.status ?? r.upgrade.errorCode ?? '?'}`;
  return `session:${r.errorCode ?? '?'}`;
}

function attemptOf(r: SessionResult): AttemptRecord {
  const u = r.upgrade;
  return {
    upgrade: {
      ok: u.ok,
      status: u.status,
      error: u.error,
      errorCode: u.errorCode,
      handshakeMs: u.handshakeMs,
      ...(u.server ? { server: u.server } : {}),
      ...(u.via ? { via: u.via } : {}),
      ...(u.hop ? { hop: u.hop } : {}),
      ...(u.bodyPrefix ? { bodyPrefix: u.bodyPrefix } : {}),
    },
    firstEchoMs: r.firstEchoMs,
    error: r.error,
    errorCode: r.errorCode,
    durationMs: r.durationMs,
    ...(r.wire ? { wire: r.wire } : {}),
  };
}

/**
 * Runs `attempt`; when it failed before its hold, once more after `pauseMs`: the second result, with the first in
 * `retry`. Not when a second attempt (`attemptMs`, its own deadline) could end after `untilMs` (performance.now(): the
 * Lambda's time before publishing): the run's results must be published, and the first attempt's failure stands.
 */
export async function withRetry(
  attempt: () => Promise<SessionResult>,
  options: { readonly signal?: AbortSignal; readonly pauseMs?: number; readonly untilMs?: number; readonly attemptMs?: number } = {},
): Promise<SessionResult> {
  const first = await attempt();
  const pauseMs = options.pauseMs ?? RETRY_PAUSE_MS;
  if (!retryable(first) || options.signal?.aborted || pauseMs < 0) return first;
  if (options.untilMs !== undefined && performance.now() + pauseMs + (options.attemptMs ?? 0) > options.untilMs) return first;
  const paused = await unlessAborted(new Promise<true>((resolve) => setTimeout(resolve, pauseMs, true)), options.signal, false);
  if (!paused) return first;
  const second = await attempt();
  if (second.errorCode === 'INTERRUPTED') return first;
  const outcome: RetryOutcome = second.ok ? 'passed' : failureKey(second) === failureKey(first) ? 'failed-same' : 'failed-differently';
  return { ...second, retry: { outcome, pauseMs, first: attemptOf(first) } };
}

/** The sessions that failed once and worked on the retry: a flapping path. */
export function flapped(results: readonly SessionResult[]): SessionResult[] {
  return results.filter((r) => r.retry?.outcome === 'passed');
}

/** One finding per operation × transport that flapped in this run, with the first attempt's failure. */
export function flappingFindings(results: readonly SessionResult[]): Diagnosis[] {
  const byPair = new Map<string, SessionResult[]>();
  for (const r of flapped(results)) {
    const key = `${r.operation} over ${r.transport === 'spdy' ? 'SPDY' : 'WebSocket'}`;
    byPair.set(key, [...(byPair.get(key) ?? []), r]);
  }
  return [...byPair].map(([pair, rs]) => {
    const first = rs[0]!.retry!.first;
    const what = first.upgrade.ok
      ? `its first echo failed (${first.errorCode ?? '?'}: ${first.error ?? '?'})`
      : `its upgrade failed (${first.upgrade.status ?? first.upgrade.errorCode ?? '?'}: ${first.upgrade.error ?? '?'})`;
    return {
      code: 'flapping' as const,
      summary: `${pair}: ${rs.length === 1 ? 'a session' : `${rs.length} sessions`} failed before the hold — ${what} — and worked on a fresh connection ${rs[0]!.retry!.pauseMs / 1000} s later. Counted as working; published as Flapping (a ticket when it recurs, never a page).`,
      check:
        "If it recurs, compare the failed attempts' evidence (the run's evidence lines: the reply's Server/Via, the frames before the end): the same hop each time points at one instance of it (a load balancer's unhealthy target, a proxy restarting, connection-tracking table pressure).",
    };
  });
}
