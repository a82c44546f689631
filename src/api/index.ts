/**
 * The package's API (`import { probeCluster } from 'kube-stream-probe'`): the engine without the CLI. One call
 * probes a kubeconfig context as `kube-stream-probe run` does (same plan, same defaults, same verdicts); the
 * pieces it is made of are exported for callers that hold their own connection. Errors are ProbeErrors, matched by
 * `code` (docs/errors.md). The construct is `kube-stream-probe/cdk`.
 */
import { contextTarget } from '../probe/context-target.js';
import { hostname } from 'node:os';
import { Checker } from '../config/checker.js';
import { PLAN_NAMES, parsePlan, type RawPlan } from '../config/plan.js';
import { NAME_RULES } from '../config/rules.js';
import { connectionFor } from '../kube/credentials.js';
import { loadKubeconfigFor } from '../kube/kubeconfig.js';
import { SecretRedactor } from '../kube/secrets.js';
import { runPlan } from '../probe/runner.js';
import type { ProbePlan, ProbeReport } from '../probe/types.js';
import { DEFAULT_MATRIX, READ_KEEPALIVES } from '../vocabulary.js';

export { parsePlan, planEvent, PLAN_NAMES, type RawPlan, type RunPlan } from '../config/plan.js';
export { loadKubeconfigFor, parseKubeconfig, type ResolvedContext } from '../kube/kubeconfig.js';
export { connectionFor } from '../kube/credentials.js';
export { SecretRedactor } from '../kube/secrets.js';
export { runPlan, type RunOptions } from '../probe/runner.js';
export { verdicts, verdictName } from '../probe/verdicts.js';
export { reportDatums } from '../metrics/datums.js';
export { htmlReport, type ReportEntry } from '../report/html.js';
export { isProbeError, type ProbeError } from '../errors.js';
export { BROKEN_VERDICTS } from '../probe/types.js';
export type { Diagnosis, ProbePlan, ProbeReport, SessionResult, Verdict, VerdictName } from '../probe/types.js';
export { VERSION } from '../version.js';

export interface ProbeClusterOptions {
  /** A kubeconfig file (default: $KUBECONFIG's files merged as kubectl merges them, then ~/.kube/config; in a pod, its service account). */
  readonly kubeconfig?: string;
  /** The context (default the current one). */
  readonly context?: string;
  /** The target's namespace (default the context's, else default). */
  readonly namespace?: string;
  /** The plan in the Lambda event's words (`{ operations: ['exec'], holds: ['0s', '65s'] }`); run's defaults where absent. */
  readonly plan?: RawPlan;
  /** The target pod (default: the first Running pod labelled for the probe), its container, its echo port (8080). */
  readonly pod?: string;
  readonly selector?: string;
  readonly container?: string;
  readonly port?: number;
  /** Results' location (default the host name) and cluster name (default the context's). */
  readonly location?: string;
  readonly clusterName?: string;
  readonly skipPreflight?: boolean;
  readonly signal?: AbortSignal;
  /** The environment kubeconfig and exec plugins are read with (default process.env). */
  readonly env?: NodeJS.ProcessEnv;
}

/** Probes one kubeconfig context as `kube-stream-probe run` does, and returns its report (verdicts, diagnoses, sessions). */
export async function probeCluster(options: ProbeClusterOptions = {}): Promise<ProbeReport> {
  const env = options.env ?? process.env;
  const checker = new Checker('probeCluster', { code: 'USAGE' });
  // The names run's flags check (config/rules.ts), by the same rules: what run refuses, this refuses.
  const names = { namespace: 'namespace', pod: 'pod', selector: 'selector', location: 'label', clusterName: 'label' } as const;
  for (const [field, rule] of Object.entries(names) as [keyof typeof names, (typeof names)[keyof typeof names]][]) {
    const v = options[field];
    if (v !== undefined) checker.check(field, NAME_RULES[rule](v));
  }
  if (options.port !== undefined && !(Number.isInteger(options.port) && options.port >= 1 && options.port <= 65535))
    checker.fail('port', `${options.port} is not a port (1-65535)`);
  const plan = parsePlan({ checker, names: PLAN_NAMES.document, at: 'plan.' }, options.plan ?? {}, {
    ...DEFAULT_MATRIX,
    keepalives: READ_KEEPALIVES,
  });
  const ctx = loadKubeconfigFor(options.kubeconfig, env, { context: options.context, namespace: options.namespace });
  const connection = await connectionFor(ctx, { env, redactor: new SecretRedactor() });
  const probePlan: ProbePlan = {
    location: options.location ?? hostname(),
    cluster: { ...contextTarget(ctx, { ...options, name: options.clusterName }), connection },
    ...plan,
  };
  return runPlan(probePlan, { skipPreflight: options.skipPreflight, signal: options.signal });
}
