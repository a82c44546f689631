/**
 * StreamProbe: everything one network location needs to probe its clusters on
 * a schedule: the probe Lambda (in the location's VPC when given), EventBridge
 * Scheduler schedules in a group of their own, a least-privilege role, a log
 * group with retention, alarms by severity (infra/alarms.ts) on a page and a
 * ticket topic, and a dashboard (infra/dashboard.ts). Props: infra/props.ts.
 */
import { fileURLToPath } from 'node:url';
import { CfnOutput, Duration, RemovalPolicy, Stack, Token, Validations } from 'aws-cdk-lib';
import type * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import { Platform } from 'aws-cdk-lib/aws-ecr-assets';
import * as ecs from 'aws-cdk-lib/aws-ecs';
import * as eks from 'aws-cdk-lib/aws-eks';
import * as events from 'aws-cdk-lib/aws-events';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as kms from 'aws-cdk-lib/aws-kms';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import * as destinations from 'aws-cdk-lib/aws-lambda-destinations';
import { NodejsFunction, OutputFormat } from 'aws-cdk-lib/aws-lambda-nodejs';
import * as logs from 'aws-cdk-lib/aws-logs';
import * as scheduler from 'aws-cdk-lib/aws-scheduler';
import * as targets from 'aws-cdk-lib/aws-scheduler-targets';
import * as sns from 'aws-cdk-lib/aws-sns';
import * as subs from 'aws-cdk-lib/aws-sns-subscriptions';
import { Construct } from 'constructs';
import { regionOfArn } from '../src/aws/arn.js';
import { LAMBDA_MAX_HOLD_SECONDS, LAMBDA_MAX_SECONDS, TASK_MAX_HOLD_SECONDS, lambdaRunSeconds, taskRunSeconds } from '../src/config/lambda-limits.js';
import { MAX_FUNCTION_NAME_LENGTH, NAME_PATTERN, defaultMemoryMb, type ClusterConfig, type LocationRuntimeConfig } from '../src/config/probe-config.js';
import { alarmLimitProblem, alarmPeriodSeconds, runPeriodSeconds, scheduleIntervalSeconds, shortestIntervalSeconds } from '../src/config/schedule.js';
import { probeError } from '../src/errors.js';
import { METRIC_NAMESPACE } from '../src/metrics/contract.js';
import { OPERATIONS, type KeepaliveMode, type Operation, type Transport } from '../src/vocabulary.js';
import { ProbeAlarms, type AlarmedSchedule } from './alarms.js';
import { ProbeDashboard } from './dashboard.js';
import { probeMetric } from './metrics.js';
import { ProbeNetwork } from './network.js';
import type { StreamProbeProps } from './props.js';
import { admitPublisher, alarmArnPattern, cloudWatchAlarmsPublisher, eventBridgeRulePublisher, keyStatementFor, snsRuleTarget } from './topic-access.js';

export type { ProbeAlarmOptions, ProbeCluster, ProbeClusterAuth, ProbeSchedule, StreamProbeProps } from './props.js';

/** Lambda environment variables are limited to 4 KB in total. */
const MAX_ENV_BYTES = 3500;
const DEFAULT_PROJECT = 'kube-stream-probe';
const ALARM_DEFAULTS = { evaluationPeriods: 3, datapointsToAlarm: 2, ticketHoldsWithoutPings: false } as const;

/**
 * The function's runtime, named, so that a CDK upgrade never changes it behind a deploy. The bundle
 * targets Node 20, so any Node.js runtime from 22 on runs it; 24 is supported longest.
 */
export const PROBE_RUNTIME = lambda.Runtime.NODEJS_24_X;

/** What the constructor derives from its props once they are valid. */
interface Plan {
  readonly project: string;
  readonly clusters: ClusterConfig[];
  readonly schedules: (AlarmedSchedule & { readonly name: string; readonly runner: 'lambda' | 'task' })[];
  readonly longestHold: number;
  readonly alarms: { evaluationPeriods: number; datapointsToAlarm: number; ticketHoldsWithoutPings: boolean } | false;
  /** How a long-hold task reaches S3 (ECR's layers) when the subnets use endpoints; undefined when not needed. */
  readonly s3Gateway?: { readonly prefixListId: string; readonly routeTableIds: readonly string[] };
}

