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
 * - a metric-math alarm (Metrics: one expression with ReturnData, over MetricStats) evaluates the expression per
 *   period on each MetricStat's statistic of that period (arithmetic only: + - * / and parentheses, which is what
 *   the probe's alarms use); a period where one of its metrics has no data is missing;
 * - the evaluation window slides: evaluated every minute, its periods end at the evaluation time (an alarm without
 *   EvaluationWindow uses a SlidingWindow, ".../alarm-evaluation-window.html": "the window advances each time the
 *   alarm is evaluated, forming a rolling time window"; a WallClockWindow is not modelled and none is used);
 * - a composite alarm's state is its AlarmRule (ALARM("arn"), OK(…), NOT, AND,
 *   OR, TRUE, FALSE, parentheses) over the other alarms' states;
 * - actions run on state changes only: AlarmActions on → ALARM, OKActions on
 *   → OK (from INSUFFICIENT_DATA too, which is why a replay starts with a
 *   warm-up whose notifications are not counted);
 * - an alarm named by an EventBridge rule on "CloudWatch Alarm State Change"
 *   (its EventPattern's resources) is told to the rule's target, the notifier
 *   (infra/notifier.ts), which publishes to the topic its KSP_NOTIFY_CONFIG
 *   routes the alarm to: on ALARM, and on OK where the route says so.
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
  /** A metric-math alarm: its expression over these metrics (by id). */
  readonly math?: { readonly expression: string; readonly metrics: Readonly<Record<string, { readonly key: string; readonly statistic: string }>> };
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
  /** Published by the notifier function (its logical id), not by CloudWatch's alarm action. */
  readonly via?: string;
  /** Forwarded by the notifier to this page bus (the cross-location aggregator decides), not published. */
  readonly forward?: string;
}

