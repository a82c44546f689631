/**
 * The metric contract (contract.ts) as Prometheus metrics: the same data points (datums.ts), named as
 * Prometheus' naming guide asks (snake_case, a `kube_stream_probe_` prefix, base units in the name: seconds, bytes
 * per second; https://prometheus.io/docs/practices/naming/), exposed by prom-client — a maintained client
 * library, so the exposition format is not written here by hand. Every metric is a gauge: each run sets what it
 * measured, as CloudWatch's data points do. Labels are the contract's dimensions, snake_cased; the contract has no
 * node dimension, so no node name can become a label (per-node results are counts).
 */
import { Gauge, Registry } from 'prom-client';
import { METRICS, VALUE_UNIT_BYTES_PER_SECOND, type DimensionName, type MetricName, type MetricSpec } from './contract.js';
import type { Datum } from './datums.js';

export const PROMETHEUS_PREFIX = 'kube_stream_probe';

/** How a contract metric is exposed: its name and the factor from the contract's unit to the name's. */
export interface PrometheusMetric {
  readonly name: string;
  readonly help: string;
  readonly labels: readonly string[];
  readonly scale: number;
}

const snake = (s: string) => s.replace(/([a-z0-9])([A-Z])/g, '$1_$2').toLowerCase();

/** The unit suffix and scale per contract unit (its value unit first, where CloudWatch's unit cannot say it). */
function unitOf(name: MetricName): { suffix: string; scale: number } {
  const spec: MetricSpec = METRICS[name];
  if (spec.valueUnit) return { suffix: '_bytes_per_second', scale: VALUE_UNIT_BYTES_PER_SECOND[spec.valueUnit] };
  switch (spec.unit) {
    case 'Milliseconds':
      return { suffix: '_seconds', scale: 1 / 1000 };
    case 'Seconds':
      return { suffix: '_seconds', scale: 1 };
    case 'Count':
    case 'None':
      return { suffix: '', scale: 1 };
  }
}

export function prometheusLabel(dimension: DimensionName): string {
  return snake(dimension);
}

export function prometheusMetric(name: MetricName): PrometheusMetric {
  const { suffix, scale } = unitOf(name);
  return {
    name: `${PROMETHEUS_PREFIX}_${snake(name)}${suffix}`,
    help: METRICS[name].description + (scale !== 1 ? ` (exposed in ${suffix.slice(1).replaceAll('_', ' ')})` : ''),
    labels: METRICS[name].dimensions.map(prometheusLabel),
    scale,
  };
}

/** Every contract metric's Prometheus form, in the contract's order: the rules, dashboard and tests read these. */
export const PROMETHEUS_METRICS: Readonly<Record<MetricName, PrometheusMetric>> = Object.fromEntries(
  (Object.keys(METRICS) as MetricName[]).map((n) => [n, prometheusMetric(n)]),
) as Record<MetricName, PrometheusMetric>;

/**
 * A registry holding one run's data points. Only the metrics the run measured are registered, so a push replaces
 * the group's previous series and a lost session's `disconnect_time_seconds` does not outlive the run that saw it.
 * Several data points of one label set in a run (KubectlUpgrade: one per kubectl row, the SLO's events) are exposed
 * as their mean, the run's share: a gauge holds one value, and the last alone would drop the others.
 */
function meanPerLabelSet(datums: readonly Datum[]): Datum[] {
  const groups = new Map<string, Datum[]>();
  for (const d of datums) {
    const key = `${d.name}|${JSON.stringify(Object.entries(d.dimensions).sort())}`;
    groups.set(key, [...(groups.get(key) ?? []), d]);
  }
  return [...groups.values()].map((g) => (g.length === 1 ? g[0]! : { ...g[0]!, value: g.reduce((a, d) => a + d.value, 0) / g.length }));
}

export function prometheusRegistry(datums: readonly Datum[]): Registry {
  const registry = new Registry();
  const gauges = new Map<MetricName, Gauge>();
  for (const d of meanPerLabelSet(datums)) {
    const spec = PROMETHEUS_METRICS[d.name];
    let gauge = gauges.get(d.name);
    if (!gauge) {
      gauge = new Gauge({ name: spec.name, help: spec.help, labelNames: [...spec.labels], registers: [registry] });
      gauges.set(d.name, gauge);
    }
    const labels: Record<string, string> = {};
    for (const [dim, value] of Object.entries(d.dimensions)) labels[prometheusLabel(dim as DimensionName)] = value as string;
    gauge.set(labels, d.value * spec.scale);
  }
  return registry;
}
