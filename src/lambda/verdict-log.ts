/**
 * The function's one log line per verdict, and the Logs Insights query the
 * dashboard runs over those lines (infra/dashboard.ts): one definition for
 * both, so the table never asks for a field the function does not write.
 */
import { rowText } from '../probe/row-text.js';
import { TODAYS_KUBECTL } from '../probe/kubectl-model.js';
import type { ProbeReport } from '../probe/types.js';

export const VERDICT_LOG_MSG = 'verdict';

export interface VerdictLogLine {
  readonly level: 'info';
  readonly msg: typeof VERDICT_LOG_MSG;
  readonly location: string;
  readonly schedule: string | undefined;
  readonly cluster: string;
  readonly operation: string;
  readonly keepalive: string;
  readonly holdSeconds: number;
  /** The row as the table names it: `65s`, `65s-output`, `cp 8MiB` (rowText). */
  readonly row: string;
  readonly verdict: string;
  readonly spdy: string;
  readonly websocket: string;
  /** Today's kubectl (TODAYS_KUBECTL): works, works-via-fallback, breaks, unknown; not-modelled for holds without pings. */
  readonly kubectl: string;
  /** Each diagnosis as `code: summary`, joined by " | "; null when clean. */
  readonly diagnosis: string | null;
  /** What to check first. */
  readonly check: string | null;
}

export function verdictLogLines(report: ProbeReport, location: string, schedule: string | undefined): VerdictLogLine[] {
  return report.verdicts.map((v) => ({
    level: 'info',
    msg: VERDICT_LOG_MSG,
    location,
    schedule,
    cluster: report.cluster,
    operation: v.operation,
    keepalive: v.keepalive,
    holdSeconds: v.holdSeconds,
    row: rowText(v),
    verdict: v.verdict,
    spdy: v.spdy,
    websocket: v.websocket,
    kubectl: v.kubectl?.find((k) => k.client === TODAYS_KUBECTL)?.outcome ?? 'not-modelled',
    diagnosis: v.diagnosis.map((d) => `${d.code}: ${d.summary}`).join(' | ') || null,
    check: v.diagnosis[0]?.check ?? null,
  }));
}

/** The latest verdict per cluster × operation × keepalive × row (hold, shaped hold, transfer), with its diagnosis (Logs Insights). */
export const LATEST_VERDICTS_QUERY: readonly string[] = [
  `filter msg = "${VERDICT_LOG_MSG}"`,
  'stats latest(verdict) as verdict, latest(kubectl) as kubectl, latest(diagnosis) as diagnosis, latest(check) as check, latest(@timestamp) as at by cluster, operation, keepalive, row',
  'sort cluster, operation, keepalive, row',
];
