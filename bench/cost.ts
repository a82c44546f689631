/**
 * The Lambda cost of one plan, from its measured duration and the configured
 * memory, against one CloudWatch Synthetics canary run ($0.0012).
 */
import { lambdaCostPerRun, PRICES } from '../src/config/cost.js';
import { DEFAULT_MEMORY_MB } from '../src/config/probe-config.js';
import { runPlan } from '../src/probe/runner.js';
import { KEEPALIVES, OPERATIONS, TRANSPORTS } from '../src/vocabulary.js';
import { startEmulatorWithKubeconfig } from '../lab/emulator/kubeconfig.js';
import { BenchFailure, type Row } from './common.js';

const HOLD_SECONDS = 5;

/** The default memory for locations of up to three clusters (functionMemoryMb). */
export async function costBench(memoryMb = DEFAULT_MEMORY_MB): Promise<Row[]> {
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
    const rows: Row[] = [{ bench: 'cost', what: `one plan (12 sessions, hold ${HOLD_SECONDS}s) measured; overhead beyond the hold`, value: overhead, unit: 's' }];
    for (const mb of [memoryMb, 256]) {
      const usd = lambdaCostPerRun(overhead + 65, mb);
      const ratio = usd / PRICES.syntheticsCanaryRun;
      rows.push({
        bench: 'cost',
        what: `one plan with a 65 s hold at ${mb} MB (arm64)${mb === memoryMb ? ', the default up to 3 clusters' : ', the default above 3 clusters'}`,
        value: usd,
        unit: 'USD',
        ratio: `${ratio.toFixed(3)} of a canary run`,
        ...(mb === memoryMb ? { target: '< 0.1 of a canary run', pass: ratio < 0.1 } : {}),
      });
    }
    return rows;
  } finally {
    await lab.stop();
  }
}
