/**
 * The notifier: a page or ticket as the on-call engineer reads it. A CloudWatch alarm's own message is its static
 * description; this function receives the alarm's state change (EventBridge "CloudWatch Alarm State Change": "CloudWatch
 * sends events to Amazon EventBridge whenever a CloudWatch alarm is created, updated, deleted, or changes alarm
 * state", composite alarms included, docs.aws.amazon.com/AmazonCloudWatch/latest/monitoring/cloudwatch-and-eventbridge.html), finds the newest failed run of that cluster in the probe's evidence lines
 * (CloudWatch Logs FilterLogEvents over the last RECENT_EVIDENCE_SECONDS), and publishes to the alarm's topic a
 * message that carries that run's diagnosis in one sentence, what to check next, and a Logs Insights link to exactly
 * that run's evidence (evidence-log.ts). Nothing is ever lost for want of evidence: when the lines cannot be read or
 * none is found, the message says so and carries the link to the cluster's recent evidence instead; an event this
 * function cannot route is a typed error (its failure is an alarm that pages directly, infra/notifier.ts).
 */
import type { CloudWatchLogsClient } from '@aws-sdk/client-cloudwatch-logs';
import type { EventBridgeClient } from '@aws-sdk/client-eventbridge';
import type { SNSClient } from '@aws-sdk/client-sns';
import { Checker } from '../config/checker.js';
import { DIAGNOSES, type DiagnosisCode } from '../probe/diagnosis-codes.js';
import { errorMessage, probeError } from '../errors.js';
import { EVENT_BUS_ARN, LOCATION_PAGE_DETAIL_TYPE, LOCATION_PAGE_SOURCE, type LocationPage } from './location-page.js';
import { EVIDENCE_LOG_MSG, RECENT_EVIDENCE_SECONDS, evidenceLink, recentEvidenceLink } from './evidence-log.js';

/** Where each alarm's notifications go, and what it is about (from the construct, KSP_NOTIFY_CONFIG). */
export interface NotifyConfig {
  /** The project (a forwarded page names it). */
  readonly project?: string;
  readonly location: string;
  readonly region: string;
  /** The probe function's log group (its evidence lines). */
  readonly logGroup: string;
  readonly routes: Readonly<Record<string, NotifyRoute>>;
}

export interface NotifyRoute {
  readonly topicArn: string;
  readonly severity: 'PAGE' | 'TICKET';
  /** A page's cluster; a ticket covers the location's clusters. */
  readonly cluster?: string;
  /** Tell its return to OK too (pages); a ticket says only that it opened. */
  readonly onOk?: boolean;
  /**
   * A page of a cluster other locations probe too: sent to the project's page bus (its ARN) for the cross-location
   * aggregator to decide (cross-location.ts), not to the topic; the topic is the fallback when the bus refuses it.
   */
  readonly forward?: string;
}

export interface NotifyDeps {
  readonly logs: Pick<CloudWatchLogsClient, 'send'>;
  readonly sns: Pick<SNSClient, 'send'>;
  /** EventBridge in the page bus's region (routes with `forward`). */
  readonly events?: (region: string) => Pick<EventBridgeClient, 'send'>;
  readonly log: (line: string) => void;
  readonly now?: () => Date;
}

/** An alarm state change as EventBridge delivers it (only the fields read). */
export interface AlarmChange {
  readonly alarmName: string;
  readonly state: 'ALARM' | 'OK' | 'INSUFFICIENT_DATA';
  readonly previous: string;
  readonly time: string;
  readonly reason: string;
}

const STATES = ['ALARM', 'OK', 'INSUFFICIENT_DATA'] as const;

export function parseAlarmChange(raw: unknown): AlarmChange {
  const c = new Checker('');
  const e = c.obj(raw, 'event');
  if (e['detail-type'] !== 'CloudWatch Alarm State Change')
    c.fail('event.detail-type', `is ${JSON.stringify(e['detail-type'])}, not "CloudWatch Alarm State Change"`);
  const d = c.obj(e.detail, 'event.detail');
  const state = c.obj(d.state, 'event.detail.state');
  const alarmName = d.alarmName;
  if (typeof alarmName !== 'string' || !alarmName) c.fail('event.detail.alarmName', 'must be the alarm name');
  if (!STATES.includes(state.value as never)) c.fail('event.detail.state.value', `must be one of ${STATES.join(', ')}`);
  const previous = d.previousState && typeof d.previousState === 'object' ? String((d.previousState as Record<string, unknown>).value ?? '') : '';
  return {
    alarmName: alarmName as string,
    state: state.value as AlarmChange['state'],
    previous,
    time: typeof state.timestamp === 'string' ? state.timestamp : typeof e.time === 'string' ? e.time : new Date().toISOString(),
    reason: typeof state.reason === 'string' ? state.reason : '',
  };
}

