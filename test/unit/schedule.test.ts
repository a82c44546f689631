/**
 * Schedule expressions → the longest gap between runs (what an alarm period
 * must cover), the average (what a month costs), and CloudWatch's limits on
 * the alarms built from them (PutMetricAlarm: period ≤ 1 day; evaluation
 * range ≤ 1 day for periods under an hour, ≤ 7 days otherwise).
 */
import { describe, expect, it } from 'vitest';
import { alarmLimitProblem, alarmPeriodSeconds, averageIntervalSeconds, runPeriodSeconds, scheduleIntervalSeconds } from '../../src/config/schedule.js';

describe('schedule intervals', () => {
  it.each([
    ['rate(5 minutes)', 300, 300],
    ['rate(1 hour)', 3600, 3600],
    ['rate(2 days)', 172800, 172800],
    ['cron(0 * * * ? *)', 3600, 3600],
    ['cron(0/15 * * * ? *)', 900, 900],
    ['cron(0 9 * * ? *)', 86400, 86400],
    ['cron(0 9,21 * * ? *)', 43200, 43200],
    // Every 10 minutes on weekdays: the weekend is the longest gap (Friday 23:50 → Monday 00:00).
    ['cron(0/10 * ? * MON-FRI *)', 2 * 86400 + 600, (14 * 86400) / (10 * 144)],
    // Office hours only: the night is the longest gap.
    ['cron(0/30 8-17 ? * * *)', 14 * 3600 + 1800, 86400 / 20],
    ['cron(0 6 ? * 2 *)', 7 * 86400, 7 * 86400],
  ])('%s: longest gap %i s, average %d s', (expression, longest, average) => {
    expect(scheduleIntervalSeconds(expression)).toBe(longest);
    expect(averageIntervalSeconds(expression)).toBeCloseTo(average, 6);
  });

  it.each([
    ['every 5 minutes', /is not rate\(N minutes\|hours\|days\) or cron/],
    ['cron(0 9 * * *)', /cron\(\) takes six fields/],
    ['cron(0 9 L * ? *)', /L, W and # make the interval vary/],
    ['cron(0 9 ? * 6#3 *)', /L, W and # make the interval vary/],
    ['cron(61 * * * ? *)', /minutes: "61" is not in 0-59/],
    ['cron(0 9 * * MON *)', /one of day-of-month and day-of-week must be "\?"/],
    ['cron(0 9 1 1 ? *)', /runs less than twice a fortnight/],
    ['rate(0 minutes)', /never runs/],
  ])('refuses %s, with a CONFIG_INVALID error naming the field', (expression, message) => {
    expect(() => scheduleIntervalSeconds(expression, 'schedules[0].expression')).toThrow(message);
    try {
      scheduleIntervalSeconds(expression, 'schedules[0].expression');
    } catch (err) {
      expect(err).toMatchObject({ code: 'CONFIG_INVALID', context: { field: 'schedules[0].expression' } });
    }
  });

  it('alarm periods hold two runs (whole minutes, at most a day); graphs use one', () => {
    expect(alarmPeriodSeconds(300)).toBe(600);
    expect(alarmPeriodSeconds(90)).toBe(180);
    expect(alarmPeriodSeconds(20)).toBe(60);
    expect(alarmPeriodSeconds(43200)).toBe(86400);
    expect(alarmPeriodSeconds(86400)).toBe(86400); // a daily run: one per period, CloudWatch's longest
    expect(alarmPeriodSeconds(2 * 86400)).toBe(4 * 86400); // refused below
    expect(runPeriodSeconds(300)).toBe(300);
    expect(runPeriodSeconds(30)).toBe(60);
  });

  it("CloudWatch's limits: period ≤ 1 day; evaluation range ≤ 1 day under an hour, ≤ 7 days from an hour", () => {
    expect(alarmLimitProblem(600, 3)).toBeUndefined();
    expect(alarmLimitProblem(600, 144)).toBeUndefined(); // exactly a day
    expect(alarmLimitProblem(600, 145)).toMatch(/span 87000 s; CloudWatch allows at most one day for periods under an hour/);
    expect(alarmLimitProblem(86400, 7)).toBeUndefined();
    expect(alarmLimitProblem(86400, 8)).toMatch(/at most seven days for periods of an hour or more/);
    expect(alarmLimitProblem(4 * 86400, 1)).toMatch(/CloudWatch allows at most one day \(runs must be at most a day apart\)/);
  });
});
