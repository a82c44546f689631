/**
 * Prometheus alerting rules with the CloudWatch alarms' meaning (infra/alarms.ts), over the metrics a run pushes
 * to a Pushgateway (prometheus.ts, pushgateway.ts):
 *
 * - PAGE `KubeStreamProbeKubectlBroken`, one alert per location × cluster: today's kubectl (TODAYS_KUBECTL_LABEL, with
 *   its keepalive) fails on this path for some operation. A cluster that cannot be measured (credentials) publishes no
 *   `kubectl_works`, so it never pages.
 * - TICKETS, one alert per location each: `KubeStreamProbeGAReadiness` (works only through the silent fallback),
 *   `KubeStreamProbeTransfersBroken` (small sessions work, bulk transfers do not), `KubeStreamProbeNodesFailing`
 *   (streaming fails on some nodes), `KubeStreamProbeHealth` (not measured, no node probed, or a schedule's
 *   pushes stopped: the Pushgateway's own `push_time_seconds` of its group is older than two runs and its hold).
 * - Holds without pings measure the path's idle timeout (`idle_timeout_seconds`): no alert, as in CloudWatch.
 *
 * Hysteresis, the same intent as CloudWatch's "M of N periods of two runs": a Pushgateway keeps a group's last
 * push, so a series is a step per run of its own schedule (the group's `holds` label). An alert fires while some
 * schedule failed in two of its last four runs (the failing share of the last four runs' time is over 0.4) and in
 * one of its last two, and keeps firing one densest interval after (`keep_firing_for`, Prometheus ≥ 2.42): one bad
 * run never fires, an outage fires at its second failed run and clears at each failing schedule's second passing
 * run (an hourly schedule's: up to 1.5 hours after the path recovered), a path failing every other run fires once
 * and stays, and a path failing one run in four never fires (CloudWatch flaps on it: the alarm-storm test counts
 * eight pages). Replayed with
 * promtool: test/lab/prometheus-rules.test.ts.
 */
import { DEFAULT_OPERATIONS, holdSpan, type Operation } from '../vocabulary.js';
import { TODAYS_KUBECTL_LABEL } from '../probe/kubectl-clients.js';
import { PUSH_JOBS } from './pushgateway.js';
import { PROMETHEUS_METRICS } from './prometheus.js';
import { BURN_WINDOWS, SLO_OBJECTIVE_DEFAULT, SLO_PERIOD_DAYS, objectiveText, windowText } from './slo.js';
import { FLAPPING_TICKET_RUNS } from './contract.js';

/** One CronJob/schedule as the rules see it: how often it runs and the holds it pushes under (its group's `holds`). */
export interface RuledSchedule {
  readonly intervalSeconds: number;
  readonly holdsSeconds: readonly number[];
  /** What the schedule probes (attach's holds run one after another: a run lasts longer); absent: exec and port-forward. */
  readonly operations?: readonly Operation[];
}

export interface PrometheusRule {
  readonly alert: string;
  readonly expr: string;
  readonly for?: string;
  readonly keep_firing_for?: string;
  readonly labels: { readonly severity: 'page' | 'ticket' };
  readonly annotations: { readonly summary: string; readonly description: string };
}

export interface PrometheusRuleFile {
  readonly groups: readonly { readonly name: string; readonly rules: readonly PrometheusRule[] }[];
}

/** The Pushgateway grouping label that keeps each schedule's pushes apart: its holds, in seconds, sorted. */
export function holdsGroup(holdsSeconds: readonly number[]): string {
  return [...new Set(holdsSeconds)].sort((a, b) => a - b).join(',');
}

const M = PROMETHEUS_METRICS;

/** The share of a window a failing run fills when two of the last four runs failed, less one scrape's slack. */
export const FAILING_SHARE = 0.4;

/** The alerts' names: the rules below and the Grafana dashboard's alerts panel read them. */
export const ALERTS = {
  kubectlBroken: 'KubeStreamProbeKubectlBroken',
  gaReadiness: 'KubeStreamProbeGAReadiness',
  transfersBroken: 'KubeStreamProbeTransfersBroken',
  nodesFailing: 'KubeStreamProbeNodesFailing',
  health: 'KubeStreamProbeHealth',
  fastBurn: 'KubeStreamProbeUpgradeBudgetFastBurn',
  slowBurn: 'KubeStreamProbeUpgradeBudgetSlowBurn',
  flapping: 'KubeStreamProbeFlapping',
} as const;
export const ALERT_NAMES: readonly string[] = Object.values(ALERTS);

