/**
 * A cluster the invocation could not measure, as a report every runner publishes: its credentials failed (or their
 * budget ran out), or the probe itself failed on it. Its verdicts are not-measured, with the reason and what to check.
 */
import { VERSION } from '../version.js';
import type { ClusterConfig } from '../config/probe-config.js';
import { ACCESS_BUDGET_MS } from '../config/lambda-limits.js';
import { errorCodeOf, errorMessage, probeError } from '../errors.js';
import { expandPlan } from '../probe/runner.js';
import type { Diagnosis, ProbeReport } from '../probe/types.js';
import { notMeasuredVerdicts } from '../probe/verdicts.js';
import type { RunPlan } from '../vocabulary.js';

/** An AWS call cut off by the credential budget, said as such. */
export function budgetExceeded(err: unknown): Error {
  return probeError(
    'DEADLINE',
    `the AWS calls for credentials took longer than their ${ACCESS_BUDGET_MS / 1000} s budget (${errorMessage(err)}); is the endpoint reachable from this VPC?`,
    { deadlineMs: ACCESS_BUDGET_MS },
    err,
  );
}

/** A cluster whose credentials could not be fetched: not measured, said so, and published as ProbeError. */
export function credentialFailure(cluster: ClusterConfig, location: string, plan: RunPlan, err: unknown): ProbeReport {
  return notMeasuredReport(
    cluster,
    location,
    plan,
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
export function probeFailure(cluster: ClusterConfig, location: string, plan: RunPlan, err: unknown): ProbeReport {
  return notMeasuredReport(
    cluster,
    location,
    plan,
    {
      code: 'probe-failed',
      summary: `The probe itself failed while probing ${cluster.name} (${errorCodeOf(err, 'INTERNAL')}): ${errorMessage(err)}`,
      check:
        "Not a finding about the path: the other clusters of this run were measured and published. Look for this error in the function's log and report it.",
    },
    'not measured: the probe failed',
  );
}

function notMeasuredReport(cluster: ClusterConfig, location: string, plan: RunPlan, why: Diagnosis, versionError: string): ProbeReport {
  const specs = expandPlan({ operations: plan.operations, transports: plan.transports, keepalives: plan.keepalives, holdsSeconds: plan.holdsSeconds });
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
