/**
 * One invocation of a location's probe: validate the event, plan against the
 * time Lambda gives us (holds that cannot finish are refused up front), run
 * every cluster at once, publish (PutMetricData, EMF fallback) and return the
 * same JSON as the CLI, leaving a safety margin. Every outcome is classified
 * and published, including a cluster whose credentials failed.
 */
import { VERSION } from '../version.js';
import type { CloudWatchClient } from '@aws-sdk/client-cloudwatch';
import type { ClusterConfig, LocationRuntimeConfig } from '../config/probe-config.js';
import { errorCodeOf, errorMessage, isProbeError, probeError } from '../errors.js';
import { SecretRedactor } from '../kube/secrets.js';
import { publishCloudWatch } from '../metrics/cloudwatch.js';
import type { LocationSummary, RefusedHold } from '../metrics/location-summary.js';
import { perNodeDatums, reportDatums } from '../metrics/datums.js';
import { runPerNode, type PerNodeReport } from '../probe/per-node.js';
import { expandPlan, runPlan } from '../probe/runner.js';
import { StartPacer } from '../probe/start-pacer.js';
import { TRANSFER_FLOOR_BYTES_PER_SECOND } from '../probe/transfer.js';
import { notMeasuredVerdicts } from '../probe/verdicts.js';
import { verdictLogLines } from './verdict-log.js';
import type { Diagnosis, ProbeReport } from '../probe/types.js';
import { AccessCache, connectionForCluster, type AccessDeps } from './cluster-access.js';
import {
  ACCESS_BUDGET_MS,
  LAMBDA_ECHO_TIMEOUT_MS,
  LAMBDA_MAX_NODES,
  PUBLISH_BUDGET_MS,
  SAFETY_MARGIN_MS,
  lambdaSessionMs,
  transferChainMs,
} from '../config/lambda-limits.js';
import { parseProbeEvent, type ProbeEvent } from './event.js';

export interface LambdaDeps extends Omit<AccessDeps, 'redactor'> {
  /** CloudWatch in the location's region, where its metrics and alarms are. */
  readonly cloudwatch: Pick<CloudWatchClient, 'send'>;
  readonly log: (line: string) => void;
  /** The engine (a test may wrap it to make one cluster's probing throw). @default runPlan */
  readonly runPlan?: typeof runPlan;
}

export type { LocationSummary, RefusedHold } from '../metrics/location-summary.js';

/** An AWS call cut off by the credential budget, said as such. */
function budgetExceeded(err: unknown): Error {
  return probeError(
    'DEADLINE',
    `the AWS calls for credentials took longer than their ${ACCESS_BUDGET_MS / 1000} s budget (${errorMessage(err)}); is the endpoint reachable from this VPC?`,
    { deadlineMs: ACCESS_BUDGET_MS },
    err,
  );
}

/** A cluster whose credentials could not be fetched: not measured, said so, and published as ProbeError. */
function credentialFailure(cluster: ClusterConfig, location: string, event: ProbeEvent, holds: readonly number[], err: unknown): ProbeReport {
  return notMeasuredReport(
    cluster,
    location,
    event,
    holds,
    {
      code: 'credentials',
      summary: `Could not get credentials for ${cluster.name} (${errorCodeOf(err, 'CONFIG_INVALID')}): ${errorMessage(err)}`,
      check:
        cluster.auth.type === 'eks'
          ? `Check eks:DescribeCluster on ${cluster.auth.clusterName} and the function role's access entry.`
          : `Check the secret ${cluster.auth.secretArn} exists in its region and the function role may read it (secretsmanager:GetSecretValue, kms:Decrypt for a customer key).`,
    },
    'not reached: credentials failed',
  );
}

/** A cluster whose probing failed in the probe itself: that cluster is not measured; the others still publish. */
function probeFailure(cluster: ClusterConfig, location: string, event: ProbeEvent, holds: readonly number[], err: unknown): ProbeReport {
  return notMeasuredReport(
    cluster,
    location,
    event,
    holds,
    {
      code: 'probe-failed',
      summary: `The probe itself failed while probing ${cluster.name} (${errorCodeOf(err, 'INTERNAL')}): ${errorMessage(err)}`,
      check:
        "Not a finding about the path: the other clusters of this run were measured and published. Look for this error in the function's log and report it.",
    },
    'not measured: the probe failed',
  );
}

