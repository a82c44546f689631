/**
 * A schedule, by one parser wherever it is written: the deployment YAML (probe-config.ts) and the StreamProbe
 * construct's schedule props (infra/validate.ts, its Durations given as seconds). Its plan is parsePlan's; the rules
 * on top (a hold within the task runner, a transfer that fits one Lambda run, runs that cannot overlap, a schedule
 * CloudWatch can alarm on) are rules.ts's, applied here once.
 */
import type { Checker } from './checker.js';
import { TASK_MAX_HOLD_SECONDS } from './lambda-limits.js';
import { PLAN_FIELDS, PLAN_NAMES, holdSpan, parsePlan, transferSessions } from './plan.js';
import { RULES } from './rules.js';
import { scheduleIntervalSeconds } from './schedule.js';
import type { ScheduleConfig } from './types.js';

export const SCHEDULE_FIELDS = ['name', 'expression', ...PLAN_FIELDS] as const;
const EXPRESSION = /^(rate\(\d+ (minute|minutes|hour|hours|day|days)\)|cron\(.+\))$/;

export interface ScheduleRules {
  /** The message's source (`config.yaml`, `StreamProbe props`), for the expression's own errors. */
  readonly source: string;
  /** The task runner's longest hold (the construct's taskMaxHold). */
  readonly taskMaxHoldSeconds?: number;
  /** The alarms' evaluation periods, when the location has alarms: the expression must be one CloudWatch can alarm on. */
  readonly evaluationPeriods?: number;
}

/** `schedules[i]`, checked: its name and expression, its plan, and the rules every schedule meets. */
export function parseSchedule(c: Checker, raw: unknown, i: number, rules: ScheduleRules): ScheduleConfig {
  const f = `schedules[${i}]`;
  const o = c.only(raw, f, SCHEDULE_FIELDS);
  const name = c.name(o, f);
  const expression = c.str(o, 'expression', f, EXPRESSION, 'must be rate(N minutes|hours|days) or cron(...)');
  const source = `${rules.source}: ${f}.expression`;
  scheduleIntervalSeconds(expression, source); // a cron whose interval varies is refused here
  if (rules.evaluationPeriods !== undefined) c.check(`${f}.expression`, RULES.alarmable(expression, rules.evaluationPeriods, source));
  if (o.transports !== undefined)
    c.fail(
      `${f}.transports`,
      'is not a schedule field: a schedule probes both transports (the A/B verdict and its alarms compare them); narrow them in an ad hoc run (invoke --transports)',
    );
  if (o.holds === undefined) c.fail(`${f}.holds`, 'is required: the holds each run makes (0s probes without holding)');
  const taskMax = rules.taskMaxHoldSeconds ?? TASK_MAX_HOLD_SECONDS;
  const plan = parsePlan({ checker: c, names: PLAN_NAMES.document, at: `${f}.`, holdRule: (h) => RULES.scheduledHold(h, taskMax) }, o);
  const longest = holdSpan(plan);
  c.check(`${f}.expression`, RULES.noOverlap(expression, longest, source));
  if (plan.transferBytes) c.check(`${f}.transfer`, RULES.transferFits(plan.transferBytes, transferSessions(plan), longest));
  return { name, expression, ...plan };
}