export class StreamProbe extends Construct {
  readonly function: NodejsFunction;
  readonly role: iam.Role;
  readonly logGroup: logs.LogGroup;
  readonly scheduleGroup: scheduler.ScheduleGroup;
  /** Pages: kubectl is broken at this location. */
  readonly pageTopic: sns.ITopic;
  /** Tickets: GA readiness and probe health; failed runs are sent here too. */
  readonly ticketTopic: sns.ITopic;
  /** The VPC placement, when the location has a VPC. */
  readonly network?: ProbeNetwork;
  /** The alarms (undefined with `alarms: false`); each by key in `alarms.byKey`. */
  readonly alarms?: ProbeAlarms;
  readonly dashboard?: cloudwatch.Dashboard;
  readonly locationName: string;
  /** The schedules by their configured name. */
  readonly schedulesByName = new Map<string, scheduler.Schedule>();
  /** The long-hold schedules' task definitions by schedule name (empty without a task runner). */
  readonly taskDefinitions = new Map<string, ecs.FargateTaskDefinition>();
  private readonly plan: Plan;
  private readonly props: StreamProbeProps;
  private readonly envJson: string;
  private taskRunner: { cluster: ecs.Cluster; role: iam.Role; image: ecs.ContainerImage } | undefined;

  /** The ECS cluster long-hold tasks run in (undefined without a task runner). */
  get taskCluster(): ecs.ICluster | undefined {
    return this.taskRunner?.cluster;
  }