/** One evidence line as the notifier reads it (evidence-log.ts EvidenceLogLine, the fields it needs). */
interface EvidenceLine {
  readonly at: number;
  readonly run: string;
  readonly cluster: string;
  readonly session: string;
  readonly row: string;
  readonly attempt: string;
  readonly ok: boolean;
  /** The row's first diagnosis: its code (a field: never taken out of the sentence), and its sentence for people. */
  readonly diagnosisCode: DiagnosisCode | null;
  readonly diagnosis: string | null;
  readonly check: string | null;
}

/** The filter pattern for a cluster's evidence lines (CloudWatch Logs' JSON pattern syntax). */
export function evidenceFilter(cluster?: string): string {
  return `{ $.msg = "${EVIDENCE_LOG_MSG}"${cluster ? ` && $.cluster = "${cluster}"` : ''} }`;
}

/**
 * At most this many pages of FilterLogEvents per window (it returns events oldest first, and may return empty pages
 * while it scans): the newest failed run is looked for in the last half hour first (a page fires minutes after its
 * run), then in the whole RECENT_EVIDENCE_SECONDS.
 */
const MAX_PAGES = 20;
const FIRST_WINDOW_SECONDS = 1800;

async function recentLines(config: NotifyConfig, deps: NotifyDeps, cluster: string | undefined, now: Date, windowSeconds: number): Promise<EvidenceLine[]> {
  const { FilterLogEventsCommand } = await import('@aws-sdk/client-cloudwatch-logs');
  const out: EvidenceLine[] = [];
  let nextToken: string | undefined;
  for (let page = 0; page < MAX_PAGES; page++) {
    const r = await deps.logs.send(
      new FilterLogEventsCommand({
        logGroupName: config.logGroup,
        startTime: now.getTime() - windowSeconds * 1000,
        endTime: now.getTime(),
        filterPattern: evidenceFilter(cluster),
        nextToken,
      }),
    );
    for (const e of r.events ?? []) {
      try {
        const l = JSON.parse(e.message ?? '') as Record<string, unknown>;
        if (l.msg !== EVIDENCE_LOG_MSG || typeof l.run !== 'string') continue;
        out.push({
          at: e.timestamp ?? 0,
          run: l.run,
          cluster: String(l.cluster ?? ''),
          session: String(l.session ?? ''),
          row: String(l.row ?? ''),
          attempt: String(l.attempt ?? ''),
          ok: l.ok === true,
          diagnosisCode: typeof l.diagnosisCode === 'string' && Object.hasOwn(DIAGNOSES, l.diagnosisCode) ? (l.diagnosisCode as DiagnosisCode) : null,
          diagnosis: typeof l.diagnosis === 'string' ? l.diagnosis : null,
          check: typeof l.check === 'string' ? l.check : null,
        });
      } catch {
        // Not one of ours (a line someone else wrote to the group): skipped.
      }
    }
    nextToken = r.nextToken;
    if (!nextToken) break;
  }
  return out;
}

/** The newest run with a failed session, its failed lines, and its span in time. */
function newestFailedRun(lines: readonly EvidenceLine[]): { run: string; failed: EvidenceLine[]; from: number; to: number } | undefined {
  const failed = lines.filter((l) => !l.ok);
  const newest = failed.reduce<EvidenceLine | undefined>((a, l) => (!a || l.at > a.at ? l : a), undefined);
  if (!newest) return undefined;
  const ofRun = lines.filter((l) => l.run === newest.run);
  const times = ofRun.map((l) => l.at);
  return { run: newest.run, failed: ofRun.filter((l) => !l.ok), from: Math.min(...times), to: Math.max(...times) };
}

export interface NotifyOutcome {
  readonly topicArn: string;
  readonly subject: string;
  readonly message: string;
  /** The run whose evidence the message links, when one was found. */
  readonly run?: string;
  /** The code of the diagnosis the subject names (from the evidence line's field), when one was made. */
  readonly diagnosis?: DiagnosisCode;
  /** Nothing was published: an OK of a ticket, or INSUFFICIENT_DATA. */
  readonly skipped?: true;
  /** Sent to the page bus (route.forward) for the cross-location aggregator, not published. */
  readonly forwarded?: true;
}

