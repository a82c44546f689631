/**
 * The rules a location's configuration must meet, in one place: the deployment config (the YAML,
 * probe-config.ts) and the StreamProbe construct's props (infra/validate.ts) both apply these, each naming the
 * field in its own terms (`clusters[0].endpoint` in either). A rule returns what is wrong, to follow the field's
 * name, or undefined. test/infra/rules-both-entry-points.test.ts runs one list of broken values through both.
 */
import { caBundleProblem } from '../kube/pem-check.js';
import { SLO_OBJECTIVE_DEFAULT, checkObjective } from '../metrics/slo.js';
import { LAMBDA_MAX_HOLD_SECONDS, LAMBDA_MAX_SECONDS, lambdaRunSeconds, runnerForHold, taskRunSeconds, transferChainMs } from './lambda-limits.js';
import { formatSize } from '../vocabulary.js';
import { sessionStartsProblem } from './location-size.js';
import { alarmLimitProblem, alarmPeriodSeconds, scheduleIntervalSeconds, shortestIntervalSeconds } from './schedule.js';

/** Names of projects, locations, clusters and schedules: they name functions, metrics and alarms. */
export const NAME_PATTERN = /^[a-z0-9]([-a-z0-9]{0,38}[a-z0-9])?$/;
/** Lambda's limit on a function name, which is `<project>-<location>`. */
export const MAX_FUNCTION_NAME_LENGTH = 64;
/** The target's TCP echo port when none is given (`kube-stream-probe manifest`). */
export const DEFAULT_TARGET_PORT = 8080;
export const ALARM_DEFAULTS = { evaluationPeriods: 3, datapointsToAlarm: 2, ticketHoldsWithoutPings: false, sloObjective: SLO_OBJECTIVE_DEFAULT } as const;

type Problem = string | undefined;

/** A rule that is a pattern: what is wrong with `v`, or undefined. */
const matching =
  (pattern: RegExp, what: string) =>
  (v: string): Problem =>
    pattern.test(v) ? undefined : `"${v}" ${what}`;

/**
 * Kubernetes' own name rules (apimachinery validation: a namespace is a DNS-1123 label, a pod name a DNS-1123
 * subdomain) and the other names a cluster's config carries: the YAML, the construct, the function's runtime
 * config (clusters.ts) and the CLI's flags apply these same functions.
 */