  constructor(scope: Construct, id: string, props: StreamProbeProps) {
    super(scope, id);
    // Validation first: nothing is created for props that cannot work.
    const stack = Stack.of(this);
    this.plan = validate(props, stack.region);
    this.props = props;
    const { project, clusters } = this.plan;
    this.locationName = props.locationName;
    const location = props.locationName;
    const runtimeConfig: LocationRuntimeConfig = { project, location, region: stack.region, clusters };
    const envJson = JSON.stringify(runtimeConfig);
    this.envJson = envJson;
    if (Buffer.byteLength(envJson) > MAX_ENV_BYTES) {
      throw invalid('clusters', `are ${Buffer.byteLength(envJson)} bytes of configuration; Lambda allows about ${MAX_ENV_BYTES}. Drop caData (it is read with eks:DescribeCluster) or split the clusters over locations`);
    }
    const timeout = Duration.seconds(Math.min(LAMBDA_MAX_SECONDS, lambdaRunSeconds(this.plan.longestHold)));

    // Retained with the stack's destroy (the logs outlive it), so its name is CloudFormation's: a fixed
    // name would make the next deploy fail on the log group left behind.
    this.logGroup = new logs.LogGroup(this, 'Logs', { retention: props.logRetention ?? logs.RetentionDays.ONE_MONTH });

    this.role = new iam.Role(this, 'Role', {
      assumedBy: new iam.ServicePrincipal('lambda.amazonaws.com'),
      description: `kube-stream-probe ${location}: metrics for its namespace, its secrets, its clusters`,
    });
    this.role.addToPolicy(new iam.PolicyStatement({ actions: ['logs:CreateLogStream', 'logs:PutLogEvents'], resources: [this.logGroup.logGroupArn] }));
    this.grantProbeAccess(props, stack, this.role, 'AccessEntry');

    let vpcProps: Partial<lambda.FunctionProps> = {};
    if (props.vpc) {
      this.network = new ProbeNetwork(this, 'Network', {
        locationName: location,
        vpc: props.vpc,
        subnets: props.subnets!,
        clusters,
        securityGroups: props.securityGroups,
        apiServerPeers: props.apiServerPeers,
        interfaceEndpoints: props.interfaceEndpoints,
        taskRunner: this.plan.schedules.some((s) => s.runner === 'task'),
        s3Gateway: this.plan.s3Gateway,
      });
      vpcProps = { vpc: props.vpc, vpcSubnets: { subnets: [...props.subnets!] }, securityGroups: this.network.securityGroups };
      // CDK adds this policy only to roles it creates; without it CreateFunction fails: the role cannot make the function's network interfaces.
      this.role.addManagedPolicy(iam.ManagedPolicy.fromAwsManagedPolicyName('service-role/AWSLambdaVPCAccessExecutionRole'));
      Validations.of(this.role).acknowledge({
        id: 'AwsSolutions-IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/AWSLambdaVPCAccessExecutionRole]',
        reason: 'AWSLambdaVPCAccessExecutionRole is what Lambda needs to create its network interfaces in the location VPC; those EC2 actions take no resource scope.',
      });
    }

    this.function = new NodejsFunction(this, 'Function', {
      functionName: `${project}-${location}`,
      description: `kube-stream-probe for location ${location}: exec and port-forward over SPDY and WebSocket`,
      entry: props.entry ?? fileURLToPath(new URL('../functions/probe.ts', import.meta.url)),
      handler: 'handler',
      runtime: PROBE_RUNTIME,
      architecture: lambda.Architecture.ARM_64,
      memorySize: props.memorySize ?? defaultMemoryMb(clusters.length),
      timeout,
      role: this.role,
      logGroup: this.logGroup,
      environment: { KSP_LOCATION_CONFIG: envJson, NODE_OPTIONS: '--enable-source-maps' },
      bundling: {
        format: OutputFormat.ESM,
        target: 'node20',
        minify: true,
        sourceMap: true,
        mainFields: ['module', 'main'],
        // The Node.js runtimes ship AWS SDK v3; bundling it would double the package (docs/decisions.md).
        // bufferutil is native (ws falls back to JavaScript without it; the Lambda moves few bytes).
        externalModules: ['@aws-sdk/*', 'bufferutil', 'utf-8-validate'],
        banner: "import { createRequire as __ksp_cr } from 'node:module'; const require = __ksp_cr(import.meta.url);",
      },
      ...vpcProps,
    });

    this.scheduleGroup = this.schedules(stack);

    const key = !props.pageTopic || !props.ticketTopic ? this.topicKey() : undefined;
    this.pageTopic = props.pageTopic ?? this.topic('PageTopic', `kube-stream-probe pages (${location})`, key, props.pageEmail);
    this.ticketTopic = props.ticketTopic ?? this.topic('TicketTopic', `kube-stream-probe tickets (${location})`, key, props.ticketEmail);
    // The topic policies: enforceSSL makes CDK write a TopicPolicy, which *replaces* SNS's default policy, so every
    // service that publishes must be admitted by name (infra/topic-access.ts).
    const alarmArns = this.plan.alarms ? alarmArnPattern(stack, project, location) : undefined;
    if (alarmArns) {
      admitPublisher(this, this.pageTopic, !props.pageTopic, cloudWatchAlarmsPublisher(stack, alarmArns));
      admitPublisher(this, this.ticketTopic, !props.ticketTopic, cloudWatchAlarmsPublisher(stack, alarmArns));
    }

    if (this.taskRunner) this.taskFailureTickets(this.taskRunner.cluster, !props.ticketTopic);

    // Scheduler invokes asynchronously: Lambda would retry a failed run twice, overlapping the next one.
    // A failed run is a ticket instead (CDK grants the role sns:Publish and the key).
    this.function.configureAsyncInvoke({ retryAttempts: 0, maxEventAge: Duration.hours(1), onFailure: new destinations.SnsDestination(this.ticketTopic) });
    Validations.of(this.function).acknowledge({
      id: 'Serverless-LambdaDLQ',
      reason: 'Failed asynchronous runs go to an on-failure destination (the ticket topic) with retries off, which carries the request and the error; a dead-letter queue would duplicate it.',
    });
    Validations.of(this.function).acknowledge({
      id: 'Serverless-LambdaTracing',
      reason: "Each run's timings are its product and are published as metrics and structured log lines; X-Ray would add cost per run and CPU inside the function whose handshake latency it measures.",
    });

    const perNodeClusters = clusters.filter((c) => c.target.perNode).map((c) => c.name);
    if (this.plan.alarms) {
      this.alarms = new ProbeAlarms(this, 'Alarms', {
        project,
        locationName: location,
        clusterNames: clusters.map((c) => c.name),
        perNodeClusters,
        schedules: this.plan.schedules,
        ...this.plan.alarms,
        fn: this.function,
        timeout,
        scheduleGroupName: this.scheduleGroup.scheduleGroupName,
        pageTopic: this.pageTopic,
        ticketTopic: this.ticketTopic,
      });
    }
    if (props.dashboard !== false) {
      this.dashboard = new ProbeDashboard(this, 'Dashboard', {
        dashboardName: `${project}-${location}`,
        locationName: location,
        clusterNames: clusters.map((c) => c.name),
        holds: this.holdsRun(),
        period: this.periodOf(this.plan.schedules),
        logGroup: this.logGroup,
        alarms: this.alarms ? [...this.alarms.pages, ...this.alarms.tickets] : [],
        perNodeClusters,
      }).dashboard;
    }

    new CfnOutput(this, 'RoleArn', { value: this.role.roleArn, description: 'The probe role: map it to a Kubernetes group (EKS access entry or aws-auth), see README step 4' });
    new CfnOutput(this, 'FunctionName', { value: this.function.functionName, description: 'The probe function, for aws lambda invoke' });
    new CfnOutput(this, 'PageTopicArn', { value: this.pageTopic.topicArn, description: 'Pages: kubectl is broken from this location' });
    new CfnOutput(this, 'TicketTopicArn', { value: this.ticketTopic.topicArn, description: 'Tickets: GA readiness and probe health' });

    // Findings cdk-nag (AwsSolutions) raises on purpose, each with its reason.
    Validations.of(this.role).acknowledge({
      id: 'AwsSolutions-IAM5[Action::kms:GenerateDataKey*]',
      reason: "A failed run is sent to the ticket topic, whose customer-managed key it must use to encrypt; GenerateDataKey* covers SNS's data-key calls, on that one key only.",
    });
  }