/**
 * SNS's Subject: "UTF-8 text with no line breaks or control characters, and less than 100 characters long" (Publish
 * API reference); kept to ASCII as well, for mail clients and receivers that replace anything else.
 */
export const subjectOf = (s: string): string => {
  const ascii = s.replace(/[\r\n]+/g, ' ').replace(/[^\x20-\x7e]/g, '?');
  return ascii.length > 99 ? `${ascii.slice(0, 96)}...` : ascii;
};

export async function notify(raw: unknown, config: NotifyConfig, deps: NotifyDeps): Promise<NotifyOutcome> {
  const change = parseAlarmChange(raw);
  const route = config.routes[change.alarmName];
  if (!route)
    throw probeError(
      'CONFIG_INVALID',
      `notify: no route for alarm ${change.alarmName} (this location's notifier routes ${Object.keys(config.routes).length} alarms)`,
      {
        field: 'event.detail.alarmName',
      },
    );
  const where = route.cluster ? `${config.location} -> ${route.cluster}` : config.location;
  const now = deps.now?.() ?? new Date();
  let outcome: NotifyOutcome;
  if (change.state === 'INSUFFICIENT_DATA' || (change.state === 'OK' && !route.onOk)) {
    deps.log(JSON.stringify({ level: 'info', msg: 'notify: not told', alarm: change.alarmName, state: change.state }));
    return { topicArn: route.topicArn, subject: '', message: '', skipped: true };
  }
  if (change.state !== 'ALARM') {
    outcome = {
      topicArn: route.topicArn,
      subject: subjectOf(`${change.state === 'OK' ? 'RESOLVED' : change.state}: ${route.severity} ${where}`),
      message: `${change.alarmName} is ${change.state} since ${change.time} (it was ${change.previous || 'unknown'}).`,
    };
  } else {
    const recent = recentEvidenceLink({ region: config.region, logGroup: config.logGroup, cluster: route.cluster });
    let evidence: string;
    let run: string | undefined;
    let diagnosis: DiagnosisCode | undefined;
    try {
      let found: ReturnType<typeof newestFailedRun>;
      for (const window of [FIRST_WINDOW_SECONDS, RECENT_EVIDENCE_SECONDS]) {
        found = newestFailedRun(await recentLines(config, deps, route.cluster, now, window));
        if (found) break;
      }
      if (found) {
        run = found.run;
        // The first session with a diagnosis that is about the path (a flapping one-off is not), by its code.
        const first = found.failed.find((l) => l.diagnosisCode && l.diagnosisCode !== 'flapping') ?? found.failed[0]!;
        diagnosis = first.diagnosisCode ?? undefined;
        const sessions = [...new Set(found.failed.map((l) => `${l.session} ${l.row}${l.attempt === 'only' ? '' : ` (${l.attempt})`}`))];
        const link = evidenceLink({ region: config.region, logGroup: config.logGroup, runId: found.run, from: new Date(found.from), to: new Date(found.to) });
        evidence = [
          `Diagnosis: ${first.diagnosis ?? 'none was made for this session (see its evidence)'}`,
          ...(first.check ? [`Check next: ${first.check}`] : []),
          `Failed in run ${found.run} at ${new Date(found.to).toISOString()}${route.cluster ? '' : ` (${first.cluster})`}: ${sessions.join('; ')}.`,
          `That run's evidence (what the wire showed): ${link}`,
        ].join('\n');
      } else {
        evidence = `No failed session in the last ${RECENT_EVIDENCE_SECONDS / 3600} h of evidence lines (the probe may not be reaching the cluster: see the probe-health ticket). Recent evidence: ${recent}`;
      }
    } catch (err) {
      // Never lose the page for want of evidence: say why it is missing and link the query.
      evidence = `The evidence could not be read (${errorMessage(err)}). Recent evidence: ${recent}`;
      deps.log(JSON.stringify({ level: 'warn', msg: 'notify: evidence unread', alarm: change.alarmName, error: errorMessage(err) }));
    }
    outcome = {
      topicArn: route.topicArn,
      subject: subjectOf(`${route.severity}: ${where}${diagnosis ? ` - ${diagnosis}` : ''}`),
      message: `${route.severity}: ${change.alarmName} is ALARM since ${change.time}.\n${evidence}\n\nWhy it fired: ${change.reason}`,
      ...(run ? { run } : {}),
      ...(diagnosis ? { diagnosis } : {}),
    };
  }
  if (route.forward && route.cluster && (change.state === 'ALARM' || change.state === 'OK')) {
    const page: LocationPage = {
      project: config.project ?? '',
      cluster: route.cluster,
      location: config.location,
      state: change.state,
      since: change.time,
      subject: outcome.subject,
      message: outcome.message,
      ...(outcome.run ? { run: outcome.run } : {}),
      ...(outcome.diagnosis ? { diagnosis: outcome.diagnosis } : {}),
    };
    try {
      await forward(route.forward, page, deps);
      deps.log(
        JSON.stringify({ level: 'info', msg: 'notify: forwarded', alarm: change.alarmName, state: change.state, bus: route.forward, run: outcome.run ?? null }),
      );
      return { ...outcome, forwarded: true };
    } catch (err) {
      // Never lose the page: the bus (another region, maybe another account) refused it, so it goes out from here.
      deps.log(
        JSON.stringify({ level: 'warn', msg: 'notify: not forwarded, published here', alarm: change.alarmName, bus: route.forward, error: errorMessage(err) }),
      );
    }
  }
  const { PublishCommand } = await import('@aws-sdk/client-sns');
  await deps.sns.send(new PublishCommand({ TopicArn: outcome.topicArn, Subject: outcome.subject, Message: outcome.message }));
  deps.log(JSON.stringify({ level: 'info', msg: 'notified', alarm: change.alarmName, state: change.state, topic: outcome.topicArn, run: outcome.run ?? null }));
  return outcome;
}

