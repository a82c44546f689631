/**
 * The CloudWatch dashboard's rows (dashboard-rows.ts) as a Grafana dashboard over Prometheus: the same panels in
 * the same order and widths, each series a PromQL query on the contract's Prometheus names (prometheus.ts), in
 * base units Grafana formats (seconds, bytes per second). Typed with Grafana's own published schema
 * (@grafana/schema, generated from Grafana's CUE kinds), so a field Grafana does not know fails `tsc`.
 *
 * Variables: the Prometheus data source, one location, and the clusters (a row per cluster, repeated).
 * CloudWatch reads statistics per run period; Prometheus holds each run's value until the next run replaces it,
 * so min / avg / max / now are that value aggregated over the series a panel splits by, `share` is its mean over an
 * hour, and p50 / p99 are quantiles over an hour of runs (quantile_over_time), weighted by how long each run's
 * value stood — equal weights when runs are evenly spaced, as a schedule's are.
 */
import type { Dashboard, Panel, RowPanel, ThresholdsConfig, ThresholdsMode, VariableModel } from '@grafana/schema';
import { IDLE_MARK_SECONDS } from '../probe/idle-devices.js';
import { CLUSTER_ROWS, OVERVIEW, statisticSuffix, type DashboardPanel, type PanelSeries, type PanelUnit, type Split } from './dashboard-rows.js';
import { PROMETHEUS_METRICS } from './prometheus.js';
import { ALERT_NAMES } from './prometheus-rules.js';
import { BURN_WINDOWS, SLO_OBJECTIVE_DEFAULT, SLO_PERIOD_DAYS, objectiveText, windowText } from './slo.js';

export const GRAFANA_DASHBOARD_UID = 'kube-stream-probe';
/** The schema version of the dashboards Grafana writes today (@grafana/schema's defaultDashboard). */
export const GRAFANA_SCHEMA_VERSION = 42;

const DATASOURCE = { type: 'prometheus', uid: '${datasource}' };
const SELECTOR = 'location="$location",cluster="$cluster"';

/** Grafana's unit ids (grafana-data's valueFormats): Prometheus stores base units, Grafana scales them for people. */
const UNITS: Record<PanelUnit, string> = { ratio: 'none', seconds: 's', milliseconds: 's', 'MiB/s': 'binBps', nodes: 'none' };

const BY: Record<Split, string> = {
  'operation-transport': 'operation, transport',
  hold: 'operation, transport, keepalive, hold_seconds',
  operation: 'operation',
};
const LEGEND: Record<Split, string> = {
  'operation-transport': '{{operation}} {{transport}}',
  hold: '{{operation}} {{transport}} {{keepalive}} {{hold_seconds}}s',
  operation: 'kubectl {{operation}}',
};

/** One series as PromQL: the contract's Prometheus name, this location and cluster, split as the panel splits. */
export function seriesQuery(s: PanelSeries, selector = SELECTOR): string {
  const m = `${PROMETHEUS_METRICS[s.metric].name}{${selector}}`;
  const by = BY[s.split];
  switch (s.statistic) {
    case 'now':
    case 'min':
      return `min by (${by}) (${m})`;
    case 'avg':
      return `avg by (${by}) (${m})`;
    case 'max':
      return `max by (${by}) (${m})`;
    case 'share':
      return `avg by (${by}) (avg_over_time(${m}[1h]))`;
    case 'p50':
      return `max by (${by}) (quantile_over_time(0.5, ${m}[1h]))`;
    case 'p99':
      return `max by (${by}) (quantile_over_time(0.99, ${m}[1h]))`;
  }
}

/** Grafana's query ids: A, B, C… by position. */
const refId = (i: number) => String.fromCharCode(65 + i);

const target = (s: PanelSeries, panel: DashboardPanel, i: number, instant: boolean) => ({
  refId: refId(i),
  datasource: DATASOURCE,
  expr: seriesQuery(s),
  legendFormat: LEGEND[s.split] + statisticSuffix(s, panel),
  ...(instant ? { instant: true, range: false } : { range: true }),
});

const IDLE_THRESHOLDS: ThresholdsConfig = {
  // ThresholdsMode.Absolute: the enum is Grafana's runtime code; its value is the string.
  mode: 'absolute' as ThresholdsMode,
  steps: [{ color: 'transparent', value: null }, ...IDLE_MARK_SECONDS.map((value) => ({ color: 'red', value }))],
};