/**
 * The upgrade SLO's burn-rate alerts (slo.ts, the same windows and rates as CloudWatch's): the error ratio over a
 * window is 1 − the mean of `kubectl_upgrade` over it (each push is its run's mean, prometheus.ts; a schedule's
 * group holds its last run's until the next, so the mean weighs runs by how long they stood; the schedules' groups
 * are averaged).
 */
function burnRules(objective: number): PrometheusRule[] {
  const budget = Number((1 - objective).toFixed(10));
  const errorRatio = (seconds: number) => `(1 - avg by (location, cluster) (avg_over_time(${M.KubectlUpgrade.name}[${windowText(seconds)}])))`;
  return BURN_WINDOWS.map((w) => ({
    alert: w.name === 'fast' ? ALERTS.fastBurn : ALERTS.slowBurn,
    expr: `${errorRatio(w.longSeconds)} / ${budget} > ${w.burnRate} and ${errorRatio(w.shortSeconds)} / ${budget} > ${w.burnRate}`,
    labels: { severity: 'page' as const },
    annotations: {
      summary: `PAGE: kubectl upgrades from {{ $labels.location }} to {{ $labels.cluster }} burn the ${objectiveText(objective)} SLO's error budget ${w.burnRate}x too fast (${windowText(w.longSeconds)}, still over ${windowText(w.shortSeconds)})`,
      description: `Today's kubectl fails to get its stream (after a retry, through its fallback too) in more than ${Number((w.burnRate * budget * 100).toFixed(3))} % of its upgrades over ${windowText(w.longSeconds)} and over the last ${windowText(w.shortSeconds)}: at this rate ${w.budgetShare * 100} % of a ${SLO_PERIOD_DAYS}-day budget is gone in ${windowText(w.longSeconds)}. The run's diagnosis says which hop or component.`,
    },
  }));
}

