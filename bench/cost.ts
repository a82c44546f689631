/**
 * The Lambda cost of one plan, from its measured duration and the configured
 * memory, against one CloudWatch Synthetics canary run ($0.0012).
 */
import { lambdaCostPerRun, PRICES, taskCostPerRun } from '../src/config/cost.js';
import { MEMORY_STEPS_MB } from '../src/config/location-size.js';
import { runPlan } from '../src/probe/runner.js';
import { KEEPALIVES, OPERATIONS, TRANSPORTS } from '../src/vocabulary.js';
import { startEmulatorWithKubeconfig } from '../lab/emulator/kubeconfig.js';
import { BenchFailure, type Row } from './common.js';

const HOLD_SECONDS = 5;

/** The default memory for locations of up to ~18 clusters of this plan (location-size.ts). */
export async function costBench(memoryMb: number = MEMORY_STEPS_MB[0]): Promise<Row[]> {
  const lab = await startEmulatorWithKubeconfig({});
  try {
    const t0 = performance.now();
    const report = await runPlan({
      location: 'bench',
      cluster: { name: 'lab', connection: { server: lab.emulator.url }, namespace: 'default', pod: 'probe-target', port: 8080 },
      operations: OPERATIONS,
      transports: TRANSPORTS,
      keepalives: KEEPALIVES,
      holdsSeconds: [0, HOLD_SECONDS],
    });
    const seconds = (performance.now() - t0) / 1000;
    if (!report.verdicts.every((v) => v.verdict === 'clean')) throw new BenchFailure('the cost plan did not run clean against the emulator');
    // Holding is idle time: a 65 s plan lasts what this one lasted, plus 60 s.
    const overhead = seconds - HOLD_SECONDS;
    const rows: Row[] = [
      { bench: 'cost', what: `one plan (12 sessions, hold ${HOLD_SECONDS}s) measured; overhead beyond the hold`, value: overhead, unit: 's' },
    ];
    for (const mb of [memoryMb, ...MEMORY_STEPS_MB.slice(1)]) {
      const usd = lambdaCostPerRun(overhead + 65, mb);
      const ratio = usd / PRICES.syntheticsCanaryRun;
      rows.push({
        bench: 'cost',
        what: `one plan with a 65 s hold at ${mb} MB (arm64)${mb === memoryMb ? ', the default for small locations' : ", a larger location's default (location-size.ts)"}`,
        // The memory is chosen for CPU (docs/decisions.md): the target is half a canary run, not a tenth.
        value: usd,
        unit: 'USD',
        ratio: `${ratio.toFixed(3)} of a canary run`,
        ...(mb === memoryMb ? { target: '< 0.5 of a canary run', pass: ratio < 0.5 } : {}),
      });
    }
    // A one-hour hold: longer than a Lambda run, so the ECS Fargate task runner (0.25 vCPU, 512 MB, arm64).
    const hour = taskCostPerRun(overhead + 3600);
    rows.push({
      bench: 'cost',
      what: 'one plan with a 60 m hold as an ECS Fargate task (0.25 vCPU, 512 MB, arm64)',
      value: hour,
      unit: 'USD',
      ratio: `${(hour / PRICES.syntheticsCanaryRun).toFixed(2)} canary runs; a 13.7 m Lambda hold at ${memoryMb} MB: ${lambdaCostPerRun(overhead + 820, memoryMb).toFixed(5)} USD`,
    });
    return rows;
  } finally {
    await lab.stop();
  }
}
