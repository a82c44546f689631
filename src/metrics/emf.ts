/**
 * CloudWatch Embedded Metric Format: one JSON log line per dimension set,
 * which CloudWatch Logs turns into metrics. The fallback when PutMetricData
 * fails, and `--publish emf`.
 */
import { METRIC_NAMESPACE, METRICS } from './contract.js';
import type { Datum } from './datums.js';

/** EMF allows 100 metrics per document and 100 values per metric. */
const MAX_VALUES = 100;

export function emfLines(datums: readonly Datum[]): string[] {
  const groups = new Map<string, Datum[]>();
  for (const d of datums) {
    const key = JSON.stringify([d.timestamp.getTime(), Object.entries(d.dimensions).sort()]);
    groups.set(key, [...(groups.get(key) ?? []), d]);
  }
  const lines: string[] = [];
  for (const group of groups.values()) {
    const first = group[0]!;
    const byName = new Map<string, number[]>();
    for (const d of group) byName.set(d.name, [...(byName.get(d.name) ?? []), d.value]);
    const names = [...byName.keys()];
    for (let chunk = 0; ; chunk++) {
      const doc: Record<string, unknown> = {
        _aws: {
          Timestamp: first.timestamp.getTime(),
          CloudWatchMetrics: [
            {
              Namespace: METRIC_NAMESPACE,
              Dimensions: [Object.keys(first.dimensions)],
              Metrics: names.map((n) => ({ Name: n, Unit: METRICS[n as keyof typeof METRICS].unit })),
            },
          ],
        },
        ...first.dimensions,
      };
      let more = false;
      for (const n of names) {
        const values = byName.get(n)!.slice(chunk * MAX_VALUES, (chunk + 1) * MAX_VALUES);
        if (byName.get(n)!.length > (chunk + 1) * MAX_VALUES) more = true;
        if (values.length > 0) doc[n] = values.length === 1 ? values[0] : values;
      }
      lines.push(JSON.stringify(doc));
      if (!more) break;
    }
  }
  return lines;
}
