/**
 * "Which holds catch which device" (README) is the code's table (src/config/device-holds.ts over the documented
 * devices), the example schedule holds exactly the Lambda's share of it, and the cost the README states for that
 * schedule is what src/config/cost.ts computes.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { countMetricsAndAlarms, lambdaCostPerRun, PRICES } from '../../src/config/cost.js';
import { RUN_OVERHEAD_SECONDS } from '../../src/config/lambda-limits.js';
import { deviceHolds, holdToCross } from '../../src/config/device-holds.js';
import { loadProbeConfig } from '../../src/config/load.js';
import { averageIntervalSeconds } from '../../src/config/schedule.js';

const readme = readFileSync('README.md', 'utf8');
const row = (h: ReturnType<typeof deviceHolds>[number]) =>
  `| ${h.holdSeconds}s | ${h.devices.map((d) => d.product).join(', ')}${h.devices.every((d) => d.behaviour === 'lifetime') ? ', a lifetime: any keepalive' : ''} | ${h.runner === 'lambda' ? 'Lambda' : 'task'} | $${h.costPerRunUsd.toFixed(4)} |`;

describe('which holds catch which device', () => {
  it('a hold crosses a default by 3 % (at least 5 s), rounded up to 5 s', () => {
    expect([30, 60, 100, 240, 350, 600, 1200].map(holdToCross)).toEqual([35, 65, 105, 250, 365, 620, 1240]);
  });

  it("the README's table is the code's, row for row", () => {
    for (const h of deviceHolds()) expect(readme, row(h)).toContain(row(h));
  });

  it("the example's devices schedule holds every Lambda hold of the table, without pings", () => {
    const config = loadProbeConfig('infra/examples/multi-location.yaml');
    const devices = config.schedules.find((s) => s.name === 'devices')!;
    expect(devices.holdsSeconds).toEqual(
      deviceHolds()
        .filter((h) => h.runner === 'lambda')
        .map((h) => h.holdSeconds),
    );
    expect(devices.keepalives).toEqual(['none']);
    // The README's figures for it: runs, Lambda and the custom metrics it adds, per cluster.
    const runs = (30 * 24 * 3600) / averageIntervalSeconds(devices.expression);
    const lambda = runs * lambdaCostPerRun(620 + RUN_OVERHEAD_SECONDS, 512);
    const m =
      /holds 35s–620s without pings, exec only, every 6 hours:\n(\d+) runs ≈ \$([\d.]+) a month in Lambda, and (\d+) more custom metrics[^≈]*≈ \$([\d.]+) a month per cluster/.exec(
        readme,
      );
    expect(m, 'the README sentence').not.toBeNull();
    expect(Number(m![1])).toBe(Math.round(runs));
    expect(Number(m![2])).toBeCloseTo(lambda, 2);
    // What it adds to the example, which already holds 65 s without pings.
    const without = { ...config, schedules: config.schedules.filter((s) => s.name !== 'devices') };
    const added = countMetricsAndAlarms(config, 1).metrics - countMetricsAndAlarms(without, 1).metrics;
    expect(Number(m![3])).toBe(added);
    expect(Number(m![4])).toBeCloseTo(added * PRICES.customMetricPerMonth, 2);
  });
});