  /** UpgradeSuccess (0/1: upgraded and echoed) of one operation over one transport to one cluster. */
  metricUpgradeSuccess(cluster: string, operation: Operation, transport: Transport, props: MetricOptions = {}): cloudwatch.Metric {
    return this.metric('UpgradeSuccess', { Cluster: cluster, Operation: operation, Transport: transport }, { statistic: 'Minimum', ...props });
  }

  /** HoldSurvived (0/1: alive and echoing after the hold). */
  metricHoldSurvived(cluster: string, operation: Operation, transport: Transport, keepalive: KeepaliveMode, hold: Duration, props: MetricOptions = {}): cloudwatch.Metric {
    return this.metric('HoldSurvived', { Cluster: cluster, Operation: operation, Transport: transport, Keepalive: keepalive, HoldSeconds: String(hold.toSeconds()) }, { statistic: 'Minimum', ...props });
  }

  /** HandshakeLatency (ms, dial start to 101). @default statistic p50 */
  metricHandshakeLatency(cluster: string, operation: Operation, transport: Transport, props: MetricOptions = {}): cloudwatch.Metric {
    return this.metric('HandshakeLatency', { Cluster: cluster, Operation: operation, Transport: transport }, { statistic: 'p50', ...props });
  }

  /** KubectlWorks (0/1: today's kubectl works here, with its keepalive, through every hold). */
  metricKubectlWorks(cluster: string, operation: Operation, props: MetricOptions = {}): cloudwatch.Metric {
    return this.metric('KubectlWorks', { Cluster: cluster, Operation: operation }, { statistic: 'Minimum', ...props });
  }

  private metric(name: Parameters<typeof probeMetric>[0], dims: Record<string, string>, props: MetricOptions & { statistic: string }): cloudwatch.Metric {
    if (!this.plan.clusters.some((c) => c.name === dims.Cluster)) throw invalid('clusters', `have no cluster named "${dims.Cluster}" (metrics exist for ${this.plan.clusters.map((c) => c.name).join(', ')})`);
    return probeMetric(name, { Location: this.locationName, ...dims }, { period: props.period ?? this.periodOf(this.plan.schedules), statistic: props.statistic, label: props.label });
  }

  /** One run of the densest schedule: the period graphs and the metric helpers use (alarms use two runs, infra/alarms.ts). */
  private periodOf(schedules: readonly AlarmedSchedule[]): Duration {
    return Duration.seconds(runPeriodSeconds(Math.min(...schedules.map((s) => scheduleIntervalSeconds(s.expression)))));
  }

  /** Every (operation, keepalive, hold) some schedule runs. */
  private holdsRun(): { operation: Operation; keepalive: KeepaliveMode; holdSeconds: number }[] {
    const seen = new Map<string, { operation: Operation; keepalive: KeepaliveMode; holdSeconds: number }>();
    for (const s of this.plan.schedules) {
      for (const operation of s.operations) for (const keepalive of s.keepalives) for (const holdSeconds of s.holdsSeconds) seen.set(`${operation}/${keepalive}/${holdSeconds}`, { operation, keepalive, holdSeconds });
    }
    return [...seen.values()];
  }

