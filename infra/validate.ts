/**
 * The StreamProbe props, checked as a deploy would check them, each failure naming the prop (CONFIG_INVALID),
 * and what the construct derives from them once they are valid (its Plan).
 */
import { EVENT_BUS_ARN } from '../src/lambda/location-page.js';
import { Token } from 'aws-cdk-lib';
import { TASK_MAX_HOLD_SECONDS, type Runner } from '../src/config/lambda-limits.js';
import type { ClusterConfig, ScheduleConfig } from '../src/config/probe-config.js';
import { ALARM_DEFAULTS, RULES, duplicateName } from '../src/config/rules.js';
import { Checker } from '../src/config/checker.js';
import { parseClusters } from '../src/config/clusters.js';
import { holdSpan, planTransferMs, runnerFor } from '../src/config/plan.js';
import { parseSchedule } from '../src/config/schedule-plan.js';
import { probeError } from '../src/errors.js';
import { sessionStarts } from '../src/config/location-size.js';
import type { StreamProbeProps } from './props.js';

export const DEFAULT_PROJECT = 'kube-stream-probe';

/** What the constructor derives from its props once they are valid. */
export interface Plan {
  readonly project: string;
  readonly clusters: ClusterConfig[];
  readonly schedules: (ScheduleConfig & { readonly runner: Runner; readonly transferMs: number; readonly starts: number })[];
  /** The longest the Lambda schedules' runs hold, s (config/plan.ts holdSpan): sizes the function's timeout. */
  readonly holdSpan: number;
  /** The most sessions one Lambda run starts (its largest schedule, location-size.ts): sizes the default memory. */
  readonly sessionStarts: number;
  /** The longest transfer chain of a schedule the Lambda runs, ms (transferChainMs). */
  readonly longestTransferMs: number;
  readonly alarms: { evaluationPeriods: number; datapointsToAlarm: number; ticketHoldsWithoutPings: boolean; sloObjective: number } | false;
  /** How a long-hold task reaches S3 (ECR's layers) when the subnets use endpoints; undefined when not needed. */
  readonly s3Gateway?: { readonly prefixListId: string; readonly routeTableIds: readonly string[] };
}

export function invalid(prop: string, rule: string): Error {
  return probeError('CONFIG_INVALID', `StreamProbe props: ${prop} ${rule}`, { field: prop });
}

/** A shared rule (src/config/rules.ts) applied to a prop. */
function check(prop: string, problem: string | undefined): void {
  if (problem) throw invalid(prop, problem);
}

