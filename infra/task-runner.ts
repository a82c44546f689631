/**
 * The long-hold task runner: a schedule whose holds outlast a Lambda run runs as an ECS Fargate task, the same
 * engine (functions/task.ts, built into an image at deploy time from container/Dockerfile), the same
 * configuration and metrics, in the location's subnets and security groups, with a task role holding the same
 * least privilege (probe-access.ts), logging to the same log group. A task that stops without finishing its run
 * is a ticket.
 *
 * Its resources are made in the StreamProbe's own scope (not under a construct of their own), so their logical
 * ids, and so a deployed location's ECS cluster, roles and task definitions, are what they were before this
 * code had a file of its own: moving them would make CloudFormation replace named resources.
 */
import { TASK_MEMORY_MIB, TASK_VCPUS } from '../src/config/location-size.js';
import { fileURLToPath } from 'node:url';
import { PACKAGED, packagedDir } from './probe-code.js';
import { Duration, Stack, Validations } from 'aws-cdk-lib';
import { Platform } from 'aws-cdk-lib/aws-ecr-assets';
import * as ecs from 'aws-cdk-lib/aws-ecs';
import * as events from 'aws-cdk-lib/aws-events';
import * as iam from 'aws-cdk-lib/aws-iam';
import type * as logs from 'aws-cdk-lib/aws-logs';
import * as targets from 'aws-cdk-lib/aws-scheduler-targets';
import type * as sns from 'aws-cdk-lib/aws-sns';
import type { Construct } from 'constructs';
import { taskRunSeconds } from '../src/config/lambda-limits.js';
import { PROBE_PROCESS_ENV } from '../src/config/process-env.js';
import type { ProbeNetwork } from './network.js';
import { grantProbeAccess } from './probe-access.js';
import type { StreamProbeProps } from './props.js';
import { admitPublisher, eventBridgeRulePublisher, snsRuleTarget } from './topic-access.js';

export interface TaskRunnerProps {
  readonly project: string;
  readonly locationName: string;
  readonly props: StreamProbeProps;
  readonly network: ProbeNetwork;
  readonly logGroup: logs.ILogGroup;
  /** The location's runtime configuration (KSP_LOCATION_CONFIG), as the function has it. */
  readonly envJson: string;
}

export class TaskRunner {
  readonly cluster: ecs.Cluster;
  readonly role: iam.Role;
  readonly image: ecs.ContainerImage;
  /** The task definitions by schedule name. */
  readonly definitions = new Map<string, ecs.FargateTaskDefinition>();

  constructor(
    private readonly scope: Construct,
    private readonly p: TaskRunnerProps,
  ) {
    const stack = Stack.of(scope);
    this.cluster = new ecs.Cluster(scope, 'TaskCluster', {
      vpc: p.props.vpc!,
      clusterName: `${p.project}-${p.locationName}`,
      containerInsightsV2: ecs.ContainerInsights.DISABLED,
    });
    Validations.of(this.cluster).acknowledge({
      id: 'AwsSolutions-ECS4',
      reason:
        'The task publishes its own measurements (the probe metrics) and logs; Container Insights would add per-task cost for CPU graphs of an idle hold.',
    });
    this.role = new iam.Role(scope, 'TaskRole', {
      assumedBy: new iam.ServicePrincipal('ecs-tasks.amazonaws.com', { conditions: { StringEquals: { 'aws:SourceAccount': stack.account } } }),
      description: `kube-stream-probe ${p.locationName}: the long-hold task, same least privilege as the function`,
    });
    grantProbeAccess(scope, p.props, this.role, 'TaskAccessEntry');
    this.image = taskImage();
  }