  /**
   * What a runner (the function, the long-hold task) may do: PutMetricData in our namespace, GetSecretValue on
   * each secret, kms:Decrypt through Secrets Manager for their keys, DescribeCluster for EKS clusters without
   * caData, and an access entry where asked.
   */
  private grantProbeAccess(props: StreamProbeProps, stack: Stack, role: iam.Role, entryId: string): void {
    role.addToPolicy(new iam.PolicyStatement({ actions: ['cloudwatch:PutMetricData'], resources: ['*'], conditions: { StringEquals: { 'cloudwatch:namespace': METRIC_NAMESPACE } } }));
    Validations.of(role).acknowledge({
      id: 'AwsSolutions-IAM5[Resource::*]',
      reason: 'cloudwatch:PutMetricData has no resource-level permissions; it is limited to the KubeStreamProbe namespace by the cloudwatch:namespace condition.',
    });
    const secrets = props.clusters.flatMap((c) => (c.auth.type === 'secret' ? [c.auth.secret] : []));
    if (secrets.length) role.addToPolicy(new iam.PolicyStatement({ actions: ['secretsmanager:GetSecretValue'], resources: secrets.map((s) => s.secretArn) }));
    for (const secret of secrets) {
      if (!secret.encryptionKey) continue;
      // Secrets Manager decrypts with the caller's rights, and only on its behalf; in the secret's own region
      // (CDK's grantRead would name the stack's region, wrong for a secret in another one).
      const region = Token.isUnresolved(secret.secretArn) ? stack.region : regionOfArn(secret.secretArn);
      role.addToPolicy(
        new iam.PolicyStatement({ actions: ['kms:Decrypt'], resources: [secret.encryptionKey.keyArn], conditions: { StringEquals: { 'kms:ViaService': `secretsmanager.${region}.amazonaws.com` } } }),
      );
    }
    const describe = props.clusters.flatMap((c) =>
      c.auth.type === 'eks' && !c.caData ? [stack.formatArn({ service: 'eks', resource: 'cluster', resourceName: c.auth.clusterName, region: c.auth.region ?? stack.region })] : [],
    );
    if (describe.length) role.addToPolicy(new iam.PolicyStatement({ actions: ['eks:DescribeCluster'], resources: describe }));
    for (const c of props.clusters) {
      if (c.auth.type !== 'eks' || !c.auth.accessEntryGroup) continue;
      // The probe role in a Kubernetes group of the cluster; `kube-stream-probe manifest --group` binds the group's least-privilege Role.
      new eks.CfnAccessEntry(this, `${entryId}-${c.name}`, { clusterName: c.auth.clusterName, principalArn: role.roleArn, kubernetesGroups: [c.auth.accessEntryGroup], type: 'STANDARD' });
    }
  }

  /** The schedules, in a group of their own (its Scheduler metrics are this location's), with a role that may invoke only this function. */
  private schedules(stack: Stack): scheduler.ScheduleGroup {
    // Deleted with the stack: it holds only our schedules, and a retained group of this fixed name would make the next deploy fail.
    const group = new scheduler.ScheduleGroup(this, 'ScheduleGroup', { scheduleGroupName: `${this.plan.project}-${this.locationName}`, removalPolicy: RemovalPolicy.DESTROY });
    const schedulerRole = new iam.Role(this, 'SchedulerRole', {
      assumedBy: new iam.ServicePrincipal('scheduler.amazonaws.com', { conditions: { StringEquals: { 'aws:SourceAccount': stack.account } } }),
      description: `kube-stream-probe ${this.locationName}: EventBridge Scheduler invokes the probe`,
    });
    const functionLogicalId = stack.getLogicalId(this.function.node.defaultChild as lambda.CfnFunction);
    Validations.of(schedulerRole).acknowledge({
      id: `AwsSolutions-IAM5[Resource::<${functionLogicalId}.Arn>:*]`,
      reason: "CDK's invoke grant covers this one function's versions and aliases (its ARN followed by :*); no other function.",
    });
    for (const s of this.plan.schedules) {
      const holds = s.holdsSeconds.map((h) => `${h}s`);
      const event = { schedule: s.name, holds, keepalives: s.keepalives, operations: s.operations };
      const target =
        s.runner === 'task'
          ? this.taskTarget(s.name, event, Math.max(...s.holdsSeconds), schedulerRole)
          : new targets.LambdaInvoke(this.function, { input: scheduler.ScheduleTargetInput.fromObject(event), retryAttempts: 0, role: schedulerRole });
      const schedule = new scheduler.Schedule(this, `Schedule-${s.name}`, {
        scheduleGroup: group,
        description: `kube-stream-probe ${this.locationName}: holds ${holds.join(', ')}${s.runner === 'task' ? ' (ECS Fargate task: longer than a Lambda run)' : ''}`,
        schedule: scheduler.ScheduleExpression.expression(s.expression),
        target,
      });
      // The group is named by a literal, which makes no reference: without this CloudFormation may create a
      // schedule before its group, and CreateSchedule fails (ResourceNotFoundException).
      schedule.node.addDependency(group);
      this.schedulesByName.set(s.name, schedule);
    }
    return group;
  }

