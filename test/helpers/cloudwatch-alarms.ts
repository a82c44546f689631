/**
 * A small evaluator of CloudWatch alarms as synthesized in a CloudFormation
 * template, for replaying metric histories and counting the notifications
 * each topic would receive. It follows CloudWatch's documented semantics
 * (https://docs.aws.amazon.com/AmazonCloudWatch/latest/monitoring/alarm-evaluation.html,
 * .../alarms-and-missing-data.html, .../Create_Composite_Alarm.html):
 *
 * - a metric alarm's datapoint per Period is the Statistic over what was
 *   published in that period; it goes to ALARM when at least DatapointsToAlarm
 *   of the most recent EvaluationPeriods datapoints breach, else OK;
 * - CloudWatch looks further back than EvaluationPeriods (the "evaluation
 *   range"): when at least EvaluationPeriods real datapoints are found there,
 *   the most recent of them are evaluated and TreatMissingData is ignored;
 *   otherwise the missing ones among the last EvaluationPeriods count as
 *   TreatMissingData says (breaching / notBreaching). The range's exact length
 *   is not documented; EXTRA_PERIODS stands in for it;
 * - a composite alarm's state is its AlarmRule (ALARM("arn"), OK(…), NOT, AND,
 *   OR, TRUE, FALSE, parentheses) over the other alarms' states;
 * - actions run on state changes only: AlarmActions on → ALARM, OKActions on
 *   → OK (from INSUFFICIENT_DATA too, which is why a replay starts with a
 *   warm-up whose notifications are not counted).
 */

export type State = 'ALARM' | 'OK' | 'INSUFFICIENT_DATA';
type Json = any;

/** Periods looked back beyond EvaluationPeriods for real datapoints (CloudWatch's undocumented evaluation range). */
export const EXTRA_PERIODS = 2;

interface MetricAlarm {
  readonly id: string;
  readonly name: string;
  readonly namespace: string;
  readonly key: string;
  readonly statistic: string;
  readonly period: number;
  readonly evaluationPeriods: number;
  readonly datapointsToAlarm: number;
  readonly threshold: number;
  readonly comparison: string;
  readonly missing: string;
  readonly alarmActions: string[];
  readonly okActions: string[];
}

interface CompositeAlarm {
  readonly id: string;
  readonly name: string;
  readonly rule: string;
  readonly alarmActions: string[];
  readonly okActions: string[];
}

export interface Notification {
  readonly at: number;
  readonly topic: string;
  readonly alarm: string;
  readonly state: State;
}

/** CloudFormation values as plain strings: Ref → the logical id, GetAtt Arn → arn:<logical id>, Join → joined. */
function resolve(v: Json): string {
  if (typeof v === 'string' || typeof v === 'number') return String(v);
  if (v?.Ref) return v.Ref;
  if (v?.['Fn::GetAtt']) return `arn:${v['Fn::GetAtt'][0]}`;
  if (v?.['Fn::Join']) return (v['Fn::Join'][1] as Json[]).map(resolve).join(v['Fn::Join'][0]);
  throw new Error(`cannot resolve ${JSON.stringify(v)}`);
}

export function metricKey(namespace: string, name: string, dimensions: Record<string, string>): string {
  return `${namespace}|${name}|${Object.keys(dimensions)
    .sort()
    .map((k) => `${k}=${dimensions[k]}`)
    .join(',')}`;
}

function statistic(values: number[], stat: string): number {
  switch (stat) {
    case 'Minimum':
      return Math.min(...values);
    case 'Maximum':
      return Math.max(...values);
    case 'Sum':
      return values.reduce((a, b) => a + b, 0);
    case 'Average':
      return values.reduce((a, b) => a + b, 0) / values.length;
    case 'SampleCount':
      return values.length;
    default:
      throw new Error(`statistic ${stat} is not modelled`);
  }
}

function breaches(value: number, comparison: string, threshold: number): boolean {
  switch (comparison) {
    case 'LessThanThreshold':
      return value < threshold;
    case 'LessThanOrEqualToThreshold':
      return value <= threshold;
    case 'GreaterThanThreshold':
      return value > threshold;
    case 'GreaterThanOrEqualToThreshold':
      return value >= threshold;
    default:
      throw new Error(`comparison ${comparison} is not modelled`);
  }
}

/** The alarm rule grammar: NOT binds tightest, then AND, then OR. */
function evaluateRule(rule: string, stateOf: (arn: string) => State): boolean {
  const tokens = rule.match(/\(|\)|"[^"]*"|[A-Z_]+/g) ?? [];
  let i = 0;
  const peek = () => tokens[i];
  const take = (t?: string) => {
    const x = tokens[i++];
    if (t !== undefined && x !== t) throw new Error(`alarm rule: expected ${t}, got ${x} in ${rule}`);
    return x!;
  };
  const primary = (): boolean => {
    const t = take();
    if (t === 'NOT') return !primary();
    if (t === 'TRUE') return true;
    if (t === 'FALSE') return false;
    if (t === '(') {
      const v = or();
      take(')');
      return v;
    }
    if (t === 'ALARM' || t === 'OK' || t === 'INSUFFICIENT_DATA') {
      take('(');
      const arn = take().slice(1, -1);
      take(')');
      return stateOf(arn) === t;
    }
    throw new Error(`alarm rule: unexpected ${t} in ${rule}`);
  };
  const and = (): boolean => {
    let v = primary();
    while (peek() === 'AND') {
      take();
      v = primary() && v;
    }
    return v;
  };
  const or = (): boolean => {
    let v = and();
    while (peek() === 'OR') {
      take();
      v = and() || v;
    }
    return v;
  };
  const v = or();
  if (i !== tokens.length) throw new Error(`alarm rule: trailing ${tokens.slice(i).join(' ')} in ${rule}`);
  return v;
}

