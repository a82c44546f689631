/**
 * The dashboard's rows, defined once and drawn twice: by CloudWatch (infra/dashboard.ts) and by Grafana over
 * Prometheus (grafana-dashboard.ts). A panel names the contract's metrics (contract.ts), the statistic each is read
 * with, how its series split (per operation × transport, per hold, per operation) and its unit; each renderer
 * turns that into its own query language. Changing a row here changes both dashboards.
 */
import type { MetricName } from './contract.js';

/**
 * How a metric is read. `now`: its latest value (CloudWatch: Minimum over one run period, so one failing run of
 * several shows). `share`: the mean over an hour (the share of runs that were 1). `min` / `avg` / `max`: over one
 * run period. `p50` / `p99`: percentiles over one run period (CloudWatch) or an hour of runs (Prometheus).
 */
export type Statistic = 'now' | 'share' | 'min' | 'avg' | 'max' | 'p50' | 'p99';

/** How a panel's series split: the contract's dimensions a series carries besides location and cluster. */
export type Split = 'operation-transport' | 'hold' | 'operation';

export type PanelUnit = 'ratio' | 'seconds' | 'milliseconds' | 'MiB/s' | 'nodes';

export interface PanelSeries {
  readonly metric: MetricName;
  readonly statistic: Statistic;
  readonly split: Split;
  /** Drawn against a second axis (nodes probed, beside nodes failing). */
  readonly right?: boolean;
}

export interface DashboardPanel {
  readonly key: string;
  /** The title for one cluster (Grafana passes its `$cluster` variable). */
  readonly title: (cluster: string) => string;
  /** `now`: one value per series (CloudWatch's single-value widget, Grafana's stat panel); else a graph over time. */
  readonly view: 'now' | 'graph' | 'verdicts';
  readonly series: readonly PanelSeries[];
  readonly unit: PanelUnit;
  /** Of 24 columns, as both tools lay them out. */
  readonly width: number;
  readonly height?: number;
  /** The documented devices' timers (idle-devices.ts, IDLE_MARK_SECONDS) drawn as lines. */
  readonly idleLines?: boolean;
  /** Drawn over the last day instead of the dashboard's range. */
  readonly lastDay?: boolean;
}

export interface DashboardRow {
  readonly key: string;
  /** Only with a transfer schedule / with clusters probed node by node. */
  readonly when?: 'transfers' | 'per-node';
  readonly panels: readonly DashboardPanel[];
}

const perPath = (metric: MetricName, statistic: Statistic): PanelSeries => ({ metric, statistic, split: 'operation-transport' });

/** The rows drawn for every cluster, top to bottom (after the all-locations row). */
export const CLUSTER_ROWS: readonly DashboardRow[] = [
  {
    key: 'ab',
    panels: [
      {
        key: 'now',
        title: (c) => `${c}: now (1 = upgraded and echoed; kubectl works)`,
        view: 'now',
        series: [perPath('UpgradeSuccess', 'now'), { metric: 'KubectlWorks', statistic: 'now', split: 'operation' }],
        unit: 'ratio',
        width: 12,
        height: 4,
      },
      {
        key: 'day',
        title: (c) => `${c}: upgrade success over the last day (share of runs)`,
        view: 'graph',
        series: [perPath('UpgradeSuccess', 'share')],
        unit: 'ratio',
        width: 12,
        height: 4,
        lastDay: true,
      },
    ],
  },
  {
    key: 'holds',
    panels: [
      {
        key: 'survived',
        title: (c) => `${c}: holds survived (0/1)`,
        view: 'graph',
        series: [{ metric: 'HoldSurvived', statistic: 'min', split: 'hold' }],
        unit: 'ratio',
        width: 8,
      },
      {
        key: 'disconnect',
        title: (c) => `${c}: disconnect time (s since the 101) against the devices' timers`,
        view: 'graph',
        series: [{ metric: 'DisconnectTime', statistic: 'avg', split: 'hold' }],
        unit: 'seconds',
        width: 8,
        idleLines: true,
      },
      {
        key: 'idle',
        title: (c) => `${c}: measured idle timeout (s, holds without pings)`,
        view: 'graph',
        series: [perPath('IdleTimeout', 'avg')],
        unit: 'seconds',
        width: 8,
        idleLines: true,
      },
    ],
  },
  {
    key: 'transfers',
    when: 'transfers',
    panels: [
      {
        key: 'complete',
        title: (c) => `${c}: transfers complete (0/1: every byte back, exec's exit status after the last; the kubectl cp path)`,
        view: 'graph',
        series: [perPath('TransferComplete', 'min')],
        unit: 'ratio',
        width: 12,
      },
      {
        key: 'throughput',
        title: (c) => `${c}: transfer throughput (MiB/s, first byte written to last byte back)`,
        view: 'graph',
        series: [perPath('TransferThroughput', 'avg')],
        unit: 'MiB/s',
        width: 12,
      },
    ],
  },
  {
    key: 'latency',
    panels: [
      {
        key: 'handshake',
        title: (c) => `${c}: handshake latency p50 / p99 (ms, dial start to 101)`,
        view: 'graph',
        series: [perPath('HandshakeLatency', 'p50'), perPath('HandshakeLatency', 'p99')],
        unit: 'milliseconds',
        width: 12,
      },
      {
        key: 'verdicts',
        // CloudWatch reads the verdicts and diagnoses from the function's log; Prometheus has no log, so Grafana
        // shows the verdict's metrics (kubectl works, silent fallback) per operation as a table.
        title: (c) => `${c}: latest verdicts and diagnoses`,
        view: 'verdicts',
        series: [
          { metric: 'KubectlWorks', statistic: 'now', split: 'operation' },
          { metric: 'SilentFallback', statistic: 'now', split: 'operation' },
        ],
        unit: 'ratio',
        width: 12,
      },
    ],
  },
  {
    key: 'nodes',
    when: 'per-node',
    panels: [
      {
        key: 'nodes',
        title: (c) => `${c}: nodes failing, per operation and transport (names in the log: msg "per-node")`,
        view: 'graph',
        series: [perPath('NodesFailing', 'max'), { ...perPath('NodesProbed', 'max'), right: true }],
        unit: 'nodes',
        width: 24,
      },
    ],
  },
];

/** The top row: kubectl works in every location, and (beside it) the alarms or alerts. */
export const OVERVIEW = {
  title: 'kubectl works (1 = yes, incl. via fallback): every location in this account and region',
  series: { metric: 'KubectlWorks', statistic: 'min', split: 'operation' } satisfies PanelSeries,
  width: 16,
} as const;

/** A series' label: what it is, in the words the tables use (`exec websocket`, `exec spdy kubectl 65s`, `kubectl exec`). */
export function seriesLabel(
  s: PanelSeries,
  panel: DashboardPanel,
  at: { operation: string; transport?: string; keepalive?: string; holdSeconds?: number },
): string {
  if (s.split === 'operation') return `kubectl ${at.operation}`;
  const base = s.split === 'hold' ? `${at.operation} ${at.transport} ${at.keepalive} ${at.holdSeconds}s` : `${at.operation} ${at.transport}`;
  return base + statisticSuffix(s, panel);
}

/** " p50" where the panel draws the same metric with another statistic too (p50 beside p99), else "". */
export function statisticSuffix(s: PanelSeries, panel: DashboardPanel): string {
  return panel.series.some((o) => o.metric === s.metric && o.statistic !== s.statistic) ? ` ${s.statistic}` : '';
}
