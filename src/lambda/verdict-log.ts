/**
 * The function's one log line per verdict, and the Logs Insights query the
 * dashboard runs over those lines (infra/dashboard.ts): one definition for
 * both, so the table never asks for a field the function does not write.
 */
import { rowText } from '../probe/row-text.js';
import { TODAYS_KUBECTL } from '../probe/kubectl-model.js';
import type { ProbeReport } from '../probe/types.js';
import type { DiagnosisCode } from '../probe/diagnosis-codes.js';

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
  /** The row's diagnosis codes, in order (fields: a reader never takes them out of the sentences); [] when clean. */
  readonly codes: readonly DiagnosisCode[];
  /** The first of them, for the dashboard's table; null when clean. */
  readonly code: DiagnosisCode | null;
  /** Each diagnosis's sentence, joined by " | ", for people; null when clean. */
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
    codes: v.diagnosis.map((d) => d.code),
    code: v.diagnosis[0]?.code ?? null,
    diagnosis: v.diagnosis.map((d) => d.summary).join(' | ') || null,
    check: v.diagnosis[0]?.check ?? null,
  }));
}

/** The latest verdict per cluster × operation × keepalive × row (hold, shaped hold, transfer), with its diagnosis (Logs Insights). */
export const LATEST_VERDICTS_QUERY: readonly string[] = [
  `filter msg = "${VERDICT_LOG_MSG}"`,
  'stats latest(verdict) as verdict, latest(kubectl) as kubectl, latest(code) as code, latest(diagnosis) as diagnosis, latest(check) as check, latest(@timestamp) as at by cluster, operation, keepalive, row',
  'sort cluster, operation, keepalive, row',
];