function panel(p: DashboardPanel, x: number, y: number, id: number): Panel {
  const gridPos = { x, y, w: p.width, h: p.height ?? 6 };
  const unit = UNITS[p.unit];
  const bounds = p.unit === 'ratio' ? { min: 0, max: 1 } : { min: 0 };
  const common = { id, title: p.title('$cluster'), datasource: DATASOURCE, gridPos };
  if (p.view === 'now')
    return {
      ...common,
      type: 'stat',
      targets: p.series.map((s, i) => target(s, p, i, true)),
      fieldConfig: { defaults: { unit, ...bounds }, overrides: [] },
      options: { reduceOptions: { calcs: ['lastNotNull'], fields: '', values: false }, colorMode: 'value', textMode: 'value_and_name' },
    };
  if (p.view === 'verdicts')
    return {
      ...common,
      type: 'table',
      targets: p.series.map((s, i) => ({ ...target(s, p, i, true), format: 'table' })),
      transformations: [{ id: 'merge', options: {} }],
      fieldConfig: { defaults: { unit }, overrides: [] },
      options: { showHeader: true },
    };
  return {
    ...common,
    type: 'timeseries',
    ...(p.lastDay ? { timeFrom: '24h' } : {}),
    targets: p.series.map((s, i) => target(s, p, i, false)),
    fieldConfig: {
      defaults: {
        unit,
        ...bounds,
        ...(p.idleLines ? { thresholds: IDLE_THRESHOLDS, custom: { thresholdsStyle: { mode: 'line' } } } : {}),
      },
      // A series drawn against a second axis (nodes probed beside nodes failing), by its query's refId.
      overrides: p.series.flatMap((s, i) =>
        s.right ? [{ matcher: { id: 'byFrameRefID', options: refId(i) }, properties: [{ id: 'custom.axisPlacement', value: 'right' }] }] : [],
      ),
    },
    options: { legend: { displayMode: 'list', placement: 'bottom', showLegend: true }, tooltip: { mode: 'multi', sort: 'none' } },
  };
}

/**
 * The upgrade SLO's row, as the CloudWatch dashboard's (infra/dashboard.ts sloRow): the error budget left over the
 * SLO's period, and the burn rate over each alerting window with the rate that pages drawn across it (slo.ts).
 */
function sloPanels(objective: number, y: number): Panel[] {
  const budget = Number((1 - objective).toFixed(10));
  const m = `${PROMETHEUS_METRICS.KubectlUpgrade.name}{${SELECTOR}}`;
  const errorRatio = (window: string) => `(1 - avg(avg_over_time(${m}[${window}])))`;
  const common = { datasource: DATASOURCE };
  return [
    {
      ...common,
      id: 0,
      type: 'stat',
      title: `$cluster: upgrade SLO ${objectiveText(objective)}, error budget left`,
      gridPos: { x: 0, y, w: 8, h: 6 },
      targets: [{ refId: 'A', datasource: DATASOURCE, expr: `100 * (1 - ${errorRatio(`${SLO_PERIOD_DAYS}d`)} / ${budget})`, instant: true, range: false }],
      fieldConfig: { defaults: { unit: 'percent', max: 100 }, overrides: [] },
      options: { reduceOptions: { calcs: ['lastNotNull'], fields: '', values: false }, colorMode: 'value', textMode: 'value' },
    },
    {
      ...common,
      id: 0,
      type: 'timeseries',
      title: '$cluster: error budget burn rate (pages at the lines, when its short window agrees)',
      gridPos: { x: 8, y, w: 16, h: 6 },
      targets: BURN_WINDOWS.map((w, i) => ({
        refId: refId(i),
        datasource: DATASOURCE,
        expr: `${errorRatio(windowText(w.longSeconds))} / ${budget}`,
        legendFormat: `burn rate over ${windowText(w.longSeconds)}`,
        range: true,
      })),
      fieldConfig: {
        defaults: {
          unit: 'none',
          min: 0,
          thresholds: {
            mode: 'absolute' as ThresholdsMode,
            steps: [{ color: 'transparent', value: null }, ...BURN_WINDOWS.map((w) => ({ color: 'red', value: w.burnRate }))],
          },
          custom: { thresholdsStyle: { mode: 'line' } },
        },
        overrides: [],
      },
      options: { legend: { displayMode: 'list', placement: 'bottom', showLegend: true }, tooltip: { mode: 'multi', sort: 'none' } },
    },
  ];
}

export interface GrafanaDashboardOptions {
  /** The upgrade SLO's objective (its row's budget and burn rates). @default SLO_OBJECTIVE_DEFAULT */
  readonly sloObjective?: number;
  /** A row of transfers (complete, MiB/s), as with a transfer schedule. */
  readonly transfers?: boolean;
  /** A row of nodes probed and failing, as with per-node probing. */
  readonly perNode?: boolean;
}

