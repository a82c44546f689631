/**
 * How often a schedule really runs, so alarms get a period in which every
 * window holds a run. EventBridge Scheduler expressions: `rate(N unit)` and
 * `cron(minutes hours day-of-month month day-of-week year)` (UTC; `?` in one
 * of the day fields; day-of-week 1-7 or SUN-SAT with SUN = 1; `*`, lists,
 * ranges and `/` steps). `L`, `W` and `#` are refused: their gaps change from
 * month to month, which no fixed alarm period can follow.
 *
 * And CloudWatch's limits on what an alarm may evaluate (PutMetricAlarm):
 * a period of at most a day, and an evaluation range (period × evaluation
 * periods) of at most a day for periods under an hour, at most seven days
 * otherwise.
 */
import { probeError } from '../errors.js';

const MONTHS = ['JAN', 'FEB', 'MAR', 'APR', 'MAY', 'JUN', 'JUL', 'AUG', 'SEP', 'OCT', 'NOV', 'DEC'];
const DAYS = ['SUN', 'MON', 'TUE', 'WED', 'THU', 'FRI', 'SAT'];

export const MAX_ALARM_PERIOD_SECONDS = 86_400;
const DAY = 86_400;

/** The values a cron field allows, or undefined for "any" (`*` / `?`). */
function field(text: string, min: number, max: number, names: readonly string[] | undefined, what: string): Set<number> | undefined {
  if (text === '*' || text === '?') return undefined;
  const out = new Set<number>();
  const value = (v: string) => {
    const i = names?.indexOf(v.toUpperCase()) ?? -1;
    const n = i >= 0 ? i + min : /^\d+$/.test(v) ? Number(v) : NaN;
    if (!Number.isInteger(n) || n < min || n > max) throw new Error(`${what}: "${v}" is not in ${min}-${max}`);
    return n;
  };
  for (const part of text.split(',')) {
    if (/[LW#]/i.test(part) && !names?.some((n) => part.toUpperCase().includes(n)))
      throw new Error(`${what}: "${part}" (L, W and # make the interval vary; use rate() or plain values)`);
    const [range, stepText] = part.split('/') as [string, string | undefined];
    const step = stepText === undefined ? 1 : Number(stepText);
    if (!Number.isInteger(step) || step < 1) throw new Error(`${what}: step "${stepText}" is not a positive whole number`);
    const [lo, hi] =
      range === '*'
        ? [min, max]
        : range.includes('-')
          ? range.split('-').map(value)
          : stepText !== undefined
            ? [value(range), max]
            : [value(range), value(range)];
    if (lo! > hi!) throw new Error(`${what}: range "${range}" runs backwards`);
    for (let n = lo!; n <= hi!; n += step) out.add(n);
  }
  return out;
}

/** Seconds between consecutive runs of a cron expression: the longest gap over a fortnight. */
function cronGapSeconds(body: string): { longest: number; shortest: number; average: number } {
  const parts = body.trim().split(/\s+/);
  if (parts.length !== 6) throw new Error('cron() takes six fields: minutes hours day-of-month month day-of-week year');
  const [mi, ho, dom, mo, dow] = parts as [string, string, string, string, string];
  const minutes = field(mi, 0, 59, undefined, 'minutes');
  const hours = field(ho, 0, 23, undefined, 'hours');
  const days = field(dom, 1, 31, undefined, 'day-of-month');
  const months = field(mo, 1, 12, MONTHS, 'month');
  const weekdays = field(dow, 1, 7, DAYS, 'day-of-week');
  if (dom !== '?' && dow !== '?') throw new Error('one of day-of-month and day-of-week must be "?"');
  const fires: number[] = [];
  // A fixed fortnight from a Monday, minute by minute (20 160 steps): enough to see weekly gaps.
  const start = Date.UTC(2027, 0, 4);
  for (let t = start; t < start + 14 * DAY * 1000; t += 60_000) {
    const d = new Date(t);
    if (minutes && !minutes.has(d.getUTCMinutes())) continue;
    if (hours && !hours.has(d.getUTCHours())) continue;
    if (days && !days.has(d.getUTCDate())) continue;
    if (months && !months.has(d.getUTCMonth() + 1)) continue;
    if (weekdays && !weekdays.has(d.getUTCDay() + 1)) continue;
    fires.push(t / 1000);
  }
  if (fires.length < 2) throw new Error('it runs less than twice a fortnight: too rarely to alarm on');
  // Gaps between consecutive runs, wrapping around the fortnight.
  const gaps = fires.map((f, i) => (i + 1 < fires.length ? fires[i + 1]! : fires[0]! + 14 * DAY) - f);
  return { longest: Math.max(...gaps), shortest: Math.min(...gaps), average: (14 * DAY) / fires.length };
}

/**
 * The longest time between two runs of a schedule, in seconds: an alarm period at least this long
 * always holds a run. `field` names the expression in errors.
 */
export function scheduleIntervalSeconds(expression: string, fieldName = 'expression'): number {
  return intervals(expression, fieldName).longest;
}

/** The shortest time between two runs, in seconds: a run longer than this would overlap the next. */
export function shortestIntervalSeconds(expression: string, fieldName = 'expression'): number {
  return intervals(expression, fieldName).shortest;
}

/** The average time between runs, in seconds (for what a month of runs costs). */
export function averageIntervalSeconds(expression: string, fieldName = 'expression'): number {
  return intervals(expression, fieldName).average;
}

function intervals(expression: string, fieldName: string): { longest: number; shortest: number; average: number } {
  const rate = /^rate\((\d+) (minute|minutes|hour|hours|day|days)\)$/.exec(expression);
  if (rate) {
    const n = Number(rate[1]);
    const s = rate[2]!.startsWith('minute') ? n * 60 : rate[2]!.startsWith('hour') ? n * 3600 : n * DAY;
    if (s === 0) throw probeError('CONFIG_INVALID', `${fieldName}: "${expression}" never runs`, { field: fieldName });
    return { longest: s, shortest: s, average: s };
  }
  const cron = /^cron\((.+)\)$/.exec(expression);
  if (!cron) throw probeError('CONFIG_INVALID', `${fieldName}: "${expression}" is not rate(N minutes|hours|days) or cron(...)`, { field: fieldName });
  try {
    return cronGapSeconds(cron[1]!);
  } catch (err) {
    throw probeError('CONFIG_INVALID', `${fieldName}: "${expression}": ${(err as Error).message}`, { field: fieldName }, err);
  }
}

/**
 * Runs in each alarm period. Two, so that a path failing every other run fails in every period and
 * stays in ALARM, instead of flapping ALARM/OK at each period (the alarm-storm test replays it); and
 * one skipped run does not make a period missing, which UpgradeSuccess treats as breaching.
 */
export const RUNS_PER_ALARM_PERIOD = 2;

/** The period for graphs and metric helpers: one run, whole minutes, at least a minute. */
export function runPeriodSeconds(intervalSeconds: number): number {
  return Math.max(60, Math.ceil(intervalSeconds / 60) * 60);
}

/**
 * An alarm period for runs at most `intervalSeconds` apart: RUNS_PER_ALARM_PERIOD runs, whole minutes;
 * at most a day, CloudWatch's limit (one run per period then). Longer intervals are refused by
 * alarmLimitProblem.
 */
export function alarmPeriodSeconds(intervalSeconds: number): number {
  const period = runPeriodSeconds(RUNS_PER_ALARM_PERIOD * intervalSeconds);
  return period > MAX_ALARM_PERIOD_SECONDS && intervalSeconds <= MAX_ALARM_PERIOD_SECONDS ? MAX_ALARM_PERIOD_SECONDS : period;
}

/** CloudWatch's limits on an alarm: why it would be refused, or undefined. */
export function alarmLimitProblem(periodSeconds: number, evaluationPeriods: number): string | undefined {
  if (periodSeconds > MAX_ALARM_PERIOD_SECONDS)
    return `needs an alarm period of ${periodSeconds} s; CloudWatch allows at most one day (runs must be at most a day apart)`;
  const range = periodSeconds * evaluationPeriods;
  const limit = periodSeconds < 3600 ? DAY : 7 * DAY;
  if (range > limit) {
    return `${evaluationPeriods} evaluation periods of ${periodSeconds} s span ${range} s; CloudWatch allows at most ${limit === DAY ? 'one day' : 'seven days'} for ${periodSeconds < 3600 ? 'periods under an hour' : 'periods of an hour or more'}`;
  }
  return undefined;
}