export const NAME_RULES = {
  namespace: matching(/^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/, 'is not a namespace name'),
  pod: matching(/^[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?$/, 'is not a pod name'),
  selector: matching(/^[A-Za-z0-9./_-]+=[A-Za-z0-9._-]*(,[A-Za-z0-9./_-]+=[A-Za-z0-9._-]*)*$/, 'is not a label selector (k=v,k2=v2)'),
  /** EKS CreateCluster's name pattern. */
  eksClusterName: matching(/^[0-9A-Za-z][A-Za-z0-9\-_]{0,99}$/, 'is not an EKS cluster name'),
  kubernetesGroup: matching(/^[a-z0-9]([-a-z0-9.:]{0,61}[a-z0-9])?$/, 'is not a Kubernetes group name'),
  /**
   * The cluster's CA bundle, base64 of its PEM (as EKS's certificateAuthority.data): a bundle without a
   * certificate is refused here, as a kubeconfig's is when read (kube/pem-check.ts), not at every dial. The
   * value is not quoted: it is long, and says nothing a reader can use.
   */
  caData: (v: string): Problem =>
    /^[A-Za-z0-9+/=\s]+$/.test(v) ? caBundleProblem(Buffer.from(v, 'base64').toString('utf8')) : 'must be base64 (of the PEM bundle, as EKS gives it)',
  secretArn: matching(/^arn:aws[a-z-]*:secretsmanager:[a-z0-9-]+:\d{12}:secret:[A-Za-z0-9/_+=.@-]+$/, 'is not a Secrets Manager secret ARN'),
  kmsKeyArn: matching(/^arn:aws[a-z-]*:kms:[a-z0-9-]+:\d{12}:key\/[0-9a-f-]{36}$/, 'is not a KMS key ARN'),
  region: matching(/^[a-z]{2}(-[a-z]+)+-\d$/, 'is not an AWS region'),
  /**
   * A location's or cluster's name where it is only a label (the CLI's `--location`, `--cluster-name`, the in-cluster
   * runner's): CloudWatch dimension and Prometheus label values. Deployed names follow RULES.name (they name AWS resources).
   */
  label: matching(/^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$/, "is not a name (letters, digits, '.', '_', '-'; at most 100)"),
} as const;

export const RULES = {
  name: (v: string): Problem => (NAME_PATTERN.test(v) ? undefined : `"${v}" must be lower-case letters, digits and "-" (at most 40)`),
  functionName: (project: string, location: string): Problem => {
    const fn = `${project}-${location}`;
    return fn.length > MAX_FUNCTION_NAME_LENGTH
      ? `"${location}" makes the function name ${fn} ${fn.length} characters long; Lambda allows ${MAX_FUNCTION_NAME_LENGTH} (shorten it or the project)`
      : undefined;
  },
  endpoint: (v: string): Problem => (/^https:\/\/[^\s/]+(:\d+)?(\/.*)?$/.test(v) ? undefined : `"${v}" must be an https:// URL`),
  port: (v: unknown): Problem => (Number.isInteger(v) && (v as number) >= 1 && (v as number) <= 65535 ? undefined : `${String(v)} is not a TCP port (1-65535)`),
  /** An access entry is a resource of the cluster: only a stack in the cluster's region can create it. */
  accessEntryRegion: (clusterRegion: string | undefined, locationRegion: string): Problem =>
    clusterRegion && clusterRegion !== locationRegion
      ? `needs the cluster in the location's region (${locationRegion}), not ${clusterRegion}: create the access entry there with aws eks create-access-entry`
      : undefined,
  evaluationPeriods: (n: unknown): Problem =>
    Number.isInteger(n) && (n as number) >= 1 && (n as number) <= 100 ? undefined : `${String(n)} must be a whole number from 1 to 100`,
  datapointsToAlarm: (m: unknown, n: number): Problem =>
    Number.isInteger(m) && (m as number) >= 1 && (m as number) <= n ? undefined : `${String(m)} must be a whole number from 1 to evaluationPeriods (${n})`,
  /** The upgrade SLO's objective (src/metrics/slo.ts). */
  sloObjective: (v: unknown): Problem => checkObjective(v),
  memoryMb: (v: unknown): Problem => (Number.isInteger(v) && (v as number) >= 128 && (v as number) <= 10240 ? undefined : `${String(v)} must be 128-10240 MB`),
  /** CloudWatch's limits for an alarm whose period holds two runs of this schedule. */
  alarmable: (expression: string, evaluationPeriods: number, source: string): Problem => {
    const problem = alarmLimitProblem(alarmPeriodSeconds(scheduleIntervalSeconds(expression, source)), evaluationPeriods);
    return problem ? `"${expression}" ${problem} (alarms.evaluationPeriods is ${evaluationPeriods})` : undefined;
  },
  /** A scheduled hold: whole seconds (its HoldSeconds dimension and alarm names), within the task runner. */
  scheduledHold: (seconds: number, taskMaxHoldSeconds: number): Problem =>
    Number.isInteger(seconds) ? RULES.holdWithin(seconds, taskMaxHoldSeconds) : `${seconds} s is not a whole number of seconds`,
  holdWithin: (seconds: number, taskMaxHoldSeconds: number): Problem =>
    seconds > taskMaxHoldSeconds
      ? `${seconds} s is longer than the task runner's ${taskMaxHoldSeconds} s (taskMaxHold); holds up to ${LAMBDA_MAX_HOLD_SECONDS} s run in Lambda, longer ones as an ECS task`
      : undefined,
  /** A long hold runs as a task: a run must end before the next starts (two tasks holding at once would measure each other's load). */
  noOverlap: (expression: string, longestHoldSeconds: number, source: string): Problem => {
    if (runnerForHold(longestHoldSeconds) === 'lambda') return undefined;
    const gap = shortestIntervalSeconds(expression, source);
    return taskRunSeconds(longestHoldSeconds) >= gap
      ? `"${expression}" starts a run every ${gap} s, but a run holding ${longestHoldSeconds} s lasts up to ${taskRunSeconds(longestHoldSeconds)} s: runs would overlap`
      : undefined;
  },
  /**
   * A schedule run by the Lambda must fit its transfers, one after another (`sessions` of them), in one
   * invocation, at the transfer's floor rate: a size that cannot is refused with the largest one that can.
   */
  transferFits: (bytes: number, sessions: number, longestHoldSeconds: number): Problem => {
    if (runnerForHold(longestHoldSeconds) === 'task') return undefined; // a task run: no 15-minute cap
    const fits = (b: number) => lambdaRunSeconds(longestHoldSeconds, transferChainMs(b, sessions)) <= LAMBDA_MAX_SECONDS;
    if (fits(bytes)) return undefined;
    let mib = 0;
    while (fits((mib + 1) * 1024 * 1024)) mib++;
    return `"${formatSize(bytes)}" cannot finish in one Lambda run: ${sessions} transfers, one after another, may take up to ${Math.ceil(transferChainMs(bytes, sessions) / 1000)} s at the 256 KiB/s floor, and a run may last ${LAMBDA_MAX_SECONDS} s; use at most ${mib}MiB`;
  },
  /** One run's session starts, paced honestly by the function's (or the task's) CPU: location-size.ts. */
  sessionStarts: sessionStartsProblem,
  /** A long hold needs a VPC (Fargate's awsvpc networking). */
  taskNeedsVpc: (longestHoldSeconds: number, hasVpc: boolean): Problem =>
    runnerForHold(longestHoldSeconds) === 'task' && !hasVpc
      ? `hold ${longestHoldSeconds} s is longer than a Lambda run allows (${LAMBDA_MAX_HOLD_SECONDS} s): it runs as an ECS Fargate task, which needs vpc and subnets`
      : undefined,
} as const;

/** The first name used twice in a list, with its index. */
export function duplicateName(items: readonly { readonly name: string }[]): { readonly index: number; readonly problem: string } | undefined {
  const seen = new Set<string>();
  for (const [index, x] of items.entries()) {
    if (seen.has(x.name)) return { index, problem: `"${x.name}" is used twice` };
    seen.add(x.name);
  }
  return undefined;
}
