/**
 * StreamProbe: everything one network location needs to probe its clusters on
 * a schedule: the probe Lambda (in the location's VPC when given), EventBridge
 * Scheduler schedules in a group of their own, a least-privilege role, a log
 * group with retention, alarms by severity (infra/alarms.ts) on a page and a
 * ticket topic, and a dashboard (infra/dashboard.ts). Props: infra/props.ts.
 */
import { CfnOutput, Duration, Stack, Validations } from 'aws-cdk-lib';
import type * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import type * as ecs from 'aws-cdk-lib/aws-ecs';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import * as destinations from 'aws-cdk-lib/aws-lambda-destinations';
import { NodejsFunction } from 'aws-cdk-lib/aws-lambda-nodejs';
import * as logs from 'aws-cdk-lib/aws-logs';
import * as scheduler from 'aws-cdk-lib/aws-scheduler';
import * as sns from 'aws-cdk-lib/aws-sns';
import { Construct } from 'constructs';
import { LAMBDA_MAX_SECONDS, lambdaRunSeconds } from '../src/config/lambda-limits.js';
import { holdSpan } from '../src/config/plan.js';
import { defaultMemoryMb, type LocationRuntimeConfig } from '../src/config/probe-config.js';
import { PROBE_PROCESS_ENV } from '../src/config/process-env.js';
import { encodeRuntimeConfig } from '../src/config/runtime-config.js';
import { checkResourceCount } from './stack-limits.js';
import { PACKAGED, PROBE_BUNDLING, PROBE_ENTRY, PROBE_HANDLER, packagedDir } from './probe-code.js';
import { runPeriodSeconds, scheduleIntervalSeconds } from '../src/config/schedule.js';
import type { KeepaliveMode, Operation, Transport } from '../src/vocabulary.js';
import { METRIC_KEEPALIVES } from '../src/metrics/contract.js';
import { SLO_OBJECTIVE_DEFAULT } from '../src/metrics/slo.js';
import { ProbeAlarms, type AlarmedSchedule } from './alarms.js';
import { ProbeDashboard } from './dashboard.js';
import { ProbeNotifier } from './notifier.js';
import type * as kms from 'aws-cdk-lib/aws-kms';
import { probeMetric } from './metrics.js';
import { ProbeNetwork } from './network.js';
import { grantProbeAccess } from './probe-access.js';
import type { StreamProbeProps } from './props.js';
import { probeSchedules } from './schedules.js';
import { TaskRunner } from './task-runner.js';
import { admitPublisher, alarmArnPattern, cloudWatchAlarmsPublisher, encryptedTopic, topicKey } from './topic-access.js';
import { invalid, validate, type Plan } from './validate.js';

export type { ProbeAlarmOptions, ProbeCluster, ProbeClusterAuth, ProbeSchedule, StreamProbeProps } from './props.js';

/** Lambda environment variables are limited to 4 KB in total. */
export const MAX_ENV_BYTES = 3500;

/**
 * The function's runtime, named, so that a CDK upgrade never changes it behind a deploy. The bundle
 * targets Node 20, so any Node.js runtime from 22 on runs it; 24 is supported longest.
 */
export const PROBE_RUNTIME = lambda.Runtime.NODEJS_24_X;