/** The props, checked as a deploy would check them, each failure naming the prop; the rules are the YAML's (src/config/rules.ts). */
export function validate(props: StreamProbeProps, stackRegion: string): Plan {
  const project = props.project ?? DEFAULT_PROJECT;
  check('project', RULES.name(project));
  check('locationName', RULES.name(props.locationName));
  check('locationName', RULES.functionName(project, props.locationName));
  // From JavaScript (no type checker), a missing list is named as the type would have named it.
  for (const list of ['clusters', 'schedules'] as const)
    if (!Array.isArray(props[list])) throw invalid(list, `is required: a list (got ${typeof props[list]})`);
  if (props.clusters.length === 0) throw invalid('clusters', 'is empty: nothing to probe');
  const twice = duplicateName(props.clusters);
  if (twice) throw invalid(`clusters[${twice.index}].name`, twice.problem);
  // The runtime's own parser (src/config/clusters.ts): what deploys, runs. Values resolved only at deploy (a
  // created secret's ARN) are checked by the service that resolves them.
  const clusters = parseClusters(
    new Checker('StreamProbe props', { unresolved: (v) => Token.isUnresolved(v) }),
    props.clusters.map((c) => ({
      ...c,
      auth: c.auth.type === 'eks' ? c.auth : { type: 'secret', secretArn: c.auth.secret.secretArn, kmsKeyArn: c.auth.secret.encryptionKey?.keyArn },
    })),
  );
  clusters.forEach((c, i) => {
    if (c.auth.type === 'eks' && c.auth.accessEntryGroup && !Token.isUnresolved(stackRegion))
      check(`clusters[${i}].auth.accessEntryGroup`, RULES.accessEntryRegion(c.auth.region, stackRegion));
  });
  if (props.schedules.length === 0) throw invalid('schedules', 'is empty: the probe would never run');
  const alarmOptions = props.alarms === false ? false : { ...ALARM_DEFAULTS, ...props.alarms };
  if (alarmOptions) {
    check('alarms.evaluationPeriods', RULES.evaluationPeriods(alarmOptions.evaluationPeriods));
    check('alarms.datapointsToAlarm', RULES.datapointsToAlarm(alarmOptions.datapointsToAlarm, alarmOptions.evaluationPeriods));
    check('alarms.sloObjective', RULES.sloObjective(alarmOptions.sloObjective));
  }
  const sameName = duplicateName(props.schedules);
  if (sameName) throw invalid(`schedules[${sameName.index}].name`, sameName.problem);
  const taskMaxHoldSeconds = props.taskMaxHold ? props.taskMaxHold.toSeconds() : TASK_MAX_HOLD_SECONDS;
  const c: Checker = new Checker('StreamProbe props');
  const schedules = props.schedules.map((s, i) => {
    const f = `schedules[${i}]`;
    // The YAML's own schedule parser (src/config/schedule-plan.ts), the Durations as the seconds they are.
    const holds = s.holds.map((h) => h.toSeconds({ integral: false }));
    const evaluationPeriods = alarmOptions ? alarmOptions.evaluationPeriods : undefined;
    const schedule = parseSchedule(c, { ...s, holds }, i, { source: 'StreamProbe props', taskMaxHoldSeconds, evaluationPeriods });
    const runner = runnerFor(schedule);
    check(`${f}.holds`, RULES.taskNeedsVpc(holdSpan(schedule), props.vpc !== undefined));
    const starts = sessionStarts(clusters, schedule);
    check('clusters', RULES.sessionStarts(starts, clusters.length, s.name, runner, runner === 'lambda' ? props.memorySize : undefined));
    // The transfers run one after another, alongside the holds: the run lasts the longer of the two.
    return { ...schedule, runner, transferMs: planTransferMs(schedule), starts };
  });
  if (props.vpc && (!props.subnets || props.subnets.length === 0))
    throw invalid('subnets', 'are required with vpc: the subnets for the function (and created endpoints)');
  if (!props.vpc && (props.subnets || props.securityGroups || props.apiServerPeers || props.interfaceEndpoints)) {
    throw invalid('vpc', 'is required with subnets, securityGroups, apiServerPeers or interfaceEndpoints');
  }
  if (props.memorySize !== undefined) check('memorySize', RULES.memoryMb(props.memorySize));
  if (props.pageEmail && props.pageTopic)
    throw invalid('pageEmail', 'only subscribes to the topic the construct creates; subscribe it to your pageTopic yourself');
  if (props.ticketEmail && props.ticketTopic)
    throw invalid('ticketEmail', 'only subscribes to the topic the construct creates; subscribe it to your ticketTopic yourself');
  if (props.forwardPages) {
    const { eventBusArn, clusters: forwarded } = props.forwardPages;
    if (!Token.isUnresolved(eventBusArn) && !EVENT_BUS_ARN.test(eventBusArn))
      throw invalid('forwardPages.eventBusArn', `"${eventBusArn}" is not an event bus ARN (arn:aws:events:REGION:ACCOUNT:event-bus/NAME)`);
    forwarded.forEach((n, i) => {
      if (!clusters.some((cl) => cl.name === n)) throw invalid(`forwardPages.clusters[${i}]`, `"${n}" is not one of this probe's clusters`);
    });
    if (alarmOptions === false) throw invalid('forwardPages', 'forwards the pages of alarms, and alarms are off');
  }
  const lambdaSpans = schedules.filter((s) => s.runner === 'lambda').map(holdSpan);
  const lambdaTransferMs = Math.max(0, ...schedules.filter((s) => s.runner === 'lambda').map((s) => s.transferMs));
  const task = schedules.find((s) => s.runner === 'task');
  const s3Gateway = task ? taskS3Gateway(props, task.name) : undefined;
  return {
    project,
    clusters,
    schedules,
    holdSpan: Math.max(0, ...lambdaSpans),
    longestTransferMs: lambdaTransferMs,
    sessionStarts: Math.max(0, ...schedules.filter((s) => s.runner === 'lambda').map((s) => s.starts)),
    alarms: alarmOptions,
    s3Gateway,
  };
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