/** PutEvents to the page bus, in its own region; an entry EventBridge did not accept is an error. */
async function forward(busArn: string, page: LocationPage, deps: NotifyDeps): Promise<void> {
  const region = busArn.split(':')[3];
  if (!deps.events || !region) throw new Error(`no EventBridge client for ${busArn}`);
  const { PutEventsCommand } = await import('@aws-sdk/client-eventbridge');
  const r = await deps.events(region).send(
    new PutEventsCommand({
      Entries: [{ EventBusName: busArn, Source: LOCATION_PAGE_SOURCE, DetailType: LOCATION_PAGE_DETAIL_TYPE, Detail: JSON.stringify(page) }],
    }),
  );
  const failed = r.Entries?.find((e) => e.ErrorCode);
  if (r.FailedEntryCount || failed)
    throw new Error(`EventBridge did not accept the page: ${failed?.ErrorCode ?? 'failed'} ${failed?.ErrorMessage ?? ''}`.trim());
}

/** KSP_NOTIFY_CONFIG, checked. */
export function parseNotifyConfig(text: string | undefined): NotifyConfig {
  const c = new Checker('');
  let raw: unknown;
  try {
    raw = JSON.parse(text ?? '');
  } catch {
    c.fail('KSP_NOTIFY_CONFIG', 'is not JSON');
  }
  const o = c.obj(raw, 'KSP_NOTIFY_CONFIG');
  for (const k of ['location', 'region', 'logGroup'] as const) if (typeof o[k] !== 'string' || !o[k]) c.fail(`KSP_NOTIFY_CONFIG.${k}`, 'must be a string');
  const routes = c.obj(o.routes, 'KSP_NOTIFY_CONFIG.routes');
  for (const [name, r] of Object.entries(routes)) {
    const route = c.obj(r, `KSP_NOTIFY_CONFIG.routes.${name}`);
    if (typeof route.topicArn !== 'string' || !route.topicArn.startsWith('arn:')) c.fail(`KSP_NOTIFY_CONFIG.routes.${name}.topicArn`, 'must be a topic ARN');
    if (route.severity !== 'PAGE' && route.severity !== 'TICKET') c.fail(`KSP_NOTIFY_CONFIG.routes.${name}.severity`, 'must be PAGE or TICKET');
    if (route.forward !== undefined) {
      if (typeof route.forward !== 'string' || !EVENT_BUS_ARN.test(route.forward))
        c.fail(`KSP_NOTIFY_CONFIG.routes.${name}.forward`, 'must be an event bus ARN');
      if (typeof route.cluster !== 'string' || typeof o.project !== 'string')
        c.fail(`KSP_NOTIFY_CONFIG.routes.${name}.forward`, "needs the route's cluster and the config's project");
    }
  }
  return o as unknown as NotifyConfig;
}
