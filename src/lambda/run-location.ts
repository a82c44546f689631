/**
 * One invocation of a location's probe: validate the event, plan against the
 * time Lambda gives us (holds that cannot finish are refused up front, run-budget.ts), run
 * every cluster at once, publish (PutMetricData, EMF fallback) and return the
 * same JSON as the CLI, leaving a safety margin. Every outcome is classified
 * and published, including a cluster whose credentials failed (not-measured.ts).
 */
import { randomUUID } from 'node:crypto';
import type { CloudWatchClient } from '@aws-sdk/client-cloudwatch';
import type { ClusterConfig, LocationRuntimeConfig } from '../config/probe-config.js';
import { errorCodeOf, errorMessage, isProbeError, probeError } from '../errors.js';
import { SecretRedactor } from '../kube/secrets.js';
import { publishCloudWatch } from '../metrics/cloudwatch.js';
import type { LocationSummary } from '../metrics/location-summary.js';
import { perNodeDatums, reportDatums } from '../metrics/datums.js';
import { runPerNode, type PerNodeReport } from '../probe/per-node.js';
import { runPlan } from '../probe/runner.js';
import { StartPacer } from '../probe/start-pacer.js';
import { verdictLogLines } from './verdict-log.js';
import { evidenceLogLines } from './evidence-log.js';
import type { ProbeReport } from '../probe/types.js';
import { AccessCache, connectionForCluster, type AccessDeps } from './cluster-access.js';
import { ACCESS_BUDGET_MS, LAMBDA_ECHO_TIMEOUT_MS, LAMBDA_MAX_NODES, PUBLISH_BUDGET_MS, SAFETY_MARGIN_MS } from '../config/lambda-limits.js';
import { parseProbeEvent, type ProbeEvent } from './event.js';
import { budgetExceeded, credentialFailure, probeFailure } from './not-measured.js';
import { fitToBudget } from './run-budget.js';
import type { RunPlan } from '../vocabulary.js';

export interface LambdaDeps extends Omit<AccessDeps, 'redactor'> {
  /** CloudWatch in the location's region, where its metrics and alarms are. */
  readonly cloudwatch: Pick<CloudWatchClient, 'send'>;
  readonly log: (line: string) => void;
}

export type { LocationSummary, RefusedHold } from '../metrics/location-summary.js';

export async function runLocation(
  rawEvent: unknown,
  remainingMs: () => number,
  config: LocationRuntimeConfig,
  deps: LambdaDeps,
  cache: AccessCache,
): Promise<LocationSummary> {
  const t0 = performance.now();
  const deadline = t0 + remainingMs() - SAFETY_MARGIN_MS;
  const redactor = new SecretRedactor();
  const runId = randomUUID();
  const admitted = admit(rawEvent, config);
  if ('error' in admitted) {
    deps.log(JSON.stringify({ level: 'error', msg: 'invalid event', ...admitted.error }));
    return { ok: false, location: config.location, reports: [], refused: [], error: admitted.error };
  }
  const event = admitted.event;
  // Plan against the time we have: a hold (and the transfers) run only if they fit before publishing.
  const { plan, refused } = fitToBudget(event, deadline - performance.now() - PUBLISH_BUDGET_MS - ACCESS_BUDGET_MS);
  const run: ClusterRun = {
    config,
    deps,
    cache,
    redactor,
    plan,
    deadline,
    // Credentials for every cluster at once, within their budget: a black-holed endpoint is aborted, not waited for.
    accessSignal: AbortSignal.timeout(ACCESS_BUDGET_MS),
    // One pacer for the whole invocation: every cluster's sessions share the function's CPU (start-pacer.ts).
    pacer: new StartPacer(),
    perNode: [],
  };
  const clusters = config.clusters.filter((c) => !event.clusters || event.clusters.includes(c.name));
  const reports = await Promise.all((plan.holdsSeconds.length === 0 ? [] : clusters).map((c) => probeOrNotMeasured(run, c)));
  logPerNode(run);
  // Publishing has its own budget: an unreachable CloudWatch ends in EMF lines, well inside the timeout.
  const datums = [...reports.flatMap((r) => reportDatums(r)), ...run.perNode.flatMap((r) => perNodeDatums(r))];
  const publishDeadline = Math.min(deadline, performance.now() + PUBLISH_BUDGET_MS);
  const publish = datums.length
    ? await publishCloudWatch(datums, { client: deps.cloudwatch, deadline: publishDeadline, log: deps.log, location: config.location })
    : undefined;
  const summary: LocationSummary = {
    ok: true,
    location: config.location,
    schedule: event.schedule,
    run: runId,
    reports,
    refused,
    publish,
    ...(run.perNode.length ? { perNode: run.perNode } : {}),
  };
  logRun(run, summary, Math.round(performance.now() - t0));
  return redactor.redactValue(summary);
}

/** The event, or why it is refused: not one the parser accepts, or naming clusters this location does not probe. */
function admit(rawEvent: unknown, config: LocationRuntimeConfig): { event: ProbeEvent } | { error: { code: string; message: string } } {
  let event: ProbeEvent;
  try {
    event = parseProbeEvent(rawEvent);
  } catch (err) {
    return { error: { code: errorCodeOf(err, 'CONFIG_INVALID'), message: errorMessage(err) } };
  }
  const unknown = event.clusters?.filter((n) => !config.clusters.some((c) => c.name === n)) ?? [];
  if (unknown.length)
    return { error: { code: 'CONFIG_INVALID', message: `event.clusters: ${unknown.join(', ')} not configured for location ${config.location}` } };
  return { event };
}

