/** `run --publish`: where a run's data points (metrics/datums.ts) go, and what a failed delivery does to the exit code. */
import { errorMessage, isProbeError, probeError } from '../errors.js';
import { publishCloudWatch } from '../metrics/cloudwatch.js';
import type { Datum } from '../metrics/datums.js';
import { emfLines } from '../metrics/emf.js';
import { prometheusRegistry } from '../metrics/prometheus.js';
import { holdsGroup } from '../metrics/prometheus-rules.js';
import { PUSH_JOBS, parsePushgatewayUrl, pushRegistry } from '../metrics/pushgateway.js';
import type { ProbePlan } from '../probe/types.js';
import { oneOf } from './args.js';
import { EXIT } from './exit-codes.js';
import type { CommandIO } from './io.js';

export type Publish = { readonly target: 'none' | 'cloudwatch' | 'emf' } | { readonly target: 'prometheus'; readonly pushgateway: string };

export function publishTarget(publish: string | undefined, pushgateway: string | undefined): Publish {
  const target = oneOf('publish', publish, ['none', 'cloudwatch', 'emf', 'prometheus'] as const, 'none');
  if (target !== 'prometheus') {
    if (pushgateway !== undefined) throw probeError('USAGE', '--pushgateway is only used with --publish prometheus', { field: 'pushgateway' });
    return { target };
  }
  if (pushgateway === undefined) {
    throw probeError('USAGE', '--publish prometheus needs --pushgateway URL (e.g. http://pushgateway.monitoring:9091)', { field: 'pushgateway' });
  }
  parsePushgatewayUrl(pushgateway);
  return { target, pushgateway };
}

/**
 * EMF lines on stderr; PutMetricData with the standard credential chain (EMF when it fails); or a push of the same
 * data points to a Pushgateway. False when the metrics could not be delivered.
 */
export async function publishDatums(io: CommandIO, publish: Publish, datums: Datum[], plan: ProbePlan, perNode = false): Promise<boolean> {
  if (publish.target === 'emf') for (const line of emfLines(datums)) io.err(`${line}\n`);
  if (publish.target === 'prometheus') return pushDatums(io, publish.pushgateway, datums, plan, perNode);
  if (publish.target !== 'cloudwatch') return true;
  const { CloudWatchClient } = await import('@aws-sdk/client-cloudwatch');
  const outcome = await publishCloudWatch(datums, {
    client: new CloudWatchClient({}),
    deadline: performance.now() + 20_000,
    log: (l) => io.err(`${l}\n`),
    location: plan.location,
  });
  io.err(
    `published ${outcome.published} metrics to CloudWatch${outcome.emfFallback ? `; ${outcome.emfFallback} written as EMF instead (${outcome.error})` : ''}\n`,
  );
  return true;
}

async function pushDatums(io: CommandIO, pushgateway: string, datums: Datum[], plan: ProbePlan, perNode: boolean): Promise<boolean> {
  const job = perNode ? PUSH_JOBS.perNode : PUSH_JOBS.sessions;
  try {
    const families = await pushRegistry(prometheusRegistry(datums), {
      url: pushgateway,
      job,
      grouping: { location: plan.location, cluster: plan.cluster.name, holds: holdsGroup(plan.holdsSeconds) },
    });
    io.err(`pushed ${datums.length} samples (${families} metrics) to the Pushgateway, job ${job}\n`);
    return true;
  } catch (err) {
    if (!isProbeError(err, 'PUBLISH_FAILED')) throw err;
    io.err(
      `kube-stream-probe run: the metrics were not delivered: ${errorMessage(err)}. The results above stand; check the URL and that this pod may reach the Pushgateway\n`,
    );
    return false;
  }
}

/** A clean run whose metrics were not delivered exits 4, so a CronJob's failure shows it; a finding keeps its own code. */
export function withPublishOutcome(code: number, delivered: boolean): number {
  return !delivered && code === EXIT.CLEAN ? EXIT.NOT_PUBLISHED : code;
}