interface NotifierRoute {
  readonly topic: string;
  readonly onOk: boolean;
  readonly fn: string;
  readonly forward?: string;
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

/** Metric math's arithmetic: numbers, metric ids, + - * / and parentheses (what the probe's alarms use). */
export function evaluateArithmetic(expression: string, vars: Readonly<Record<string, number>>): number {
  const tokens = expression.match(/\d+(?:\.\d+)?(?:e[-+]?\d+)?|[A-Za-z_][A-Za-z0-9_]*|[-+*/()]/g) ?? [];
  let i = 0;
  const primary = (): number => {
    const t = tokens[i++];
    if (t === undefined) throw new Error(`metric math: unexpected end of ${expression}`);
    if (t === '(') {
      const v = sum();
      if (tokens[i++] !== ')') throw new Error(`metric math: expected ) in ${expression}`);
      return v;
    }
    if (t === '-') return -primary();
    if (/^\d/.test(t)) return Number(t);
    if (t in vars) return vars[t]!;
    throw new Error(`metric math: unknown ${t} in ${expression}`);
  };
  const product = (): number => {
    let v = primary();
    while (tokens[i] === '*' || tokens[i] === '/') v = tokens[i++] === '*' ? v * primary() : v / primary();
    return v;
  };
  const sum = (): number => {
    let v = product();
    while (tokens[i] === '+' || tokens[i] === '-') v = tokens[i++] === '+' ? v + product() : v - product();
    return v;
  };
  const v = sum();
  if (i !== tokens.length) throw new Error(`metric math: trailing ${tokens.slice(i).join(' ')} in ${expression}`);
  return v;
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
  /** Every state change of every alarm (components notify no one, but their changes are what a composite reads). */
  readonly transitions: { readonly at: number; readonly alarm: string; readonly state: State }[] = [];
  private readonly data = new Map<string, { t: number; v: number }[]>();
  /** Alarm ids an EventBridge rule sends to the notifier, with where it publishes them. */
  private readonly routed = new Map<string, NotifierRoute>();

  constructor(template: Json) {
    for (const [id, r] of Object.entries<Json>(template.Resources)) {
      const p = r.Properties;
      if (r.Type === 'AWS::CloudWatch::Alarm') {
        const dimsOf = (list: Json[] | undefined) => Object.fromEntries((list ?? []).map((d: Json) => [d.Name, resolve(d.Value)]));
        let single: Pick<MetricAlarm, 'namespace' | 'key' | 'statistic' | 'period' | 'math'>;
        if (p.Metrics) {
          const returned = (p.Metrics as Json[]).filter((m) => m.ReturnData !== false);
          if (returned.length !== 1 || !returned[0].Expression) throw new Error(`${id}: a metric-math alarm needs one returned expression`);
          const stats = (p.Metrics as Json[]).filter((m) => m.MetricStat);
          const periods = new Set(stats.map((m) => m.MetricStat.Period));
          if (periods.size !== 1) throw new Error(`${id}: metrics of different periods are not modelled`);
          const metrics: Record<string, { key: string; statistic: string }> = Object.fromEntries(
            stats.map((m) => {
              const ms = m.MetricStat;
              return [m.Id, { key: metricKey(ms.Metric.Namespace, ms.Metric.MetricName, dimsOf(ms.Metric.Dimensions)), statistic: ms.Stat }];
            }),
          );
          single = {
            namespace: stats[0].MetricStat.Metric.Namespace,
            key: Object.values(metrics)[0]!.key,
            statistic: 'math',
            period: [...periods][0],
            math: { expression: returned[0].Expression, metrics },
          };
        } else {
          single = { namespace: p.Namespace, key: metricKey(p.Namespace, p.MetricName, dimsOf(p.Dimensions)), statistic: p.Statistic, period: p.Period };
        }
        this.metricAlarms.push({
          id,
          name: resolve(p.AlarmName ?? id),
          ...single,
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
    this.notifierRoutes(template);
  }

  /** EventBridge rules on alarm state changes, their notifier function, and its routes (KSP_NOTIFY_CONFIG). */
  private notifierRoutes(template: Json): void {
    const nameToId = new Map([...this.metricAlarms, ...this.composites].map((a) => [a.name, a.id]));
    for (const r of Object.values<Json>(template.Resources)) {
      const pattern = r.Type === 'AWS::Events::Rule' ? r.Properties.EventPattern : undefined;
      if (!pattern?.source?.includes('aws.cloudwatch') || !pattern['detail-type']?.includes('CloudWatch Alarm State Change')) continue;
      const ids = new Set((pattern.resources as Json[]).map((x) => resolve(x).replace(/^arn:/, '')));
      for (const target of r.Properties.Targets ?? []) {
        const fn = resolve(target.Arn).replace(/^arn:/, '');
        const env = template.Resources[fn]?.Properties?.Environment?.Variables?.KSP_NOTIFY_CONFIG;
        if (!env) throw new Error(`rule target ${fn} is not the notifier (no KSP_NOTIFY_CONFIG)`);
        const config = JSON.parse(resolve(env)) as { routes: Record<string, { topicArn: string; onOk?: boolean; forward?: string }> };
        for (const [name, route] of Object.entries(config.routes)) {
          const id = nameToId.get(name);
          if (!id) throw new Error(`the notifier routes ${name}, which is not an alarm of the template`);
          if (!ids.has(id)) throw new Error(`the notifier routes ${name}, whose state changes its rule does not send it`);
          this.routed.set(id, { topic: route.topicArn, onOk: route.onOk === true, fn, ...(route.forward ? { forward: route.forward } : {}) });
        }
      }
    }
  }

  put(namespace: string, name: string, dimensions: Record<string, string>, value: number, t: number): void {
    const key = metricKey(namespace, name, dimensions);
    const list = this.data.get(key) ?? [];
    list.push({ t, v: value });
    this.data.set(key, list);
  }

  /** Alarms on our namespace whose metric (exact dimension set; each of a metric-math alarm's) was never published. */
  unmatched(namespace: string): string[] {
    const keys = (a: MetricAlarm) => (a.math ? Object.values(a.math.metrics).map((m) => m.key) : [a.key]);
    return this.metricAlarms.filter((a) => a.namespace === namespace && keys(a).some((k) => !this.data.has(k))).map((a) => a.name);
  }

  /** Evaluate every alarm at time `t` (seconds, a whole minute): each period of its window ends by then, the last at `t`. */
  evaluate(t: number): void {
    for (const a of this.metricAlarms) {
      const end = t;
      const datapoints: (number | undefined)[] = [];
      for (let k = 0; k < a.evaluationPeriods + EXTRA_PERIODS; k++) {
        const from = end - (k + 1) * a.period;
        datapoints.push(this.datapoint(a, from));
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

  /** The alarm's datapoint for the period starting at `from`: its statistic, or its expression over its metrics'. */
  private datapoint(a: MetricAlarm, from: number): number | undefined {
    const stat = (key: string, s: string) => {
      const values = (this.data.get(key) ?? []).filter((p) => p.t >= from && p.t < from + a.period).map((p) => p.v);
      return values.length ? statistic(values, s) : undefined;
    };
    if (!a.math) return stat(a.key, a.statistic);
    const vars: Record<string, number> = {};
    for (const [id, m] of Object.entries(a.math.metrics)) {
      const v = stat(m.key, m.statistic);
      if (v === undefined) return undefined;
      vars[id] = v;
    }
    return evaluateArithmetic(a.math.expression, vars);
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
    this.transitions.push({ at: t, alarm: a.name, state });
    const actions = state === 'ALARM' ? a.alarmActions : state === 'OK' ? a.okActions : [];
    for (const topic of actions) this.notifications.push({ at: t, topic, alarm: a.name, state });
    const route = this.routed.get(a.id);
    if (route && (state === 'ALARM' || (state === 'OK' && route.onOk)))
      this.notifications.push({ at: t, topic: route.topic, alarm: a.name, state, via: route.fn, ...(route.forward ? { forward: route.forward } : {}) });
  }
}
