/**
 * The run's evidence in the function's log group: one line per failed session (and per attempt of a retried one,
 * src/probe/evidence-records.ts), tagged with the run's id, and the Logs Insights query and link that show exactly
 * that run's lines. The page and ticket messages carry the link (src/lambda/notify.ts); one definition here for the
 * line and the query, so the link never asks for a field the function does not write.
 */
import { logsInsightsUrl } from '../aws/logs-insights-url.js';
import { evidenceRecords, type SessionEvidence } from '../probe/evidence-records.js';
import type { ProbeReport } from '../probe/types.js';

export const EVIDENCE_LOG_MSG = 'evidence';

export type EvidenceLogLine = SessionEvidence & {
  readonly level: 'warn';
  readonly msg: typeof EVIDENCE_LOG_MSG;
  /** The invocation's run id: every line of one run has it (the verdict and run lines too). */
  readonly run: string;
  readonly location: string;
  readonly schedule: string | undefined;
};

export function evidenceLogLines(
  report: ProbeReport,
  run: { readonly id: string; readonly location: string; readonly schedule: string | undefined },
): EvidenceLogLine[] {
  return evidenceRecords(report).map((e) => ({ level: 'warn', msg: EVIDENCE_LOG_MSG, run: run.id, location: run.location, schedule: run.schedule, ...e }));
}

/** A value inside a Logs Insights string literal: quotes and backslashes escaped. */
const literal = (s: string) => `"${s.replace(/["\\]/g, (c) => `\\${c}`)}"`;

/** The query over one run's evidence, oldest first: which sessions failed, how, and the whole line. */
export function evidenceQuery(runId: string): string {
  return [
    'fields @timestamp, cluster, session, row, attempt, verdict, diagnosis, errorCode, @message',
    `| filter msg = ${literal(EVIDENCE_LOG_MSG)} and run = ${literal(runId)}`,
    '| sort @timestamp asc',
    '| limit 200',
  ].join('\n');
}

/**
 * The link to one run's evidence: the run's own minutes (its start to its last line, with a minute either side; Logs
 * Insights searches only the range it is given).
 */
export function evidenceLink(o: {
  readonly region: string;
  readonly logGroup: string;
  readonly runId: string;
  readonly from: Date;
  readonly to: Date;
}): string {
  return logsInsightsUrl({
    region: o.region,
    logGroup: o.logGroup,
    query: evidenceQuery(o.runId),
    range: { start: new Date(o.from.getTime() - 60_000), end: new Date(o.to.getTime() + 60_000) },
  });
}

/** How far back an alarm's evidence link looks: the slow burn's long window, so every page's runs are in it. */
export const RECENT_EVIDENCE_SECONDS = 6 * 3600;

/** The query over the recent evidence of one cluster (or of every cluster): the newest runs first. */
export function recentEvidenceQuery(cluster?: string): string {
  // Short: it rides in an alarm's description (1024 characters at most, the link encoded).
  return [
    `fields @timestamp, run, ${cluster ? '' : 'cluster, '}session, diagnosis`,
    `| filter msg = ${literal(EVIDENCE_LOG_MSG)}${cluster ? ` and cluster = ${literal(cluster)}` : ''}`,
    '| sort @timestamp desc',
  ].join('\n');
}

/**
 * The link an alarm's description carries (it cannot know the run that tripped it): the cluster's evidence of the
 * last RECENT_EVIDENCE_SECONDS, newest first, so the failed runs behind the page are its first rows, each with its
 * run id and diagnosis. `logGroup` may be a placeholder replaced by the deployed name (infra/alarms.ts).
 */
export function recentEvidenceLink(o: { readonly region: string; readonly logGroup: string; readonly cluster?: string }): string {
  return logsInsightsUrl({ region: o.region, logGroup: o.logGroup, query: recentEvidenceQuery(o.cluster), range: { lastSeconds: RECENT_EVIDENCE_SECONDS } });
}