export function prometheusRules(schedules: readonly RuledSchedule[], options: { readonly sloObjective?: number } = {}): PrometheusRuleFile {
  if (schedules.length === 0) throw new Error('prometheusRules needs at least one schedule');
  const densest = Math.min(...schedules.map((s) => s.intervalSeconds));
  const job = `job=~"${PUSH_JOBS.sessions}|${PUSH_JOBS.perNode}"`;
  /**
   * "Failing in two of this schedule's last four runs, and in one of its last two", per schedule (each group's
   * series is a step per run of its own schedule), aggregated `by`: the share of the last four runs' time for which
   * `failing` (a 0/1 expression of the series) held, while the last two runs' time (1.5 intervals: the current
   * step and the previous one's tail) holds a failure. So it clears at a schedule's second passing run.
   */
  const failing = (by: string, failingOf: (sel: string) => string) =>
    schedules
      .map((s) => {
        const sel = `holds="${holdsGroup(s.holdsSeconds)}"`;
        const f = failingOf(sel);
        return `max by (${by}) (avg_over_time((${f})[${4 * s.intervalSeconds}s:1m]) > ${FAILING_SHARE} and max_over_time((${f})[${1.5 * s.intervalSeconds}s:1m]) > 0)`;
      })
      .join(' or ');
  const stale = schedules
    .map((s) => {
      const late = 2 * s.intervalSeconds + holdSpan({ holdsSeconds: s.holdsSeconds, operations: s.operations ?? DEFAULT_OPERATIONS }) + 60;
      return `max by (location) (time() - push_time_seconds{${job}, holds="${holdsGroup(s.holdsSeconds)}"} > ${late})`;
    })
    .join(' or ');
  const keep = `${densest}s`;
  const rules: PrometheusRule[] = [
    {
      alert: ALERTS.kubectlBroken,
      expr: failing('location, cluster', (sel) => `${M.KubectlWorks.name}{${sel}} < bool 1`),
      keep_firing_for: keep,
      labels: { severity: 'page' },
      annotations: {
        summary: 'PAGE: kubectl exec or port-forward is broken from {{ $labels.location }} to {{ $labels.cluster }}',
        description: `Today's kubectl (${TODAYS_KUBECTL_LABEL}, with its keepalive) fails on this path: an upgrade failure it does not fall back from, or a session that dies during a hold. The dashboard's rows show which operation and transport; \`kube-stream-probe run\` from the same place prints the diagnosis.`,
      },
    },
    {
      alert: ALERTS.gaReadiness,
      expr: failing('location', (sel) => `${M.SilentFallback.name}{${sel}} >= bool 1`),
      keep_firing_for: keep,
      labels: { severity: 'ticket' },
      annotations: {
        summary: 'TICKET, GA readiness: kubectl works from {{ $labels.location }} only through its silent fallback to SPDY',
        description:
          'A hop refuses WebSocket. WebSocket-only clients (browser terminals, SDKs, client-go >= 0.36 tools) fail there now; kubectl 1.38 (KEP-4006 GA) still falls back but ignores KUBECTL_*_WEBSOCKETS, so SPDY can no longer be forced.',
      },
    },
    {
      alert: ALERTS.transfersBroken,
      // A transfer failing where the upgrade itself works: the upgrade's own failure is the page's (or nobody's).
      expr: failing(
        'location',
        (sel) => `${M.TransferComplete.name}{${sel}} < bool 1 unless on (location, cluster, operation, transport) ${M.UpgradeSuccess.name}{${sel}} < 1`,
      ),
      keep_firing_for: keep,
      labels: { severity: 'ticket' },
      annotations: {
        summary: 'TICKET, transfers: small sessions work from {{ $labels.location }}, bulk transfers do not (kubectl cp)',
        description:
          "A transfer did not come back whole (a lost tail, a stall, a cut or a corruption) where the upgrade itself works: `kubectl cp` breaks on this path. The run's verdict says which (transfer-tail-lost, transfer-stalled, transfer-cut, transfer-slow).",
      },
    },
    {
      alert: ALERTS.nodesFailing,
      expr: failing('location', (sel) => `${M.NodesFailing.name}{${sel}} >= bool 1`),
      keep_firing_for: keep,
      labels: { severity: 'ticket' },
      annotations: {
        summary: 'TICKET, nodes: exec or port-forward fails to pods on some nodes, from {{ $labels.location }}',
        description: '`kube-stream-probe run --per-node` names the nodes and what sets them apart (kubelet version, WebSocket passthrough).',
      },
    },
    {
      alert: ALERTS.health,
      expr: `${failing('location', (sel) => `${M.ProbeError.name}{${sel}} >= bool 1`)} or ${failing('location', (sel) => `${M.NodesProbed.name}{${sel}} < bool 1`)} or ${stale}`,
      for: `${densest}s`,
      keep_firing_for: keep,
      labels: { severity: 'ticket' },
      annotations: {
        summary: 'TICKET, probe health: the probe could not measure, or stopped pushing, from {{ $labels.location }}',
        description:
          "probe_error: a cluster could not be measured (credentials, target or port: the run's log says which and the fix); nodes_probed 0: per-node probing found no node; or a schedule's last push (push_time_seconds) is older than two runs: check the CronJob's last Job and the Pushgateway.",
      },
    },
    ...burnRules(options.sloObjective ?? SLO_OBJECTIVE_DEFAULT),
    {
      alert: ALERTS.flapping,
      // Runs whose sessions failed and then worked on their retry: FLAPPING_TICKET_RUNS of the last hour's (each
      // push stands until the next: a flapped run counts once per minute it stood, so the hour's count is the
      // minutes' sum over the schedule's interval).
      expr: schedules
        .map((s) => {
          const sel = `holds="${holdsGroup(s.holdsSeconds)}"`;
          const window = Math.max(3600, FLAPPING_TICKET_RUNS * s.intervalSeconds);
          return `max by (location) (sum_over_time(${M.Flapping.name}{${sel}}[${window}s:1m]) * 60 / ${s.intervalSeconds} >= ${FLAPPING_TICKET_RUNS})`;
        })
        .join(' or '),
      keep_firing_for: keep,
      labels: { severity: 'ticket' },
      annotations: {
        summary: 'TICKET, flapping: sessions from {{ $labels.location }} fail and then work when tried again, run after run',
        description:
          "Never a page (each retry worked), but a hop that drops upgrades now and then: a load balancer target, a proxy restarting. The failed attempts are in the runs' evidence (the JSON report's results[].retry.first).",
      },
    },
  ];
  return { groups: [{ name: 'kube-stream-probe', rules }] };
}