function notMeasuredReport(
  cluster: ClusterConfig,
  location: string,
  event: ProbeEvent,
  holds: readonly number[],
  why: Diagnosis,
  versionError: string,
): ProbeReport {
  const specs = expandPlan({ operations: event.operations, transports: event.transports, keepalives: event.keepalives, holdsSeconds: holds });
  return {
    probeVersion: VERSION,
    location,
    cluster: cluster.name,
    server: { url: cluster.endpoint, version: null, versionError },
    target: { namespace: cluster.target.namespace, pod: cluster.target.pod ?? null },
    rbac: [],
    results: [],
    verdicts: notMeasuredVerdicts(specs, why),
    findings: [],
    startedAt: new Date().toISOString(),
    durationMs: 0,
  };
}

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
  let event: ProbeEvent;
  try {
    event = parseProbeEvent(rawEvent);
  } catch (err) {
    const e = { code: errorCodeOf(err, 'CONFIG_INVALID'), message: errorMessage(err) };
    deps.log(JSON.stringify({ level: 'error', msg: 'invalid event', ...e }));
    return { ok: false, location: config.location, reports: [], refused: [], error: e };
  }
  const unknown = event.clusters?.filter((n) => !config.clusters.some((c) => c.name === n)) ?? [];
  if (unknown.length) {
    const e = { code: 'CONFIG_INVALID', message: `event.clusters: ${unknown.join(', ')} not configured for location ${config.location}` };
    deps.log(JSON.stringify({ level: 'error', msg: 'invalid event', ...e }));
    return { ok: false, location: config.location, reports: [], refused: [], error: e };
  }
  const clusters = config.clusters.filter((c) => !event.clusters || event.clusters.includes(c.name));
  // Plan against the time we have: a hold runs only if its whole session fits before publishing.
  const sessionBudgetMs = deadline - performance.now() - PUBLISH_BUDGET_MS - ACCESS_BUDGET_MS;
  const refused: RefusedHold[] = [];
  const holds: number[] = [];
  for (const h of event.holdsSeconds) {
    const needs = lambdaSessionMs(h);
    if (needs <= sessionBudgetMs) holds.push(h);
    else
      refused.push({
        holdSeconds: h,
        reason: `a ${h}s hold needs up to ${Math.ceil(needs / 1000)}s with handshakes and echoes; only ${Math.max(0, Math.floor(sessionBudgetMs / 1000))}s are left before publishing`,
      });
  }
  // The transfer runs alongside the holds; it too must fit before publishing.
  let transferBytes = event.transferBytes;
  if (transferBytes) {
    const needs = transferChainMs(transferBytes, event.operations.length * event.transports.length);
    if (needs > sessionBudgetMs) {
      refused.push({
        holdSeconds: 0,
        transferBytes,
        reason: `${event.operations.length * event.transports.length} transfers of ${transferBytes} bytes, one after another, may need up to ${Math.ceil(needs / 1000)}s (each limit assumes ${TRANSFER_FLOOR_BYTES_PER_SECOND / 1024} KiB/s); only ${Math.max(0, Math.floor(sessionBudgetMs / 1000))}s are left before publishing`,
      });
      transferBytes = undefined;
    }
  }
  // Credentials for every cluster at once, within their budget: a black-holed endpoint is aborted, not waited for.
  const accessSignal = AbortSignal.timeout(ACCESS_BUDGET_MS);
  const perNodeReports: PerNodeReport[] = [];
  // One pacer for the whole invocation: every cluster's sessions share the function's CPU (start-pacer.ts).
  const pacer = new StartPacer();
  // One cluster's whole run: credentials, the main target, its per-node targets.
  const probeCluster = async (cluster: ClusterConfig): Promise<ProbeReport> => {
    let connection;
    try {
      connection = await connectionForCluster(cluster, config.region, { ...deps, redactor }, cache, accessSignal);
    } catch (err) {
      return credentialFailure(cluster, config.location, event, holds, accessSignal.aborted ? budgetExceeded(err) : err);
    }
    const plan = {
      location: config.location,
      cluster: { name: cluster.name, connection, ...cluster.target },
      operations: event.operations,
      transports: event.transports,
      keepalives: event.keepalives,
      holdsSeconds: holds,
      ...(transferBytes ? { transferBytes } : {}),
      ...(event.holdShapes ? { holdShapes: event.holdShapes } : {}),
      echoTimeoutMs: LAMBDA_ECHO_TIMEOUT_MS,
    };
    // The per-node targets run alongside the main one, in one wave that fits the same time budget.
    const [report, perNode] = await Promise.all([
      // Follow-ups (a forgotten flow's ladder, an activity check) use only the time left before publishing.
      (deps.runPlan ?? runPlan)(plan, { pacer, followUpUntilMs: deadline - PUBLISH_BUDGET_MS }),
      cluster.target.perNode ? runPerNode(plan, { skipPreflight: true, concurrency: LAMBDA_MAX_NODES, maxNodes: LAMBDA_MAX_NODES, pacer }) : undefined,
    ]);
    if (perNode) perNodeReports.push(perNode);
    // A rejected token may have been rotated: read the secret again on the next run (its TTL bounds it otherwise).
    if (report.verdicts.some((v) => v.diagnosis.some((d) => d.code === 'credentials-rejected'))) cache.forget(cluster);
    return report;
  };
  // One cluster's unexpected failure is that cluster's result (not measured, ProbeError 1): it never costs the
  // others of the location their metrics.
  const reports = await Promise.all(
    (holds.length === 0 ? [] : clusters).map((cluster) =>
      probeCluster(cluster).catch((thrown: unknown) => {
        // A typed error keeps its code; anything else is a bug of ours, INTERNAL, with what it was.
        const err = isProbeError(thrown)
          ? thrown
          : probeError(
              'INTERNAL',
              `${thrown instanceof Error ? `${thrown.name}: ` : ''}${errorMessage(thrown)}`,
              { where: `probing cluster ${cluster.name}` },
              thrown,
            );
        deps.log(
          redactor.redact(
            JSON.stringify({
              level: 'error',
              msg: 'cluster probe failed',
              location: config.location,
              cluster: cluster.name,
              code: err.code,
              error: err.message,
            }),
          ),
        );
        return probeFailure(cluster, config.location, event, holds, err);
      }),
    ),
  );
  const datums = [...reports.flatMap((r) => reportDatums(r)), ...perNodeReports.flatMap((r) => perNodeDatums(r))];
  // The nodes per-node probing found failing, by name: the metric says how many, the log says which.
  for (const p of perNodeReports) {
    deps.log(
      redactor.redact(
        JSON.stringify({
          level: p.error || p.summary.some((s) => s.failing.length) ? 'warn' : 'info',
          msg: 'per-node',
          location: config.location,
          cluster: p.cluster,
          nodes: p.nodes.length,
          failing: p.summary
            .filter((s) => s.failing.length)
            .map((s) => ({ operation: s.operation, transport: s.transport, nodes: s.failing.map((f) => `${f.node}: ${f.class}`) })),
          summary: p.summary.map((s) => s.text),
          ...(p.skippedNodes ? { skippedNodes: p.skippedNodes } : {}),
          ...(p.error ? { error: p.error } : {}),
        }),
      ),
    );
  }
  // Publishing has its own budget: an unreachable CloudWatch ends in EMF lines, well inside the timeout.
  const publishDeadline = Math.min(deadline, performance.now() + PUBLISH_BUDGET_MS);
  const publish = datums.length
    ? await publishCloudWatch(datums, { client: deps.cloudwatch, deadline: publishDeadline, log: deps.log, location: config.location })
    : undefined;
  const summary: LocationSummary = {
    ok: true,
    location: config.location,
    schedule: event.schedule,
    reports,
    refused,
    publish,
    ...(perNodeReports.length ? { perNode: perNodeReports } : {}),
  };
  // One line per verdict, for the dashboard's Logs Insights table (infra/dashboard.ts LATEST_VERDICTS_QUERY), never a secret.
  for (const r of reports) for (const line of verdictLogLines(r, config.location, event.schedule)) deps.log(redactor.redact(JSON.stringify(line)));
  // One line per invocation for the logs: the verdicts, never a secret.
  deps.log(
    redactor.redact(
      JSON.stringify({
        level: 'info',
        msg: 'probe run',
        location: config.location,
        schedule: event.schedule,
        verdicts: reports.flatMap((r) => r.verdicts.map((v) => `${r.cluster}/${v.operation}/${v.keepalive}/${v.holdSeconds}s=${v.verdict}`)),
        refused: refused.map((x) => x.holdSeconds),
        publish,
        durationMs: Math.round(performance.now() - t0),
      }),
    ),
  );
  return redactor.redactValue(summary);
}