export class StreamProbe extends Construct {
  /** The probe function (a NodejsFunction built at synth from a clone; prebuilt code in the npm package). */
  readonly function: lambda.Function;
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
  /** Sends the pages and the tickets with evidence, with the failed run's diagnosis (undefined with `alarms: false`). */
  readonly notifier?: ProbeNotifier;
  readonly dashboard?: cloudwatch.Dashboard;
  readonly locationName: string;
  /** The schedules by their configured name. */
  readonly schedulesByName = new Map<string, scheduler.Schedule>();
  /** The long-hold schedules' task definitions by schedule name (empty without a task runner). */
  get taskDefinitions(): ReadonlyMap<string, ecs.FargateTaskDefinition> {
    return this.taskRunner?.definitions ?? new Map();
  }
  private readonly plan: Plan;
  private readonly props: StreamProbeProps;
  private readonly envJson: string;
  private taskRunner: TaskRunner | undefined;
  /** The topics' key, when the construct made the topics. */
  private topicsKey: kms.IKey | undefined;

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
    this.locationName = props.locationName;
    this.envJson = this.runtimeEnvironment(stack);
    const timeout = Duration.seconds(Math.min(LAMBDA_MAX_SECONDS, lambdaRunSeconds(this.plan.holdSpan, this.plan.longestTransferMs)));
    // Retained with the stack's destroy (the logs outlive it), so its name is CloudFormation's: a fixed
    // name would make the next deploy fail on the log group left behind.
    this.logGroup = new logs.LogGroup(this, 'Logs', { retention: props.logRetention ?? logs.RetentionDays.ONE_MONTH });
    this.role = this.probeRole();
    this.network = props.vpc ? this.probeNetwork() : undefined;
    this.function = this.probeFunction(timeout);
    this.scheduleGroup = this.schedules(stack);
    const topics = this.topics(stack);
    this.pageTopic = topics.page;
    this.ticketTopic = topics.ticket;
    this.taskRunner?.failureTickets(this.ticketTopic, !props.ticketTopic);
    this.failedRunsTicketed();
    this.alarms = this.plan.alarms ? this.probeAlarms(this.plan.alarms, timeout) : undefined;
    this.notifier = this.alarms?.notified.length ? this.probeNotifier(this.alarms) : undefined;
    this.dashboard = props.dashboard !== false ? this.probeDashboard() : undefined;
    this.outputs();
    // A location too large for one stack is refused here, naming the fix, rather than by CloudFormation at deploy.
    checkResourceCount(this, this.plan.clusters.length);
  }

  /** KSP_LOCATION_CONFIG: as JSON while it fits, compressed past that (a 50-cluster location); parseRuntimeConfig reads either. */
  private runtimeEnvironment(stack: Stack): string {
    const { project, clusters } = this.plan;
    const runtimeConfig: LocationRuntimeConfig = { project, location: this.locationName, region: stack.region, clusters };
    const envJson = encodeRuntimeConfig(runtimeConfig, MAX_ENV_BYTES);
    if (Buffer.byteLength(envJson) > MAX_ENV_BYTES) {
      throw invalid(
        'clusters',
        `are ${Buffer.byteLength(JSON.stringify(runtimeConfig))} bytes of configuration (${Buffer.byteLength(envJson)} compressed); Lambda allows about ${MAX_ENV_BYTES} of environment. Drop caData (it is read with eks:DescribeCluster) or split the clusters over locations`,
      );
    }
    return envJson;
  }

  private probeRole(): iam.Role {
    const role = new iam.Role(this, 'Role', {
      assumedBy: new iam.ServicePrincipal('lambda.amazonaws.com'),
      description: `kube-stream-probe ${this.locationName}: metrics for its namespace, its secrets, its clusters`,
    });
    role.addToPolicy(new iam.PolicyStatement({ actions: ['logs:CreateLogStream', 'logs:PutLogEvents'], resources: [this.logGroup.logGroupArn] }));
    grantProbeAccess(this, this.props, role, 'AccessEntry');
    // Findings cdk-nag (AwsSolutions) raises on purpose, each with its reason.
    Validations.of(role).acknowledge({
      id: 'AwsSolutions-IAM5[Action::kms:GenerateDataKey*]',
      reason:
        "A failed run is sent to the ticket topic, whose customer-managed key it must use to encrypt; GenerateDataKey* covers SNS's data-key calls, on that one key only.",
    });
    return role;
  }

  private probeNetwork(): ProbeNetwork {
    const props = this.props;
    const network = new ProbeNetwork(this, 'Network', {
      locationName: this.locationName,
      vpc: props.vpc!,
      subnets: props.subnets!,
      clusters: this.plan.clusters,
      securityGroups: props.securityGroups,
      apiServerPeers: props.apiServerPeers,
      interfaceEndpoints: props.interfaceEndpoints,
      taskRunner: this.plan.schedules.some((s) => s.runner === 'task'),
      s3Gateway: this.plan.s3Gateway,
    });
    // CDK adds this policy only to roles it creates; without it CreateFunction fails: the role cannot make the function's network interfaces.
    this.role.addManagedPolicy(iam.ManagedPolicy.fromAwsManagedPolicyName('service-role/AWSLambdaVPCAccessExecutionRole'));
    Validations.of(this.role).acknowledge({
      id: 'AwsSolutions-IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/AWSLambdaVPCAccessExecutionRole]',
      reason:
        'AWSLambdaVPCAccessExecutionRole is what Lambda needs to create its network interfaces in the location VPC; those EC2 actions take no resource scope.',
    });
    return network;
  }

  private probeFunction(timeout: Duration): lambda.Function {
    const { props, network, locationName: location } = this;
    const vpcProps: Partial<lambda.FunctionProps> = network
      ? { vpc: props.vpc, vpcSubnets: { subnets: [...props.subnets!] }, securityGroups: network.securityGroups }
      : {};
    const common = {
      functionName: `${this.plan.project}-${location}`,
      description: `kube-stream-probe for location ${location}: exec and port-forward over SPDY and WebSocket`,
      runtime: PROBE_RUNTIME,
      architecture: lambda.Architecture.ARM_64,
      memorySize: props.memorySize ?? defaultMemoryMb(this.plan.sessionStarts),
      timeout,
      role: this.role,
      logGroup: this.logGroup,
      environment: { KSP_LOCATION_CONFIG: this.envJson, NODE_OPTIONS: '--enable-source-maps', ...PROBE_PROCESS_ENV },
      ...vpcProps,
    };
    // The npm package ships the bundle prebuilt with PROBE_BUNDLING (infra/probe-code.ts); an explicit entry is built.
    if (PACKAGED && props.entry === undefined)
      return new lambda.Function(this, 'Function', { ...common, code: lambda.Code.fromAsset(packagedDir('lambda')), handler: `index.${PROBE_HANDLER}` });
    return new NodejsFunction(this, 'Function', {
      ...common,
      entry: props.entry ?? PROBE_ENTRY,
      handler: PROBE_HANDLER,
      bundling: { ...PROBE_BUNDLING, mainFields: [...PROBE_BUNDLING.mainFields], externalModules: [...PROBE_BUNDLING.externalModules] },
    });
  }

  private schedules(stack: Stack): scheduler.ScheduleGroup {
    return probeSchedules(this, {
      stack,
      project: this.plan.project,
      locationName: this.locationName,
      schedules: this.plan.schedules,
      fn: this.function,
      byName: this.schedulesByName,
      // The task runner is made only for a schedule that needs it.
      taskTarget: (s, event, role) =>
        (this.taskRunner ??= new TaskRunner(this, {
          project: this.plan.project,
          locationName: this.locationName,
          props: this.props,
          network: this.network!,
          logGroup: this.logGroup,
          envJson: this.envJson,
        })).target(s.name, event, holdSpan(s), role, s.transferMs),
    });
  }

  /**
   * The page and ticket topics (the props' own, or encrypted ones made here) and their policies: enforceSSL makes CDK
   * write a TopicPolicy, which *replaces* SNS's default policy, so every service that publishes must be admitted by
   * name (infra/topic-access.ts).
   */
  private topics(stack: Stack): { page: sns.ITopic; ticket: sns.ITopic } {
    const { props, locationName: location } = this;
    const { project } = this.plan;
    const key =
      !props.pageTopic || !props.ticketTopic
        ? topicKey(this, { project, location, alarms: this.plan.alarms !== false, eventBridge: this.taskRunner !== undefined })
        : undefined;
    this.topicsKey = key;
    const page = props.pageTopic ?? encryptedTopic(this, 'PageTopic', `kube-stream-probe pages (${location})`, key, props.pageEmail);
    const ticket = props.ticketTopic ?? encryptedTopic(this, 'TicketTopic', `kube-stream-probe tickets (${location})`, key, props.ticketEmail);
    const alarmArns = this.plan.alarms ? alarmArnPattern(stack, project, location) : undefined;
    if (alarmArns) {
      admitPublisher(this, page, !props.pageTopic, cloudWatchAlarmsPublisher(stack, alarmArns));
      admitPublisher(this, ticket, !props.ticketTopic, cloudWatchAlarmsPublisher(stack, alarmArns));
    }
    return { page, ticket };
  }

  /** Scheduler invokes asynchronously: Lambda would retry a failed run twice, overlapping the next one. A failed run is a ticket instead. */
  private failedRunsTicketed(): void {
    // CDK grants the role sns:Publish and the key.
    this.function.configureAsyncInvoke({ retryAttempts: 0, maxEventAge: Duration.hours(1), onFailure: new destinations.SnsDestination(this.ticketTopic) });
    Validations.of(this.function).acknowledge({
      id: 'Serverless-LambdaDLQ',
      reason:
        'Failed asynchronous runs go to an on-failure destination (the ticket topic) with retries off, which carries the request and the error; a dead-letter queue would duplicate it.',
    });
    Validations.of(this.function).acknowledge({
      id: 'Serverless-LambdaTracing',
      reason:
        "Each run's timings are its product and are published as metrics and structured log lines; X-Ray would add cost per run and CPU inside the function whose handshake latency it measures.",
    });
  }

  private probeAlarms(options: Exclude<Plan['alarms'], false>, timeout: Duration): ProbeAlarms {
    const { clusters } = this.plan;
    return new ProbeAlarms(this, 'Alarms', {
      project: this.plan.project,
      locationName: this.locationName,
      clusterNames: clusters.map((c) => c.name),
      perNodeClusters: clusters.filter((c) => c.target.perNode).map((c) => c.name),
      schedules: this.plan.schedules,
      ...options,
      fn: this.function,
      logGroupName: this.logGroup.logGroupName,
      timeout,
      scheduleGroupName: this.scheduleGroup.scheduleGroupName,
      pageTopic: this.pageTopic,
      ticketTopic: this.ticketTopic,
    });
  }

  private probeNotifier(alarms: ProbeAlarms): ProbeNotifier {
    return new ProbeNotifier(this, 'Notifier', {
      project: this.plan.project,
      locationName: this.locationName,
      runtime: PROBE_RUNTIME,
      probeLogGroup: this.logGroup,
      pageTopic: this.pageTopic,
      ticketTopic: this.ticketTopic,
      topicKey: this.topicsKey,
      alarms: alarms.notified,
      logRetention: this.props.logRetention ?? logs.RetentionDays.ONE_MONTH,
      entry: this.props.entry,
      forwardPages: this.props.forwardPages,
    });
  }

  private probeDashboard(): cloudwatch.Dashboard {
    const { clusters } = this.plan;
    return new ProbeDashboard(this, 'Dashboard', {
      dashboardName: `${this.plan.project}-${this.locationName}`,
      locationName: this.locationName,
      sloObjective: this.plan.alarms ? this.plan.alarms.sloObjective : SLO_OBJECTIVE_DEFAULT,
      clusterNames: clusters.map((c) => c.name),
      holds: this.holdsRun(),
      period: this.periodOf(this.plan.schedules),
      logGroup: this.logGroup,
      alarms: this.alarms ? [...this.alarms.pages, ...this.alarms.tickets] : [],
      perNodeClusters: clusters.filter((c) => c.target.perNode).map((c) => c.name),
      transfers: this.plan.schedules.some((s) => s.transferBytes),
    }).dashboard;
  }

  private outputs(): void {
    new CfnOutput(this, 'RoleArn', {
      value: this.role.roleArn,
      description: 'The probe role: map it to a Kubernetes group (EKS access entry or aws-auth), see README step 4',
    });
    new CfnOutput(this, 'FunctionName', { value: this.function.functionName, description: 'The probe function, for aws lambda invoke' });
    new CfnOutput(this, 'PageTopicArn', { value: this.pageTopic.topicArn, description: 'Pages: kubectl is broken from this location' });
    new CfnOutput(this, 'TicketTopicArn', { value: this.ticketTopic.topicArn, description: 'Tickets: GA readiness and probe health' });
  }

  /** UpgradeSuccess (0/1: upgraded and echoed) of one operation over one transport to one cluster. */
  metricUpgradeSuccess(cluster: string, operation: Operation, transport: Transport, props: MetricOptions = {}): cloudwatch.Metric {
    return this.metric('UpgradeSuccess', { Cluster: cluster, Operation: operation, Transport: transport }, { statistic: 'Minimum', ...props });
  }

  /** HoldSurvived (0/1: alive and echoing after the hold). */
  metricHoldSurvived(
    cluster: string,
    operation: Operation,
    transport: Transport,
    keepalive: KeepaliveMode,
    hold: Duration,
    props: MetricOptions = {},
  ): cloudwatch.Metric {
    return this.metric(
      'HoldSurvived',
      { Cluster: cluster, Operation: operation, Transport: transport, Keepalive: keepalive, HoldSeconds: String(hold.toSeconds()) },
      { statistic: 'Minimum', ...props },
    );
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
    if (!this.plan.clusters.some((c) => c.name === dims.Cluster))
      throw invalid('clusters', `have no cluster named "${dims.Cluster}" (metrics exist for ${this.plan.clusters.map((c) => c.name).join(', ')})`);
    return probeMetric(
      name,
      { Location: this.locationName, ...dims },
      { period: props.period ?? this.periodOf(this.plan.schedules), statistic: props.statistic, label: props.label },
    );
  }

  /** One run of the densest schedule: the period graphs and the metric helpers use (alarms use two runs, infra/alarms.ts). */
  private periodOf(schedules: readonly AlarmedSchedule[]): Duration {
    return Duration.seconds(runPeriodSeconds(Math.min(...schedules.map((s) => scheduleIntervalSeconds(s.expression)))));
  }

  /** Every (operation, keepalive, hold) some schedule runs and publishes. */
  private holdsRun(): { operation: Operation; keepalive: KeepaliveMode; holdSeconds: number }[] {
    const seen = new Map<string, { operation: Operation; keepalive: KeepaliveMode; holdSeconds: number }>();
    for (const s of this.plan.schedules) {
      for (const operation of s.operations)
        for (const keepalive of s.keepalives.filter((k) => METRIC_KEEPALIVES.includes(k)))
          for (const holdSeconds of s.holdsSeconds) seen.set(`${operation}/${keepalive}/${holdSeconds}`, { operation, keepalive, holdSeconds });
    }
    return [...seen.values()];
  }
}

export interface MetricOptions {
  /** @default - one run of the densest schedule */
  readonly period?: Duration;
  readonly statistic?: string;
  readonly label?: string;
}
