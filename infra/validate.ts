/**
 * The StreamProbe props, checked as a deploy would check them, each failure naming the prop (CONFIG_INVALID),
 * and what the construct derives from them once they are valid (its Plan).
 */
import { Token } from 'aws-cdk-lib';
import { LAMBDA_MAX_HOLD_SECONDS, TASK_MAX_HOLD_SECONDS, taskRunSeconds } from '../src/config/lambda-limits.js';
import { MAX_FUNCTION_NAME_LENGTH, NAME_PATTERN, type ClusterConfig } from '../src/config/probe-config.js';
import { alarmLimitProblem, alarmPeriodSeconds, scheduleIntervalSeconds, shortestIntervalSeconds } from '../src/config/schedule.js';
import { probeError } from '../src/errors.js';
import { OPERATIONS } from '../src/vocabulary.js';
import type { AlarmedSchedule } from './alarms.js';
import type { StreamProbeProps } from './props.js';

export const DEFAULT_PROJECT = 'kube-stream-probe';
const ALARM_DEFAULTS = { evaluationPeriods: 3, datapointsToAlarm: 2, ticketHoldsWithoutPings: false } as const;

/** What the constructor derives from its props once they are valid. */
export interface Plan {
  readonly project: string;
  readonly clusters: ClusterConfig[];
  readonly schedules: (AlarmedSchedule & { readonly name: string; readonly runner: 'lambda' | 'task' })[];
  readonly longestHold: number;
  readonly alarms: { evaluationPeriods: number; datapointsToAlarm: number; ticketHoldsWithoutPings: boolean } | false;
  /** How a long-hold task reaches S3 (ECR's layers) when the subnets use endpoints; undefined when not needed. */
  readonly s3Gateway?: { readonly prefixListId: string; readonly routeTableIds: readonly string[] };
}

export function invalid(prop: string, rule: string): Error {
  return probeError('CONFIG_INVALID', `StreamProbe props: ${prop} ${rule}`, { field: prop });
}