  /**
   * A schedule whose holds outlast a Lambda run, as an ECS Fargate task: the same engine (functions/task.ts, built
   * into an image at deploy time), the same configuration and metrics, in the location's subnets and security
   * groups, with a task role holding the same least privilege, logging to the same log group.
   */
  private taskTarget(name: string, event: object, longestHold: number, schedulerRole: iam.Role): targets.EcsRunFargateTask {
    const runner = (this.taskRunner ??= this.createTaskRunner());
    const taskSeconds = taskRunSeconds(longestHold);
    const definition = new ecs.FargateTaskDefinition(this, `Task-${name}`, {
      // `invoke` finds a location's task by this family prefix, and runs it in its cluster (src/aws/task-invoke.ts).
      family: `${this.plan.project}-${this.locationName}-${name}`,
      cpu: 256,
      memoryLimitMiB: 512,
      runtimePlatform: { cpuArchitecture: ecs.CpuArchitecture.ARM64, operatingSystemFamily: ecs.OperatingSystemFamily.LINUX },
      taskRole: runner.role,
    });
    this.taskDefinitions.set(name, definition);
    definition.addContainer('probe', {
      image: runner.image,
      logging: ecs.LogDrivers.awsLogs({ logGroup: this.logGroup, streamPrefix: 'task' }),
      environment: {
        KSP_LOCATION_CONFIG: this.envJson,
        KSP_EVENT: JSON.stringify(event),
        KSP_TASK_SECONDS: String(taskSeconds),
        // Where an ad hoc run (`invoke`) starts this task: the schedule's own subnets and security groups.
        KSP_NETWORK: Stack.of(this).toJsonString({ subnets: this.props.subnets!.map((s) => s.subnetId), securityGroups: this.network!.securityGroups.map((g) => g.securityGroupId) }),
        NODE_OPTIONS: '--enable-source-maps',
      },
      stopTimeout: Duration.seconds(30),
      readonlyRootFilesystem: true,
    });
    Validations.of(definition.obtainExecutionRole()).acknowledge({
      id: 'AwsSolutions-IAM5[Resource::*]',
      reason: 'The execution role pulls the task image: ecr:GetAuthorizationToken has no resource-level permissions (CDK scopes the pull itself to the asset repository).',
    });
    Validations.of(definition).acknowledge({
      id: 'AwsSolutions-ECS2',
      reason: 'The environment holds the location configuration (cluster endpoints, secret ARNs, never a secret value) and the run plan, as the Lambda does.',
    });
    return new targets.EcsRunFargateTask(runner.cluster, {
      taskDefinition: definition,
      vpcSubnets: { subnets: [...this.props.subnets!] },
      securityGroups: this.network!.securityGroups,
      assignPublicIp: false,
      retryAttempts: 0,
      role: schedulerRole,
    });
  }

  private createTaskRunner(): { cluster: ecs.Cluster; role: iam.Role; image: ecs.ContainerImage } {
    const stack = Stack.of(this);
    const cluster = new ecs.Cluster(this, 'TaskCluster', { vpc: this.props.vpc!, clusterName: `${this.plan.project}-${this.locationName}`, containerInsightsV2: ecs.ContainerInsights.DISABLED });
    Validations.of(cluster).acknowledge({
      id: 'AwsSolutions-ECS4',
      reason: 'The task publishes its own measurements (the probe metrics) and logs; Container Insights would add per-task cost for CPU graphs of an idle hold.',
    });
    const role = new iam.Role(this, 'TaskRole', {
      assumedBy: new iam.ServicePrincipal('ecs-tasks.amazonaws.com', { conditions: { StringEquals: { 'aws:SourceAccount': stack.account } } }),
      description: `kube-stream-probe ${this.locationName}: the long-hold task, same least privilege as the function`,
    });
    this.grantProbeAccess(this.props, stack, role, 'TaskAccessEntry');
    // The context is the repository root cut down by its .dockerignore to what the bundle is built from.
    const image = ecs.ContainerImage.fromAsset(fileURLToPath(new URL('..', import.meta.url)), { file: 'container/Dockerfile', platform: Platform.LINUX_ARM64 });
    return { cluster, role, image };
  }

