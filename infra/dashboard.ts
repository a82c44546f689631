/**
 * A dashboard for the upgrade meeting. At the top, every location in this
 * account and region at once (a SEARCH over KubectlWorks), then per cluster:
 * the A/B now (latest upgrade result per operation × transport, and whether
 * kubectl works) and over the last day; holds survived and disconnect times
 * against the documented devices' timers (src/probe/idle-devices.ts); the path's
 * measured idle timeout; handshake latency p50 / p99 per transport; and the
 * latest verdicts with their diagnoses from the function's log; with a
 * transfer schedule, transfers complete and their MiB/s.
 */
import { Duration } from 'aws-cdk-lib';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import type * as logs from 'aws-cdk-lib/aws-logs';
import { Construct } from 'constructs';
import { LATEST_VERDICTS_QUERY } from '../src/lambda/verdict-log.js';
import { METRIC_NAMESPACE } from '../src/metrics/contract.js';
import { IDLE_MARK_SECONDS } from '../src/probe/idle-devices.js';
import { CLUSTER_ROWS, OVERVIEW, seriesLabel, type DashboardPanel, type PanelSeries, type PanelUnit, type Statistic } from '../src/metrics/dashboard-rows.js';
import { OPERATIONS, TRANSPORTS, type KeepaliveMode, type Operation } from '../src/vocabulary.js';
import { probeMetric } from './metrics.js';
import { budgetLeft, burnRate } from './slo-alarms.js';
import { BURN_WINDOWS, objectiveText, windowText } from '../src/metrics/slo.js';

export interface ProbeDashboardProps {
  readonly dashboardName: string;
  readonly locationName: string;
  readonly clusterNames: readonly string[];
  /** Every (operation, keepalive, hold) the schedules run. */
  readonly holds: readonly { readonly operation: Operation; readonly keepalive: KeepaliveMode; readonly holdSeconds: number }[];
  readonly period: Duration;
  readonly logGroup: logs.ILogGroup;
  readonly alarms: readonly cloudwatch.IAlarm[];
  /** Whether a schedule streams a transfer: a row of TransferComplete and TransferThroughput. */
  readonly transfers?: boolean;
  /** Clusters probed node by node (target.perNode): a row of nodes probed and failing. */
  readonly perNodeClusters?: readonly string[];
  /** The upgrade SLO's objective: each cluster's row shows its error budget left and its burn rates. */
  readonly sloObjective: number;
}

/** The documented timers a disconnect is read against, as horizontal lines (idle-devices.ts: 30 s … 1200 s). */
const IDLE_LINES: cloudwatch.HorizontalAnnotation[] = IDLE_MARK_SECONDS.map((seconds) => ({
  value: seconds,
  label: `${seconds} s`,
  color: '#d62728',
}));

export class ProbeDashboard extends Construct {
  readonly dashboard: cloudwatch.Dashboard;

  constructor(scope: Construct, id: string, props: ProbeDashboardProps) {
    super(scope, id);
    const { locationName: location, period } = props;
    const rows: cloudwatch.IWidget[][] = [
      [
        new cloudwatch.GraphWidget({
          title: OVERVIEW.title,
          left: [
            new cloudwatch.MathExpression({
              expression: `SEARCH('{${METRIC_NAMESPACE},Location,Cluster,Operation} MetricName="${OVERVIEW.series.metric}"', '${CLOUDWATCH_STATISTIC[OVERVIEW.series.statistic]}', ${period.toSeconds()})`,
              label: '',
              period,
            }),
          ],
          leftYAxis: AXES.ratio,
          width: OVERVIEW.width,
        }),
        new cloudwatch.AlarmStatusWidget({ title: `Alarms: ${location}`, alarms: [...props.alarms], width: 8, height: 6 }),
      ],
    ];
    for (const cluster of props.clusterNames) {
      rows.push([
        new cloudwatch.TextWidget({
          markdown: `## ${cluster}\nfrom **${location}**: A/B per operation and transport, what kubectl does, and why`,
          width: 24,
          height: 1,
        }),
      ]);
      rows.push(sloRow(location, cluster, props.sloObjective));
      for (const row of CLUSTER_ROWS) {
        if (row.when === 'per-node' || (row.when === 'transfers' && !props.transfers)) continue;
        rows.push(row.panels.map((panel) => this.widget(panel, cluster, props)));
      }
    }
    // Per-node rows come last, one per cluster probed node by node.
    const nodeRow = CLUSTER_ROWS.find((r) => r.when === 'per-node')!;
    for (const cluster of props.perNodeClusters ?? []) rows.push(nodeRow.panels.map((panel) => this.widget(panel, cluster, props)));
    this.dashboard = new cloudwatch.Dashboard(this, 'Dashboard', { dashboardName: props.dashboardName, widgets: rows });
  }

