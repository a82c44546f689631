/**
 * A location's schedules (StreamProbe): in a group of their own (its Scheduler metrics are this location's), invoked
 * by a role that may invoke only this function (or start only this location's task), each handing the function the
 * event it runs: its plan as src/lambda/event.ts parses it (config/plan.ts planEvent).
 */
import { RemovalPolicy, type Stack, Validations } from 'aws-cdk-lib';
import * as iam from 'aws-cdk-lib/aws-iam';
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import * as scheduler from 'aws-cdk-lib/aws-scheduler';
import * as targets from 'aws-cdk-lib/aws-scheduler-targets';
import type { Construct } from 'constructs';
import { planEvent } from '../src/config/plan.js';
import type { Plan } from './validate.js';

type PlannedSchedule = Plan['schedules'][number];

export interface ProbeSchedulesProps {
  readonly stack: Stack;
  readonly project: string;
  readonly locationName: string;
  readonly schedules: readonly PlannedSchedule[];
  readonly fn: lambda.IFunction;
  /** Filled with each schedule by name. */
  readonly byName: Map<string, scheduler.Schedule>;
  /** The target of a schedule that runs as a task (holds longer than a Lambda run). */
  readonly taskTarget: (s: PlannedSchedule, event: object, role: iam.IRole) => scheduler.IScheduleTarget;
}

export function probeSchedules(scope: Construct, p: ProbeSchedulesProps): scheduler.ScheduleGroup {
  // Deleted with the stack: it holds only our schedules, and a retained group of this fixed name would make the next deploy fail.
  const group = new scheduler.ScheduleGroup(scope, 'ScheduleGroup', {
    scheduleGroupName: `${p.project}-${p.locationName}`,
    removalPolicy: RemovalPolicy.DESTROY,
  });
  const schedulerRole = new iam.Role(scope, 'SchedulerRole', {
    assumedBy: new iam.ServicePrincipal('scheduler.amazonaws.com', { conditions: { StringEquals: { 'aws:SourceAccount': p.stack.account } } }),
    description: `kube-stream-probe ${p.locationName}: EventBridge Scheduler invokes the probe`,
  });
  const functionLogicalId = p.stack.getLogicalId(p.fn.node.defaultChild as lambda.CfnFunction);
  Validations.of(schedulerRole).acknowledge({
    id: `AwsSolutions-IAM5[Resource::<${functionLogicalId}.Arn>:*]`,
    reason: "CDK's invoke grant covers this one function's versions and aliases (its ARN followed by :*); no other function.",
  });
  for (const s of p.schedules) {
    const event = { schedule: s.name, ...planEvent(s) };
    const holds = event.holds as string[];
    const target =
      s.runner === 'task'
        ? p.taskTarget(s, event, schedulerRole)
        : new targets.LambdaInvoke(p.fn, { input: scheduler.ScheduleTargetInput.fromObject(event), retryAttempts: 0, role: schedulerRole });
    const schedule = new scheduler.Schedule(scope, `Schedule-${s.name}`, {
      scheduleGroup: group,
      description: `kube-stream-probe ${p.locationName}: holds ${holds.join(', ')}${s.runner === 'task' ? ' (ECS Fargate task: longer than a Lambda run)' : ''}`,
      schedule: scheduler.ScheduleExpression.expression(s.expression),
      target,
    });
    // The group is named by a literal, which makes no reference: without this CloudFormation may create a
    // schedule before its group, and CreateSchedule fails (ResourceNotFoundException).
    schedule.node.addDependency(group);
    p.byName.set(s.name, schedule);
  }
  return group;
}