const variable = (v: VariableModel) => v;

/** The dashboard: the all-locations row with the location's alerts, then the clusters' rows, repeated per cluster. */
export function grafanaDashboard(options: GrafanaDashboardOptions = {}): Dashboard {
  let id = 1;
  let y = 0;
  const overview: Panel = {
    id: id++,
    type: 'timeseries',
    title: OVERVIEW.title.replace('in this account and region', 'this Prometheus sees'),
    datasource: DATASOURCE,
    gridPos: { x: 0, y, w: OVERVIEW.width, h: 6 },
    targets: [
      {
        refId: 'A',
        datasource: DATASOURCE,
        expr: `min by (location, cluster, operation) (${PROMETHEUS_METRICS[OVERVIEW.series.metric].name})`,
        legendFormat: '{{location}} {{cluster}} {{operation}}',
        range: true,
      },
    ],
    fieldConfig: { defaults: { unit: 'none', min: 0, max: 1 }, overrides: [] },
    options: { legend: { displayMode: 'list', placement: 'bottom', showLegend: true }, tooltip: { mode: 'multi', sort: 'none' } },
  };
  const alerts: Panel = {
    id: id++,
    type: 'table',
    title: 'Alerts: $location',
    datasource: DATASOURCE,
    gridPos: { x: OVERVIEW.width, y, w: 24 - OVERVIEW.width, h: 6 },
    // Prometheus' own ALERTS series: the rules of prometheus-rules.ts that are pending or firing here.
    targets: [{ refId: 'A', datasource: DATASOURCE, expr: alertsQuery(), instant: true, range: false, format: 'table' }],
    fieldConfig: { defaults: {}, overrides: [] },
    options: { showHeader: true },
  };
  y += 6;
  const rowPanels: Panel[] = sloPanels(options.sloObjective ?? SLO_OBJECTIVE_DEFAULT, y + 1);
  let rowY = y + 1 + 6;
  for (const row of CLUSTER_ROWS) {
    if (row.when === 'transfers' && !options.transfers) continue;
    if (row.when === 'per-node' && !options.perNode) continue;
    let x = 0;
    const height = Math.max(...row.panels.map((p) => p.height ?? 6));
    for (const p of row.panels) {
      rowPanels.push(panel(p, x, rowY, 0));
      x += p.width;
    }
    rowY += height;
  }
  const clusterRow: RowPanel = {
    id: id++,
    type: 'row',
    title: '$cluster from $location: A/B per operation and transport, what kubectl does',
    collapsed: false,
    repeat: 'cluster',
    gridPos: { x: 0, y, w: 24, h: 1 },
    panels: [],
  };
  const panels: (Panel | RowPanel)[] = [overview, alerts, clusterRow, ...rowPanels.map((p) => ({ ...p, id: id++ }))];
  return {
    uid: GRAFANA_DASHBOARD_UID,
    title: 'kube-stream-probe: kubectl exec and port-forward, SPDY and WebSocket',
    description: 'The A/B of kubectl streaming per path (kube-stream-probe). Same rows as its CloudWatch dashboard.',
    tags: ['kube-stream-probe', 'kubernetes'],
    editable: true,
    schemaVersion: GRAFANA_SCHEMA_VERSION,
    time: { from: 'now-6h', to: 'now' },
    refresh: '1m',
    timezone: 'browser',
    templating: {
      list: [
        variable({ name: 'datasource', label: 'Prometheus', type: 'datasource', query: 'prometheus' }),
        variable({
          name: 'location',
          label: 'Location',
          type: 'query',
          datasource: DATASOURCE,
          query: { query: `label_values(${PROMETHEUS_METRICS.KubectlWorks.name}, location)`, refId: 'location' },
          refresh: 2,
        }),
        variable({
          name: 'cluster',
          label: 'Cluster',
          type: 'query',
          datasource: DATASOURCE,
          query: { query: `label_values(${PROMETHEUS_METRICS.KubectlWorks.name}{location="$location"}, cluster)`, refId: 'cluster' },
          refresh: 2,
          multi: true,
          includeAll: true,
        }),
      ],
    },
    panels,
  };
}

/** The alerts panel's query: this location's kube-stream-probe alerts, pending or firing. */
export function alertsQuery(location = '$location'): string {
  return `ALERTS{alertname=~"${ALERT_NAMES.join('|')}",location="${location}"}`;
}