/** What one invocation shares across its clusters. */
interface ClusterRun {
  readonly config: LocationRuntimeConfig;
  readonly deps: LambdaDeps;
  readonly cache: AccessCache;
  readonly redactor: SecretRedactor;
  /** The event's plan, cut to the time left (fitToBudget). */
  readonly plan: RunPlan;
  readonly deadline: number;
  readonly accessSignal: AbortSignal;
  readonly pacer: StartPacer;
  /** Filled by each cluster probed node by node. */
  readonly perNode: PerNodeReport[];
}

/** One cluster's whole run: credentials, the main target, its per-node targets. */
async function probeCluster(run: ClusterRun, cluster: ClusterConfig): Promise<ProbeReport> {
  const { config, deps, cache, redactor, accessSignal } = run;
  let connection;
  try {
    connection = await connectionForCluster(cluster, config.region, { ...deps, redactor }, cache, accessSignal);
  } catch (err) {
    return credentialFailure(cluster, config.location, run.plan, accessSignal.aborted ? budgetExceeded(err) : err);
  }
  const plan = {
    location: config.location,
    cluster: { name: cluster.name, connection, ...cluster.target },
    ...run.plan,
    echoTimeoutMs: LAMBDA_ECHO_TIMEOUT_MS,
  };
  // The per-node targets run alongside the main one, in one wave that fits the same time budget.
  const [report, perNode] = await Promise.all([
    // Follow-ups (a forgotten flow's ladder, an activity check) use only the time left before publishing.
    runPlan(plan, { pacer: run.pacer, followUpUntilMs: run.deadline - PUBLISH_BUDGET_MS }),
    cluster.target.perNode
      ? runPerNode(plan, {
          skipPreflight: true,
          concurrency: LAMBDA_MAX_NODES,
          maxNodes: LAMBDA_MAX_NODES,
          pacer: run.pacer,
          // Its sessions' retries too end before publishing (retry.ts).
          followUpUntilMs: run.deadline - PUBLISH_BUDGET_MS,
        })
      : undefined,
  ]);
  if (perNode) run.perNode.push(perNode);
  // A rejected token may have been rotated: read the secret again on the next run (its TTL bounds it otherwise).
  if (report.verdicts.some((v) => v.diagnosis.some((d) => d.code === 'credentials-rejected'))) cache.forget(cluster);
  return report;
}

/**
 * One cluster's unexpected failure is that cluster's result (not measured, ProbeError 1): it never costs the others
 * of the location their metrics. A typed error keeps its code; anything else is a bug of ours, INTERNAL, with what it was.
 */
function probeOrNotMeasured(run: ClusterRun, cluster: ClusterConfig): Promise<ProbeReport> {
  return probeCluster(run, cluster).catch((thrown: unknown) => {
    const err = isProbeError(thrown)
      ? thrown
      : probeError(
          'INTERNAL',
          `${thrown instanceof Error ? `${thrown.name}: ` : ''}${errorMessage(thrown)}`,
          { where: `probing cluster ${cluster.name}` },
          thrown,
        );
    const line = { level: 'error', msg: 'cluster probe failed', location: run.config.location, cluster: cluster.name, code: err.code, error: err.message };
    run.deps.log(run.redactor.redact(JSON.stringify(line)));
    return probeFailure(cluster, run.config.location, run.plan, err);
  });
}

/** The nodes per-node probing found failing, by name: the metric says how many, the log says which. */
function logPerNode(run: ClusterRun): void {
  for (const p of run.perNode) {
    const failing = p.summary
      .filter((s) => s.failing.length)
      .map((s) => ({ operation: s.operation, transport: s.transport, nodes: s.failing.map((f) => `${f.node}: ${f.class}`) }));
    const line = {
      level: p.error || failing.length ? 'warn' : 'info',
      msg: 'per-node',
      location: run.config.location,
      cluster: p.cluster,
      nodes: p.nodes.length,
      failing,
      summary: p.summary.map((s) => s.text),
      ...(p.skippedNodes ? { skippedNodes: p.skippedNodes } : {}),
      ...(p.error ? { error: p.error } : {}),
    };
    run.deps.log(run.redactor.redact(JSON.stringify(line)));
  }
}

/** A line per verdict (the dashboard's Logs Insights table, infra/dashboard.ts LATEST_VERDICTS_QUERY) and one per invocation; never a secret. */
function logRun(run: ClusterRun, summary: LocationSummary, durationMs: number): void {
  const { config, deps, redactor } = run;
  const tag = { id: summary.run ?? '', location: config.location, schedule: summary.schedule };
  for (const r of summary.reports) {
    for (const line of verdictLogLines(r, config.location, summary.schedule)) deps.log(redactor.redact(JSON.stringify({ ...line, run: tag.id })));
    // What the wire showed for each failed session: the page's evidence link finds these lines by run.
    for (const line of evidenceLogLines(r, tag)) deps.log(redactor.redact(JSON.stringify(line)));
  }
  const line = {
    level: 'info',
    msg: 'probe run',
    run: tag.id,
    location: config.location,
    schedule: summary.schedule,
    verdicts: summary.reports.flatMap((r) => r.verdicts.map((v) => `${r.cluster}/${v.operation}/${v.keepalive}/${v.holdSeconds}s=${v.verdict}`)),
    refused: summary.refused.map((x) => x.holdSeconds),
    publish: summary.publish,
    durationMs,
  };
  deps.log(redactor.redact(JSON.stringify(line)));
}
