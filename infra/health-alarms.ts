/**
 * The probe's own health, as alarms of the probe-health ticket (alarms.ts): metrics that went to EMF instead of
 * CloudWatch, the function's errors, throttles and runs near its timeout, and EventBridge Scheduler failing to
 * invoke it or dropping runs. Each alarms on one bad period (evaluationPeriods 1): these are not path findings that
 * flap with the network.
 */
import type { Duration } from 'aws-cdk-lib';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import { probeMetric } from './metrics.js';

export interface HealthAlarm {
  readonly key: string;
  readonly alarmName: string;
  readonly description: string;
  readonly metric: cloudwatch.IMetric;
  readonly threshold: number;
}

export function functionHealthAlarms(
  p: { readonly locationName: string; readonly fn: lambda.IFunction; readonly timeout: Duration; readonly scheduleGroupName: string },
  name: (...parts: (string | number)[]) => string,
  every: Duration,
): HealthAlarm[] {
  const fn = p.fn;
  const schedulerMetric = (metricName: string) =>
    new cloudwatch.Metric({ namespace: 'AWS/Scheduler', metricName, dimensionsMap: { ScheduleGroup: p.scheduleGroupName }, statistic: 'Sum', period: every });
  return [
    {
      key: 'health/publish-failures',
      alarmName: name('publish-failures'),
      description: 'PutMetricData failed and the metrics went to EMF log lines instead: check CloudWatch reachability (monitoring endpoint) and the role.',
      metric: probeMetric('PublishFailures', { Location: p.locationName }, { statistic: 'Sum', period: every }),
      threshold: 1,
    },
    {
      key: 'health/errors',
      alarmName: name('function-errors'),
      description: 'The probe function itself failed (an invocation error, not a path finding).',
      metric: fn.metricErrors({ period: every, statistic: 'Sum' }),
      threshold: 1,
    },
    {
      key: 'health/throttles',
      alarmName: name('function-throttles'),
      description: 'The probe function was throttled: runs were skipped.',
      metric: fn.metricThrottles({ period: every, statistic: 'Sum' }),
      threshold: 1,
    },
    {
      key: 'health/duration',
      alarmName: name('function-near-timeout'),
      description: `A run took more than 90% of the function's ${p.timeout.toSeconds()} s timeout.`,
      metric: fn.metricDuration({ period: every, statistic: 'Maximum' }),
      threshold: Math.round(p.timeout.toMilliseconds() * 0.9),
    },
    {
      key: 'health/scheduler-errors',
      alarmName: name('scheduler-target-errors'),
      description: 'EventBridge Scheduler could not invoke the probe function.',
      metric: schedulerMetric('TargetErrorCount'),
      threshold: 1,
    },
    {
      key: 'health/scheduler-dropped',
      alarmName: name('scheduler-dropped'),
      description: 'EventBridge Scheduler dropped probe invocations.',
      metric: schedulerMetric('InvocationDroppedCount'),
      threshold: 1,
    },
  ];
}
