/**
 * The same probe as a container task (ECS Fargate), for holds longer than a
 * Lambda run allows (15 minutes): the location's configuration
 * (KSP_LOCATION_CONFIG) and the run's event (KSP_EVENT) come from the task's
 * environment, its time budget from KSP_TASK_SECONDS; metrics, EMF and log
 * lines are the Lambda's, and the summary is the last log line
 * (`msg: "result"`), where `invoke` and people read it.
 */
import { parseRuntimeConfig } from '../src/config/probe-config.js';
import { errorMessage } from '../src/errors.js';
import { awsDeps } from '../src/lambda/aws-deps.js';
import { AccessCache } from '../src/lambda/cluster-access.js';
import { runLocation, type LambdaDeps, type LocationSummary } from '../src/lambda/run-location.js';

/** The task's default time budget when KSP_TASK_SECONDS is not set: the task runner's longest hold (2 h) and then some. */
export const DEFAULT_TASK_SECONDS = 2 * 3600 + 600;

export async function runTask(env: NodeJS.ProcessEnv, log: (line: string) => void, deps?: LambdaDeps): Promise<LocationSummary> {
  let event: unknown;
  try {
    event = JSON.parse(env.KSP_EVENT ?? '{}');
  } catch {
    event = { invalid: 'KSP_EVENT is not JSON' };
  }
  let summary: LocationSummary;
  try {
    const config = parseRuntimeConfig(env.KSP_LOCATION_CONFIG);
    const seconds = Number(env.KSP_TASK_SECONDS ?? DEFAULT_TASK_SECONDS);
    const t0 = performance.now();
    const budgetMs = (Number.isFinite(seconds) && seconds > 0 ? seconds : DEFAULT_TASK_SECONDS) * 1000;
    summary = await runLocation(event, () => budgetMs - (performance.now() - t0), config, deps ?? awsDeps(config.region, log), new AccessCache());
  } catch (err) {
    summary = { ok: false, location: 'unknown', reports: [], refused: [], error: { code: 'CONFIG_INVALID', message: errorMessage(err) } };
  }
  log(JSON.stringify({ level: summary.ok ? 'info' : 'error', msg: 'result', summary }));
  return summary;
}

if (process.argv[1] && /functions\/task\.[cm]?[jt]s$|task\.mjs$/.test(process.argv[1])) {
  runTask(process.env, (line) => void process.stdout.write(`${line}\n`)).then(
    (s) => process.exit(s.ok ? 0 : 1),
    (err) => {
      process.stderr.write(`kube-stream-probe task: ${errorMessage(err)}\n`);
      process.exit(1);
    },
  );
}
