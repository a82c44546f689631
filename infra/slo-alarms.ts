/**
 * The upgrade SLO's burn-rate alarms for one location × cluster, from the one definition (src/metrics/slo.ts), in
 * CloudWatch metric math: for each window pair (fast 1 h / 5 min at burn rate 14.4, slow 6 h / 30 min at 6), one
 * alarm per window on `(1 − mean(KubectlUpgrade)) / (1 − objective)`, the burn rate, and a rule that both are in
 * ALARM. The rules join the cluster's PAGE composite (infra/alarms.ts): one page per location × cluster, whichever
 * fires. Missing data is not breaching (a run that did not happen says nothing about the budget; probe health does).
 */
import { Duration } from 'aws-cdk-lib';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import { BURN_WINDOWS, SLO_PERIOD_DAYS, objectiveText, windowText, type BurnWindow } from '../src/metrics/slo.js';
import { probeMetric } from './metrics.js';

/** 1 − objective without float noise (0.999 → 0.001). */
export const budgetOf = (objective: number): number => Number((1 - objective).toFixed(10));

/** The burn rate over one window, as an expression (the alarms and the dashboard plot the same). */
export function burnRate(dims: { Location: string; Cluster: string }, objective: number, seconds: number): cloudwatch.MathExpression {
  // Each window's metric has an id of its own: a graph of several windows may not reuse one id for two periods.
  const id = `sli_${windowText(seconds)}`;
  return new cloudwatch.MathExpression({
    expression: `(1 - ${id}) / ${budgetOf(objective)}`,
    usingMetrics: { [id]: probeMetric('KubectlUpgrade', dims, { statistic: 'Average', period: Duration.seconds(seconds) }) },
    period: Duration.seconds(seconds),
    label: `burn rate over ${windowText(seconds)}`,
  });
}

/** The share of the budget left over the last SLO_PERIOD_DAYS, in percent (the dashboard's number). */
export function budgetLeft(dims: { Location: string; Cluster: string }, objective: number): cloudwatch.MathExpression {
  const seconds = SLO_PERIOD_DAYS * 86400;
  return new cloudwatch.MathExpression({
    expression: `100 * (1 - (1 - sli) / ${budgetOf(objective)})`,
    usingMetrics: { sli: probeMetric('KubectlUpgrade', dims, { statistic: 'Average', period: Duration.seconds(seconds) }) },
    period: Duration.seconds(seconds),
    label: `${dims.Cluster}: error budget left, % (${SLO_PERIOD_DAYS} days, objective ${objectiveText(objective)})`,
  });
}

export interface BurnAlarm {
  readonly window: BurnWindow;
  readonly long: cloudwatch.Alarm;
  readonly short: cloudwatch.Alarm;
  /** Both windows in ALARM: the budget burns at this rate and still does. */
  readonly rule: cloudwatch.IAlarmRule;
}

export function burnAlarms(o: {
  readonly cluster: string;
  readonly location: string;
  readonly objective: number;
  readonly name: (...parts: string[]) => string;
  readonly alarm: (key: string, props: cloudwatch.AlarmProps) => cloudwatch.Alarm;
}): BurnAlarm[] {
  const dims = { Location: o.location, Cluster: o.cluster };
  return BURN_WINDOWS.map((w) => {
    const one = (seconds: number, which: 'long' | 'short') =>
      o.alarm(`slo/${o.cluster}/${w.name}/${which}`, {
        alarmName: o.name(o.cluster, 'slo', w.name, windowText(seconds)),
        alarmDescription: `Upgrade SLO ${objectiveText(o.objective)} for ${o.cluster} from ${o.location}: the error budget burns faster than ${w.burnRate}× over ${windowText(seconds)} (today's kubectl failing to get its stream, after a retry, in more than ${Number((w.burnRate * budgetOf(o.objective) * 100).toFixed(3))} % of its upgrades). A component of the page with its ${which === 'long' ? 'short' : 'long'} window.`,
        metric: burnRate(dims, o.objective, seconds),
        threshold: w.burnRate,
        comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_THRESHOLD,
        evaluationPeriods: 1,
        datapointsToAlarm: 1,
        treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
      });
    const long = one(w.longSeconds, 'long');
    const short = one(w.shortSeconds, 'short');
    return {
      window: w,
      long,
      short,
      rule: cloudwatch.AlarmRule.allOf(
        cloudwatch.AlarmRule.fromAlarm(long, cloudwatch.AlarmState.ALARM),
        cloudwatch.AlarmRule.fromAlarm(short, cloudwatch.AlarmState.ALARM),
      ),
    };
  });
}
