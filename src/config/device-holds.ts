/**
 * Which holds catch which documented device (src/probe/idle-devices.ts), and what a run of each costs: the holds a
 * schedule needs to see a device's timer, one just past each default. Holds without pings catch every device that
 * forgets or closes idle flows (kubectl's own pings keep it alive past them, which is the point of holding without
 * them); a cap on a connection's life cuts whatever moves. The README's table ("Which holds catch which device") is
 * this, checked by test/unit/device-holds.test.ts.
 */
import { IDLE_DEVICES, type IdleDevice } from '../probe/idle-devices.js';
import { RUN_OVERHEAD_SECONDS, runnerForHold, type Runner } from './lambda-limits.js';
import { lambdaCostPerRun, taskCostPerRun } from './cost.js';

export interface DeviceHold {
  readonly holdSeconds: number;
  readonly devices: readonly IdleDevice[];
  /** Where such a hold runs: a Lambda run, or (longer than LAMBDA_MAX_HOLD_SECONDS) the Fargate task. */
  readonly runner: Runner;
  /** One run of a schedule whose longest hold this is, USD (512 MB Lambda; the task's size), as config/cost.ts prices it. */
  readonly costPerRunUsd: number;
}

/** A hold that crosses a default timer: past it by 3 % (at least 5 s), rounded up to 5 s. */
export function holdToCross(seconds: number): number {
  return Math.ceil((seconds + Math.max(5, seconds * 0.03)) / 5) * 5;
}

/** One hold per documented default under three hours, shortest first. */
export function deviceHolds(memoryMb = 512): DeviceHold[] {
  const defaults = [...new Set(IDLE_DEVICES.map((d) => d.seconds).filter((s) => s < 3 * 3600))].sort((a, b) => a - b);
  return defaults.map((seconds) => {
    const holdSeconds = holdToCross(seconds);
    const runner = runnerForHold(holdSeconds);
    const runSeconds = holdSeconds + RUN_OVERHEAD_SECONDS;
    return {
      holdSeconds,
      devices: IDLE_DEVICES.filter((d) => d.seconds === seconds),
      runner,
      costPerRunUsd: runner === 'task' ? taskCostPerRun(runSeconds) : lambdaCostPerRun(runSeconds, memoryMb),
    };
  });
}