  /**
   * A long-hold task that stops without finishing its run is a ticket, as a failed Lambda run is: it failed to
   * start (image pull, capacity, network: stopCode TaskFailedToStart…) or its container exited non-zero (the
   * run itself failed; a broken path is a finding, published, and exits 0: functions/task.ts). Without this a
   * broken task runner would only show as missing hold metrics, which alarm on no one. An EventBridge rule on
   * ECS Task State Change for the task cluster (fields: docs.aws.amazon.com/AmazonECS/latest/developerguide/
   * ecs_task_events.html), to the ticket topic; a task stopped by a person (UserInitiated) is not a ticket.
   */
  private taskFailureTickets(cluster: ecs.Cluster, ownTopic: boolean): void {
    const field = (path: string) => events.EventField.fromPath(path);
    const rule = new events.Rule(this, 'TaskFailed', {
      description: `kube-stream-probe ${this.locationName}: a long-hold task stopped without finishing its run`,
      eventPattern: {
        source: ['aws.ecs'],
        detailType: ['ECS Task State Change'],
        detail: {
          clusterArn: [cluster.clusterArn],
          lastStatus: ['STOPPED'],
          $or: [{ stopCode: [{ 'anything-but': ['EssentialContainerExited', 'UserInitiated'] }] }, { containers: { exitCode: [{ 'anything-but': 0 }] } }],
        },
      },
    });
    // Not CDK's SnsTopic target: it admits events.amazonaws.com to the topic with no condition (any rule of any
    // account could publish). This rule's ARN as aws:SourceArn instead (infra/topic-access.ts).
    admitPublisher(this, this.ticketTopic, ownTopic, eventBridgeRulePublisher(Stack.of(this), rule.ruleArn));
    rule.addTarget(
      snsRuleTarget(this.ticketTopic, {
        message: events.RuleTargetInput.fromText(
          `kube-stream-probe ${this.locationName}: a long-hold task stopped without finishing its run (${field('$.detail.stopCode')}: ${field('$.detail.stoppedReason')}; exit code ${field('$.detail.containers[0].exitCode')}), so its holds were not measured. Task ${field('$.detail.taskArn')} of ${field('$.detail.taskDefinitionArn')}: see the log group ${this.logGroup.logGroupName} (streams task/…) and the cluster's stopped tasks in the ECS console.`,
        ),
      }),
    );
    Validations.of(rule).acknowledge({
      id: 'Serverless-EventBusDLQ',
      reason: "The rule's one target is the ticket topic; a ticket it cannot deliver shows in the rule's FailedInvocations metric and the task's own stopped state, and a queue of undelivered tickets would have no reader.",
    });
  }

  private topic(id: string, displayName: string, masterKey: kms.IKey | undefined, email: string | undefined): sns.ITopic {
    const topic = new sns.Topic(this, id, { displayName, enforceSSL: true, masterKey });
    if (email) {
      topic.addSubscription(new subs.EmailSubscription(email));
      for (const s of topic.node.findAll().filter((c) => c instanceof sns.Subscription)) {
        Validations.of(s).acknowledge({
          id: 'Serverless-SNSRedrivePolicy',
          reason: 'An email subscription: SNS retries it under its delivery policy, and an undeliverable alarm mail stays visible as the alarm state in CloudWatch; a queue of lost e-mails would have no reader.',
        });
      }
    }
    return topic;
  }

  /**
   * The topics' key. CloudWatch cannot use the AWS-managed SNS key (alias/aws/sns): its key policy
   * admits no other service, so every alarm action would fail. A customer-managed key whose policy lets
   * cloudwatch.amazonaws.com use it, for alarms in this account only.
   * (https://docs.aws.amazon.com/AmazonCloudWatch/latest/monitoring/AlarmThatSendsEmail.html#Encrypted_SNS_topic)
   */
  private topicKey(): kms.Key {
    const stack = Stack.of(this);
    const key = new kms.Key(this, 'AlarmTopicKey', { enableKeyRotation: true, description: 'kube-stream-probe: encrypts the page and ticket topics; CloudWatch alarms may use it' });
    // The services that publish to the topics must use the key too (the topic policy is the other gate).
    if (this.plan.alarms) key.addToResourcePolicy(keyStatementFor(cloudWatchAlarmsPublisher(stack, alarmArnPattern(stack, this.plan.project, this.locationName))));
    // The long-hold tasks' failures reach the ticket topic through EventBridge: https://repost.aws/knowledge-center/sns-not-getting-eventbridge-notification
    if (this.taskRunner) key.addToResourcePolicy(keyStatementFor(eventBridgeRulePublisher(stack, undefined)));
    return key;
  }
}

export interface MetricOptions {
  /** @default - one run of the densest schedule */
  readonly period?: Duration;
  readonly statistic?: string;
  readonly label?: string;
}

function invalid(prop: string, rule: string): Error {
  return probeError('CONFIG_INVALID', `StreamProbe props: ${prop} ${rule}`, { field: prop });
}

