/**
 * A dashboard for the upgrade meeting. At the top, every location in this
 * account and region at once (a SEARCH over KubectlWorks), then per cluster:
 * the A/B now (latest upgrade result per operation × transport, and whether
 * kubectl works) and over the last day; holds survived and disconnect times
 * against the 30 / 60 / 350 s idle timeouts hops are known for; the path's
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
import { KNOWN_IDLE_TIMEOUTS } from '../src/probe/diagnosis.js';
import { OPERATIONS, TRANSPORTS, type KeepaliveMode, type Operation } from '../src/vocabulary.js';
import { probeMetric } from './metrics.js';

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
}

/** The idle timeouts a disconnect is read against, as horizontal lines (30 s, 60 s, 350 s). */
const IDLE_LINES: cloudwatch.HorizontalAnnotation[] = KNOWN_IDLE_TIMEOUTS.filter((k) => k.seconds < 3600).map((k) => ({
  value: k.seconds,
  label: `${k.seconds} s`,
  color: '#d62728',
}));

export class ProbeDashboard extends Construct {
  readonly dashboard: cloudwatch.Dashboard;

  constructor(scope: Construct, id: string, props: ProbeDashboardProps) {
    super(scope, id);
    const { locationName: location, period } = props;
    const day = Duration.hours(1);
    const rows: cloudwatch.IWidget[][] = [
      [
        new cloudwatch.GraphWidget({
          title: 'kubectl works (1 = yes, incl. via fallback): every location in this account and region',
          left: [
            new cloudwatch.MathExpression({
              expression: `SEARCH('{${METRIC_NAMESPACE},Location,Cluster,Operation} MetricName="KubectlWorks"', 'Minimum', ${period.toSeconds()})`,
              label: '',
              period,
            }),
          ],
          leftYAxis: { min: 0, max: 1, showUnits: false },
          width: 16,
        }),
        new cloudwatch.AlarmStatusWidget({ title: `Alarms: ${location}`, alarms: [...props.alarms], width: 8, height: 6 }),
      ],
    ];
    for (const cluster of props.clusterNames) {
      const dims = (op: string, transport: string) => ({ Location: location, Cluster: cluster, Operation: op, Transport: transport });
      const perTransport = (
        name: 'UpgradeSuccess' | 'HandshakeLatency' | 'IdleTimeout' | 'TransferComplete' | 'TransferThroughput',
        statistic: string,
        p: Duration,
        label = (op: string, t: string) => `${op} ${t}`,
      ) => OPERATIONS.flatMap((op) => TRANSPORTS.map((t) => probeMetric(name, dims(op, t), { statistic, period: p, label: label(op, t) })));
      const holdMetrics = (name: 'HoldSurvived' | 'DisconnectTime', statistic: string) =>
        props.holds
          .filter((h) => h.holdSeconds > 0)
          .flatMap((h) =>
            TRANSPORTS.map((t) =>
              probeMetric(
                name,
                { ...dims(h.operation, t), Keepalive: h.keepalive, HoldSeconds: String(h.holdSeconds) },
                { statistic, period, label: `${h.operation} ${t} ${h.keepalive} ${h.holdSeconds}s` },
              ),
            ),
          )
          .slice(0, 40);
      rows.push([
        new cloudwatch.TextWidget({
          markdown: `## ${cluster}\nfrom **${location}**: A/B per operation and transport, what kubectl does, and why`,
          width: 24,
          height: 1,
        }),
      ]);
      rows.push([
        new cloudwatch.SingleValueWidget({
          title: `${cluster}: now (1 = upgraded and echoed; kubectl works)`,
          metrics: [
            ...perTransport('UpgradeSuccess', 'Minimum', period),
            ...OPERATIONS.map((op) =>
              probeMetric('KubectlWorks', { Location: location, Cluster: cluster, Operation: op }, { statistic: 'Minimum', period, label: `kubectl ${op}` }),
            ),
          ],
          width: 12,
          height: 4,
        }),
        new cloudwatch.GraphWidget({
          title: `${cluster}: upgrade success over the last day (share of runs)`,
          left: perTransport('UpgradeSuccess', 'Average', day),
          leftYAxis: { min: 0, max: 1, showUnits: false },
          start: '-P1D',
          width: 12,
          height: 4,
        }),
      ]);
      rows.push([
        new cloudwatch.GraphWidget({
          title: `${cluster}: holds survived (0/1)`,
          left: holdMetrics('HoldSurvived', 'Minimum'),
          leftYAxis: { min: 0, max: 1, showUnits: false },
          width: 8,
        }),
        new cloudwatch.GraphWidget({
          title: `${cluster}: disconnect time (s since the 101) against 30 / 60 / 350 s`,
          left: holdMetrics('DisconnectTime', 'Average'),
          leftYAxis: { label: 's', min: 0, showUnits: false },
          leftAnnotations: IDLE_LINES,
          width: 8,
        }),
        new cloudwatch.GraphWidget({
          title: `${cluster}: measured idle timeout (s, holds without pings)`,
          left: perTransport('IdleTimeout', 'Average', period),
          leftYAxis: { label: 's', min: 0, showUnits: false },
          leftAnnotations: IDLE_LINES,
          width: 8,
        }),
      ]);
      if (props.transfers)
        rows.push([
          new cloudwatch.GraphWidget({
            title: `${cluster}: transfers complete (0/1: every byte back, exec's exit status after the last; the kubectl cp path)`,
            left: perTransport('TransferComplete', 'Minimum', period),
            leftYAxis: { min: 0, max: 1, showUnits: false },
            width: 12,
          }),
          new cloudwatch.GraphWidget({
            title: `${cluster}: transfer throughput (MiB/s, first byte written to last byte back)`,
            left: perTransport('TransferThroughput', 'Average', period),
            leftYAxis: { label: 'MiB/s', min: 0, showUnits: false },
            width: 12,
          }),
        ]);
      rows.push([
        new cloudwatch.GraphWidget({
          title: `${cluster}: handshake latency p50 / p99 (ms, dial start to 101)`,
          left: [
            ...perTransport('HandshakeLatency', 'p50', period, (op, t) => `${op} ${t} p50`),
            ...perTransport('HandshakeLatency', 'p99', period, (op, t) => `${op} ${t} p99`),
          ],
          leftYAxis: { label: 'ms', min: 0, showUnits: false },
          width: 12,
        }),
        new cloudwatch.LogQueryWidget({
          title: `${cluster}: latest verdicts and diagnoses`,
          logGroupNames: [props.logGroup.logGroupName],
          queryLines: [`filter cluster = "${cluster}"`, ...LATEST_VERDICTS_QUERY],
          view: cloudwatch.LogQueryVisualizationType.TABLE,
          width: 12,
        }),
      ]);
    }
    for (const cluster of props.perNodeClusters ?? []) {
      const nodes = (name: 'NodesProbed' | 'NodesFailing') =>
        OPERATIONS.flatMap((op) =>
          TRANSPORTS.map((t) =>
            probeMetric(name, { Location: location, Cluster: cluster, Operation: op, Transport: t }, { statistic: 'Maximum', period, label: `${op} ${t}` }),
          ),
        );
      rows.push([
        new cloudwatch.GraphWidget({
          title: `${cluster}: nodes failing, per operation and transport (names in the log: msg "per-node")`,
          left: nodes('NodesFailing'),
          right: nodes('NodesProbed').slice(0, 1),
          leftYAxis: { min: 0, label: 'nodes', showUnits: false },
          width: 24,
        }),
      ]);
    }
    this.dashboard = new cloudwatch.Dashboard(this, 'Dashboard', { dashboardName: props.dashboardName, widgets: rows });
  }
}