  /** One panel of dashboard-rows.ts as a CloudWatch widget. */
  private widget(panel: DashboardPanel, cluster: string, props: ProbeDashboardProps): cloudwatch.IWidget {
    const { locationName: location } = props;
    const metrics = (series: readonly PanelSeries[]) => series.flatMap((s) => cloudWatchSeries(s, panel, location, cluster, props));
    const title = panel.title(cluster);
    const size = { width: panel.width, ...(panel.height === undefined ? {} : { height: panel.height }) };
    if (panel.view === 'now') return new cloudwatch.SingleValueWidget({ title, metrics: metrics(panel.series), ...size });
    if (panel.view === 'verdicts')
      return new cloudwatch.LogQueryWidget({
        title,
        logGroupNames: [props.logGroup.logGroupName],
        queryLines: [`filter cluster = "${cluster}"`, ...LATEST_VERDICTS_QUERY],
        view: cloudwatch.LogQueryVisualizationType.TABLE,
        ...size,
      });
    const left = metrics(panel.series.filter((s) => !s.right));
    const right = metrics(panel.series.filter((s) => s.right)).slice(0, 1);
    return new cloudwatch.GraphWidget({
      title,
      left,
      ...(right.length ? { right } : {}),
      leftYAxis: AXES[panel.unit],
      ...(panel.idleLines ? { leftAnnotations: IDLE_LINES } : {}),
      ...(panel.lastDay ? { start: '-P1D' } : {}),
      ...size,
    });
  }
}

/**
 * The upgrade SLO (src/metrics/slo.ts): the error budget left over its period, and the burn rate over each alarm
 * window with the rate that pages drawn across it.
 */
function sloRow(location: string, cluster: string, objective: number): cloudwatch.IWidget[] {
  const dims = { Location: location, Cluster: cluster };
  return [
    new cloudwatch.SingleValueWidget({
      title: `${cluster}: upgrade SLO ${objectiveText(objective)}, error budget left`,
      metrics: [budgetLeft(dims, objective)],
      width: 8,
      height: 6,
    }),
    new cloudwatch.GraphWidget({
      title: `${cluster}: error budget burn rate (pages at the lines, when its short window agrees)`,
      left: BURN_WINDOWS.map((w) => burnRate(dims, objective, w.longSeconds)),
      leftAnnotations: BURN_WINDOWS.map((w) => ({ value: w.burnRate, label: `${w.name}: ${w.burnRate}x over ${windowText(w.longSeconds)}`, color: '#d62728' })),
      leftYAxis: { min: 0, label: 'x budget rate', showUnits: false },
      width: 16,
      height: 6,
    }),
  ];
}

/** Each unit's axis: 0..1 for ratios, a labelled axis from 0 otherwise. */
const AXES: Record<PanelUnit, cloudwatch.YAxisProps> = {
  ratio: { min: 0, max: 1, showUnits: false },
  seconds: { label: 's', min: 0, showUnits: false },
  milliseconds: { label: 'ms', min: 0, showUnits: false },
  'MiB/s': { label: 'MiB/s', min: 0, showUnits: false },
  nodes: { min: 0, label: 'nodes', showUnits: false },
};

/** CloudWatch's statistic for each of ours; `share` is the mean over an hour, the others over one run period. */
const CLOUDWATCH_STATISTIC: Record<Statistic, string> = {
  now: 'Minimum',
  share: 'Average',
  min: 'Minimum',
  avg: 'Average',
  max: 'Maximum',
  p50: 'p50',
  p99: 'p99',
};

function cloudWatchSeries(s: PanelSeries, panel: DashboardPanel, location: string, cluster: string, props: ProbeDashboardProps): cloudwatch.IMetric[] {
  const statistic = CLOUDWATCH_STATISTIC[s.statistic];
  const period = s.statistic === 'share' ? Duration.hours(1) : props.period;
  const at = { Location: location, Cluster: cluster };
  // The operations the schedules run (attach only when one does).
  const operations = OPERATIONS.filter((op) => props.holds.some((h) => h.operation === op));
  if (s.split === 'operation')
    return operations.map((op) => probeMetric(s.metric, { ...at, Operation: op }, { statistic, period, label: seriesLabel(s, panel, { operation: op }) }));
  if (s.split === 'operation-transport')
    return operations.flatMap((op) =>
      TRANSPORTS.map((t) =>
        probeMetric(s.metric, { ...at, Operation: op, Transport: t }, { statistic, period, label: seriesLabel(s, panel, { operation: op, transport: t }) }),
      ),
    );
  return props.holds
    .filter((h) => h.holdSeconds > 0)
    .flatMap((h) =>
      TRANSPORTS.map((t) =>
        probeMetric(
          s.metric,
          { ...at, Operation: h.operation, Transport: t, Keepalive: h.keepalive, HoldSeconds: String(h.holdSeconds) },
          { statistic, period, label: seriesLabel(s, panel, { operation: h.operation, transport: t, keepalive: h.keepalive, holdSeconds: h.holdSeconds }) },
        ),
      ),
    )
    .slice(0, 40);
}