/** The props, checked as a deploy would check them, each failure naming the prop. */
function validate(props: StreamProbeProps, stackRegion: string): Plan {
  const project = props.project ?? DEFAULT_PROJECT;
  if (!NAME_PATTERN.test(project)) throw invalid('project', `"${project}" must be lower-case letters, digits and "-" (at most 40)`);
  if (!NAME_PATTERN.test(props.locationName)) throw invalid('locationName', `"${props.locationName}" must be lower-case letters, digits and "-" (at most 40)`);
  const fnName = `${project}-${props.locationName}`;
  if (fnName.length > MAX_FUNCTION_NAME_LENGTH) throw invalid('locationName', `makes the function name ${fnName} ${fnName.length} characters long; Lambda allows ${MAX_FUNCTION_NAME_LENGTH}`);
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
      throw invalid(`${f}.auth.accessEntryGroup`, `needs the cluster in the stack's region (${stackRegion}), not ${c.auth.region}: create the access entry there with aws eks create-access-entry`);
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
    if (problem) throw invalid(`${f}.expression`, `"${s.expression}" ${problem} (alarms.evaluationPeriods is ${alarmOptions && alarmOptions.evaluationPeriods})`);
    if (s.holds.length === 0) throw invalid(`${f}.holds`, 'is empty (Duration.seconds(0) probes without holding)');
    const holdsSeconds = s.holds.map((h, j) => {
      const seconds = h.toSeconds({ integral: false });
      if (!Number.isInteger(seconds) || seconds < 0) throw invalid(`${f}.holds[${j}]`, `${h.toHumanString()} is not a whole number of seconds`);
      if (seconds > taskMaxHold) throw invalid(`${f}.holds[${j}]`, `${h.toHumanString()} is longer than the task runner's ${taskMaxHold} s (taskMaxHold); holds up to ${LAMBDA_MAX_HOLD_SECONDS} s run in Lambda`);
      return seconds;
    });
    const longest = Math.max(...holdsSeconds);
    const runner = longest > LAMBDA_MAX_HOLD_SECONDS ? ('task' as const) : ('lambda' as const);
    if (runner === 'task') {
      if (!props.vpc) throw invalid(`${f}.holds`, `hold ${longest} s is longer than a Lambda run allows (${LAMBDA_MAX_HOLD_SECONDS} s): it runs as an ECS Fargate task, which needs vpc and subnets`);
      // A run must end before the next one starts: two tasks holding at once would measure each other's load.
      const gap = shortestIntervalSeconds(s.expression, `StreamProbe props: ${f}.expression`);
      if (taskRunSeconds(longest) >= gap) throw invalid(`${f}.expression`, `"${s.expression}" starts a run every ${gap} s, but a run holding ${longest} s lasts up to ${taskRunSeconds(longest)} s: runs would overlap`);
    }
    return { name: s.name, expression: s.expression, holdsSeconds, keepalives: [...(s.keepalives ?? ['kubectl'])], operations: [...(s.operations ?? OPERATIONS)], runner };
  });
  if (props.vpc && (!props.subnets || props.subnets.length === 0)) throw invalid('subnets', 'are required with vpc: the subnets for the function (and created endpoints)');
  if (!props.vpc && (props.subnets || props.securityGroups || props.apiServerPeers || props.interfaceEndpoints)) {
    throw invalid('vpc', 'is required with subnets, securityGroups, apiServerPeers or interfaceEndpoints');
  }
  if (props.memorySize !== undefined && (!Number.isInteger(props.memorySize) || props.memorySize < 128 || props.memorySize > 10240)) throw invalid('memorySize', `${props.memorySize} must be 128-10240 MB`);
  if (props.pageEmail && props.pageTopic) throw invalid('pageEmail', 'only subscribes to the topic the construct creates; subscribe it to your pageTopic yourself');
  if (props.ticketEmail && props.ticketTopic) throw invalid('ticketEmail', 'only subscribes to the topic the construct creates; subscribe it to your ticketTopic yourself');
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
    throw invalid('s3Gateway.prefixListId', `"${prefixListId}" is required and must be a prefix list id: ${why}, and the task's security group reaches S3 only by its prefix list (aws ec2 describe-managed-prefix-lists --filters Name=prefix-list-name,Values=com.amazonaws.REGION.s3)`);
  }
  if (mode !== 'create') {
    if (props.s3Gateway?.routeTableIds) throw invalid('s3Gateway.routeTableIds', 'are only used with interfaceEndpoints "create": with existing endpoints the S3 gateway endpoint must exist already');
    return { prefixListId, routeTableIds: [] };
  }
  const routeTableIds = props.s3Gateway?.routeTableIds ?? props.subnets!.map((s) => s.routeTable?.routeTableId);
  if (routeTableIds.length === 0 || routeTableIds.some((id) => id === undefined)) {
    throw invalid('s3Gateway.routeTableIds', `are required: ${why}, made in the subnets' route tables, and these subnets do not say theirs (imported subnets do not know them: give their route table ids)`);
  }
  return { prefixListId, routeTableIds: [...new Set(routeTableIds as string[])] };
}