/** The props, checked as a deploy would check them, each failure naming the prop. */
export function validate(props: StreamProbeProps, stackRegion: string): Plan {
  const project = props.project ?? DEFAULT_PROJECT;
  if (!NAME_PATTERN.test(project)) throw invalid('project', `"${project}" must be lower-case letters, digits and "-" (at most 40)`);
  if (!NAME_PATTERN.test(props.locationName)) throw invalid('locationName', `"${props.locationName}" must be lower-case letters, digits and "-" (at most 40)`);
  const fnName = `${project}-${props.locationName}`;
  if (fnName.length > MAX_FUNCTION_NAME_LENGTH)
    throw invalid('locationName', `makes the function name ${fnName} ${fnName.length} characters long; Lambda allows ${MAX_FUNCTION_NAME_LENGTH}`);
  if (props.clusters.length === 0) throw invalid('clusters', 'is empty: nothing to probe');
  const names = new Set<string>();
  const clusters = props.clusters.map((c, i): ClusterConfig => {
    const f = `clusters[${i}]`;
    if (!NAME_PATTERN.test(c.name)) throw invalid(`${f}.name`, `"${c.name}" must be lower-case letters, digits and "-" (at most 40)`);
    if (names.has(c.name)) throw invalid(`${f}.name`, `"${c.name}" is used twice`);
    names.add(c.name);
    if (!/^https:\/\/[^\s/]+(:\d+)?(\/.*)?$/.test(c.endpoint)) throw invalid(`${f}.endpoint`, `"${c.endpoint}" must be an https:// URL`);
    const port = c.target.port ?? 8080;
    if (!Number.isInteger(port) || port < 1 || port > 65535) throw invalid(`${f}.target.port`, `${port} is not a TCP port`);
    if (c.auth.type === 'eks' && c.auth.accessEntryGroup && c.auth.region && !Token.isUnresolved(stackRegion) && c.auth.region !== stackRegion) {
      throw invalid(
        `${f}.auth.accessEntryGroup`,
        `needs the cluster in the stack's region (${stackRegion}), not ${c.auth.region}: create the access entry there with aws eks create-access-entry`,
      );
    }
    const auth: ClusterConfig['auth'] =
      c.auth.type === 'eks'
        ? { type: 'eks', clusterName: c.auth.clusterName, region: c.auth.region, accessEntryGroup: c.auth.accessEntryGroup }
        : { type: 'secret', secretArn: c.auth.secret.secretArn, kmsKeyArn: c.auth.secret.encryptionKey?.keyArn };
    return { name: c.name, endpoint: c.endpoint, caData: c.caData, auth, target: { ...c.target, port } };
  });
  if (props.schedules.length === 0) throw invalid('schedules', 'is empty: the probe would never run');
  const alarmOptions = props.alarms === false ? false : { ...ALARM_DEFAULTS, ...props.alarms };
  if (alarmOptions) {
    const { evaluationPeriods: n, datapointsToAlarm: m } = alarmOptions;
    if (!Number.isInteger(n) || n < 1 || n > 100) throw invalid('alarms.evaluationPeriods', `${n} must be a whole number from 1 to 100`);
    if (!Number.isInteger(m) || m < 1 || m > n) throw invalid('alarms.datapointsToAlarm', `${m} must be a whole number from 1 to evaluationPeriods (${n})`);
  }
  const scheduleNames = new Set<string>();
  const taskMaxHold = props.taskMaxHold ? props.taskMaxHold.toSeconds() : TASK_MAX_HOLD_SECONDS;
  const schedules = props.schedules.map((s, i) => {
    const f = `schedules[${i}]`;
    if (!NAME_PATTERN.test(s.name)) throw invalid(`${f}.name`, `"${s.name}" must be lower-case letters, digits and "-"`);
    if (scheduleNames.has(s.name)) throw invalid(`${f}.name`, `"${s.name}" is used twice`);
    scheduleNames.add(s.name);
    const interval = scheduleIntervalSeconds(s.expression, `StreamProbe props: ${f}.expression`);
    const problem = alarmOptions ? alarmLimitProblem(alarmPeriodSeconds(interval), alarmOptions.evaluationPeriods) : undefined;
    if (problem)
      throw invalid(`${f}.expression`, `"${s.expression}" ${problem} (alarms.evaluationPeriods is ${alarmOptions && alarmOptions.evaluationPeriods})`);
    if (s.holds.length === 0) throw invalid(`${f}.holds`, 'is empty (Duration.seconds(0) probes without holding)');
    const holdsSeconds = s.holds.map((h, j) => {
      const seconds = h.toSeconds({ integral: false });
      if (!Number.isInteger(seconds) || seconds < 0) throw invalid(`${f}.holds[${j}]`, `${h.toHumanString()} is not a whole number of seconds`);
      if (seconds > taskMaxHold)
        throw invalid(
          `${f}.holds[${j}]`,
          `${h.toHumanString()} is longer than the task runner's ${taskMaxHold} s (taskMaxHold); holds up to ${LAMBDA_MAX_HOLD_SECONDS} s run in Lambda`,
        );
      return seconds;
    });
    const longest = Math.max(...holdsSeconds);
    const runner = longest > LAMBDA_MAX_HOLD_SECONDS ? ('task' as const) : ('lambda' as const);
    if (runner === 'task') {
      if (!props.vpc)
        throw invalid(
          `${f}.holds`,
          `hold ${longest} s is longer than a Lambda run allows (${LAMBDA_MAX_HOLD_SECONDS} s): it runs as an ECS Fargate task, which needs vpc and subnets`,
        );
      // A run must end before the next one starts: two tasks holding at once would measure each other's load.
      const gap = shortestIntervalSeconds(s.expression, `StreamProbe props: ${f}.expression`);
      if (taskRunSeconds(longest) >= gap)
        throw invalid(
          `${f}.expression`,
          `"${s.expression}" starts a run every ${gap} s, but a run holding ${longest} s lasts up to ${taskRunSeconds(longest)} s: runs would overlap`,
        );
    }
    return {
      name: s.name,
      expression: s.expression,
      holdsSeconds,
      keepalives: [...(s.keepalives ?? ['kubectl'])],
      operations: [...(s.operations ?? OPERATIONS)],
      runner,
    };
  });
  if (props.vpc && (!props.subnets || props.subnets.length === 0))
    throw invalid('subnets', 'are required with vpc: the subnets for the function (and created endpoints)');
  if (!props.vpc && (props.subnets || props.securityGroups || props.apiServerPeers || props.interfaceEndpoints)) {
    throw invalid('vpc', 'is required with subnets, securityGroups, apiServerPeers or interfaceEndpoints');
  }
  if (props.memorySize !== undefined && (!Number.isInteger(props.memorySize) || props.memorySize < 128 || props.memorySize > 10240))
    throw invalid('memorySize', `${props.memorySize} must be 128-10240 MB`);
  if (props.pageEmail && props.pageTopic)
    throw invalid('pageEmail', 'only subscribes to the topic the construct creates; subscribe it to your pageTopic yourself');
  if (props.ticketEmail && props.ticketTopic)
    throw invalid('ticketEmail', 'only subscribes to the topic the construct creates; subscribe it to your ticketTopic yourself');
  const lambdaHolds = schedules.filter((s) => s.runner === 'lambda').flatMap((s) => s.holdsSeconds);
  const task = schedules.find((s) => s.runner === 'task');
  const s3Gateway = task ? taskS3Gateway(props, task.name) : undefined;
  return { project, clusters, schedules, longestHold: lambdaHolds.length ? Math.max(...lambdaHolds) : 0, alarms: alarmOptions, s3Gateway };
}

