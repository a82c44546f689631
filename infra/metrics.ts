/**
 * CloudWatch metrics for alarms and dashboards, built only from the metric
 * contract the publisher uses (src/metrics/contract.ts): same namespace,
 * names, units and exact dimension sets.
 */
import { Duration } from 'aws-cdk-lib';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import { probeError } from '../src/errors.js';
import { METRIC_NAMESPACE, METRICS, type DimensionName, type MetricName } from '../src/metrics/contract.js';

const UNITS: Record<string, cloudwatch.Unit> = {
  None: cloudwatch.Unit.NONE,
  Milliseconds: cloudwatch.Unit.MILLISECONDS,
  Seconds: cloudwatch.Unit.SECONDS,
  Count: cloudwatch.Unit.COUNT,
};

export function probeMetric(
  name: MetricName,
  dimensions: Readonly<Partial<Record<DimensionName, string>>>,
  props: { statistic: string; period: Duration; label?: string },
): cloudwatch.Metric {
  const spec = METRICS[name];
  const given = Object.keys(dimensions).sort();
  const wanted = [...spec.dimensions].sort();
  // An alarm on a dimension set the publisher never emits would sit in INSUFFICIENT_DATA forever.
  if (given.join() !== wanted.join())
    throw probeError('INTERNAL', `metric ${name} needs exactly the dimensions ${wanted.join(', ')}; got ${given.join(', ')}`, { where: 'infra/metrics' });
  return new cloudwatch.Metric({
    namespace: METRIC_NAMESPACE,
    metricName: name,
    dimensionsMap: dimensions as Record<string, string>,
    unit: UNITS[spec.unit],
    statistic: props.statistic,
    period: props.period,
    label: props.label,
  });
}