export class AlarmSimulator {
  readonly metricAlarms: MetricAlarm[] = [];
  readonly composites: CompositeAlarm[] = [];
  readonly states = new Map<string, State>();
  readonly notifications: Notification[] = [];
  private readonly data = new Map<string, { t: number; v: number }[]>();

  constructor(template: Json) {
    for (const [id, r] of Object.entries<Json>(template.Resources)) {
      const p = r.Properties;
      if (r.Type === 'AWS::CloudWatch::Alarm') {
        if (!p.MetricName) throw new Error(`${id}: metric-math alarms are not modelled`);
        const dims = Object.fromEntries((p.Dimensions ?? []).map((d: Json) => [d.Name, resolve(d.Value)]));
        this.metricAlarms.push({
          id,
          name: resolve(p.AlarmName ?? id),
          namespace: p.Namespace,
          key: metricKey(p.Namespace, p.MetricName, dims),
          statistic: p.Statistic,
          period: p.Period,
          evaluationPeriods: p.EvaluationPeriods,
          datapointsToAlarm: p.DatapointsToAlarm ?? p.EvaluationPeriods,
          threshold: p.Threshold,
          comparison: p.ComparisonOperator,
          missing: p.TreatMissingData ?? 'missing',
          alarmActions: (p.AlarmActions ?? []).map(resolve),
          okActions: (p.OKActions ?? []).map(resolve),
        });
      } else if (r.Type === 'AWS::CloudWatch::CompositeAlarm') {
        this.composites.push({
          id,
          name: resolve(p.AlarmName ?? id),
          rule: resolve(p.AlarmRule),
          alarmActions: (p.AlarmActions ?? []).map(resolve),
          okActions: (p.OKActions ?? []).map(resolve),
        });
      }
    }
    for (const a of [...this.metricAlarms, ...this.composites]) this.states.set(a.id, 'INSUFFICIENT_DATA');
  }

  put(namespace: string, name: string, dimensions: Record<string, string>, value: number, t: number): void {
    const key = metricKey(namespace, name, dimensions);
    const list = this.data.get(key) ?? [];
    list.push({ t, v: value });
    this.data.set(key, list);
  }

  /** Alarms on our namespace whose metric (exact dimension set) was never published. */
  unmatched(namespace: string): string[] {
    return this.metricAlarms.filter((a) => a.namespace === namespace && !this.data.has(a.key)).map((a) => a.name);
  }

  /** Evaluate every alarm at time `t` (seconds), on the periods that have ended by then. */
  evaluate(t: number): void {
    for (const a of this.metricAlarms) {
      const end = Math.floor(t / a.period) * a.period;
      const points = this.data.get(a.key) ?? [];
      const datapoints: (number | undefined)[] = [];
      for (let k = 0; k < a.evaluationPeriods + EXTRA_PERIODS; k++) {
        const from = end - (k + 1) * a.period;
        const values = points.filter((p) => p.t >= from && p.t < from + a.period).map((p) => p.v);
        datapoints.push(values.length ? statistic(values, a.statistic) : undefined);
      }
      const real = datapoints.filter((d): d is number => d !== undefined);
      let breaching: number;
      if (real.length >= a.evaluationPeriods) {
        breaching = real.slice(0, a.evaluationPeriods).filter((v) => breaches(v, a.comparison, a.threshold)).length;
      } else {
        const recent = datapoints.slice(0, a.evaluationPeriods);
        if (a.missing === 'missing' && recent.every((d) => d === undefined)) {
          this.transition(a, 'INSUFFICIENT_DATA', t);
          continue;
        }
        if (a.missing === 'ignore' && recent.some((d) => d === undefined)) continue;
        breaching = recent.filter((d) => (d === undefined ? a.missing === 'breaching' : breaches(d, a.comparison, a.threshold))).length;
      }
      this.transition(a, breaching >= a.datapointsToAlarm ? 'ALARM' : 'OK', t);
    }
    // Composites after their components; a composite may name another, so settle them in order.
    for (let pass = 0; pass < 3; pass++) {
      for (const c of this.composites) this.transition(c, evaluateRule(c.rule, (arn) => this.stateOfArn(arn)) ? 'ALARM' : 'OK', t);
    }
  }

  private stateOfArn(arn: string): State {
    const id = arn.replace(/^arn:/, '');
    const s = this.states.get(id);
    if (!s) throw new Error(`alarm rule names ${arn}, which is not in the template`);
    return s;
  }

  private transition(a: MetricAlarm | CompositeAlarm, state: State, t: number): void {
    if (this.states.get(a.id) === state) return;
    this.states.set(a.id, state);
    const actions = state === 'ALARM' ? a.alarmActions : state === 'OK' ? a.okActions : [];
    for (const topic of actions) this.notifications.push({ at: t, topic, alarm: a.name, state });
  }
}