  /** The task definition for one long-hold schedule, and the Scheduler target that starts it. */
  target(name: string, event: object, holdSpanSeconds: number, schedulerRole: iam.IRole, transferMs = 0): targets.EcsRunFargateTask {
    const { p, scope } = this;
    const definition = new ecs.FargateTaskDefinition(scope, `Task-${name}`, {
      // `invoke` finds a location's task by this family prefix, and runs it in its cluster (src/aws/task-invoke.ts).
      family: `${p.project}-${p.locationName}-${name}`,
      cpu: TASK_VCPUS * 1024, // Fargate counts 1024 CPU units a vCPU
      memoryLimitMiB: TASK_MEMORY_MIB,
      runtimePlatform: { cpuArchitecture: ecs.CpuArchitecture.ARM64, operatingSystemFamily: ecs.OperatingSystemFamily.LINUX },
      taskRole: this.role,
    });
    this.definitions.set(name, definition);
    definition.addContainer('probe', {
      image: this.image,
      logging: ecs.LogDrivers.awsLogs({ logGroup: p.logGroup, streamPrefix: 'task' }),
      environment: {
        KSP_LOCATION_CONFIG: p.envJson,
        KSP_EVENT: JSON.stringify(event),
        KSP_TASK_SECONDS: String(taskRunSeconds(holdSpanSeconds, transferMs)),
        // Where an ad hoc run (`invoke`) starts this task: the schedule's own subnets and security groups.
        KSP_NETWORK: Stack.of(scope).toJsonString({
          subnets: p.props.subnets!.map((s) => s.subnetId),
          securityGroups: p.network.securityGroups.map((g) => g.securityGroupId),
        }),
        NODE_OPTIONS: '--enable-source-maps',
        ...PROBE_PROCESS_ENV,
      },
      stopTimeout: Duration.seconds(30),
      readonlyRootFilesystem: true,
    });
    Validations.of(definition.obtainExecutionRole()).acknowledge({
      id: 'AwsSolutions-IAM5[Resource::*]',
      reason:
        'The execution role pulls the task image: ecr:GetAuthorizationToken has no resource-level permissions (CDK scopes the pull itself to the asset repository).',
    });
    Validations.of(definition).acknowledge({
      id: 'AwsSolutions-ECS2',
      reason: 'The environment holds the location configuration (cluster endpoints, secret ARNs, never a secret value) and the run plan, as the Lambda does.',
    });
    return new targets.EcsRunFargateTask(this.cluster, {
      taskDefinition: definition,
      vpcSubnets: { subnets: [...p.props.subnets!] },
      securityGroups: p.network.securityGroups,
      assignPublicIp: false,
      retryAttempts: 0,
      role: schedulerRole,
    });
  }

  /**
   * A long-hold task that stops without finishing its run is a ticket, as a failed Lambda run is: it failed to
   * start (image pull, capacity, network: stopCode TaskFailedToStart…) or its container exited non-zero (the
   * run itself failed; a broken path is a finding, published, and exits 0: functions/task.ts). Without this a
   * broken task runner would only show as missing hold metrics, which alarm on no one. An EventBridge rule on
   * ECS Task State Change for the task cluster (fields: docs.aws.amazon.com/AmazonECS/latest/developerguide/
   * ecs_task_events.html), to the ticket topic; a task stopped by a person (UserInitiated) is not a ticket.
   */
  failureTickets(ticketTopic: sns.ITopic, ownTopic: boolean): void {
    const { p, scope } = this;
    const field = (path: string) => events.EventField.fromPath(path);
    const rule = new events.Rule(scope, 'TaskFailed', {
      description: `kube-stream-probe ${p.locationName}: a long-hold task stopped without finishing its run`,
      eventPattern: {
        source: ['aws.ecs'],
        detailType: ['ECS Task State Change'],
        detail: {
          clusterArn: [this.cluster.clusterArn],
          lastStatus: ['STOPPED'],
          $or: [{ stopCode: [{ 'anything-but': ['EssentialContainerExited', 'UserInitiated'] }] }, { containers: { exitCode: [{ 'anything-but': 0 }] } }],
        },
      },
    });
    // Not CDK's SnsTopic target: it admits events.amazonaws.com to the topic with no condition (any rule of any
    // account could publish). This rule's ARN as aws:SourceArn instead (infra/topic-access.ts).
    admitPublisher(scope, ticketTopic, ownTopic, eventBridgeRulePublisher(Stack.of(scope), rule.ruleArn));
    rule.addTarget(
      snsRuleTarget(ticketTopic, {
        message: events.RuleTargetInput.fromText(
          `kube-stream-probe ${p.locationName}: a long-hold task stopped without finishing its run (${field('$.detail.stopCode')}: ${field('$.detail.stoppedReason')}; exit code ${field('$.detail.containers[0].exitCode')}), so its holds were not measured. Task ${field('$.detail.taskArn')} of ${field('$.detail.taskDefinitionArn')}: see the log group ${p.logGroup.logGroupName} (streams task/…) and the cluster's stopped tasks in the ECS console.`,
        ),
      }),
    );
    Validations.of(rule).acknowledge({
      id: 'Serverless-EventBusDLQ',
      reason:
        "The rule's one target is the ticket topic; a ticket it cannot deliver shows in the rule's FailedInvocations metric and the task's own stopped state, and a queue of undelivered tickets would have no reader.",
    });
  }
}

/**
 * The task image. From a clone: the context is the repository root cut down by its .dockerignore to what the
 * bundle is built from, and the Dockerfile's `source` stage builds it. In the npm package: dist/image, the same
 * Dockerfile beside the bundles `npm pack` built, its `prebuilt` stage (infra/probe-code.ts).
 */
function taskImage(): ecs.ContainerImage {
  if (PACKAGED)
    return ecs.ContainerImage.fromAsset(packagedDir('image'), { file: 'Dockerfile', buildArgs: { BUNDLES: 'prebuilt' }, platform: Platform.LINUX_ARM64 });
  return ecs.ContainerImage.fromAsset(fileURLToPath(new URL('..', import.meta.url)), { file: 'container/Dockerfile', platform: Platform.LINUX_ARM64 });
}