/**
 * A long-hold task in subnets without NAT pulls its image from ECR, whose layers come from S3 through a gateway
 * endpoint (src/config/aws-apis.ts): the route tables to put it in ('create'), and the S3 prefix list its
 * security group must reach (either mode). Undefined behind NAT ('none'), where none of it is needed.
 */
function taskS3Gateway(props: StreamProbeProps, schedule: string): Plan['s3Gateway'] {
  const mode = props.interfaceEndpoints ?? 'none';
  if (mode === 'none') return undefined;
  const why = `schedule "${schedule}" runs as an ECS task, whose image layers Fargate pulls from S3 through a gateway endpoint`;
  const prefixListId = props.s3Gateway?.prefixListId ?? '';
  if (!Token.isUnresolved(prefixListId) && !/^pl-[0-9a-f]{8,17}$/.test(prefixListId)) {
    throw invalid(
      's3Gateway.prefixListId',
      `"${prefixListId}" is required and must be a prefix list id: ${why}, and the task's security group reaches S3 only by its prefix list (aws ec2 describe-managed-prefix-lists --filters Name=prefix-list-name,Values=com.amazonaws.REGION.s3)`,
    );
  }
  if (mode !== 'create') {
    if (props.s3Gateway?.routeTableIds)
      throw invalid(
        's3Gateway.routeTableIds',
        'are only used with interfaceEndpoints "create": with existing endpoints the S3 gateway endpoint must exist already',
      );
    return { prefixListId, routeTableIds: [] };
  }
  const routeTableIds = props.s3Gateway?.routeTableIds ?? props.subnets!.map((s) => s.routeTable?.routeTableId);
  if (routeTableIds.length === 0 || routeTableIds.some((id) => id === undefined)) {
    throw invalid(
      's3Gateway.routeTableIds',
      `are required: ${why}, made in the subnets' route tables, and these subnets do not say theirs (imported subnets do not know them: give their route table ids)`,
    );
  }
  return { prefixListId, routeTableIds: [...new Set(routeTableIds as string[])] };
}
