/**
 * StreamProbe: everything one network location needs to probe its clusters on
 * a schedule: the probe Lambda (in the location's VPC when given), EventBridge
 * Scheduler schedules, a least-privilege role, a log group with retention,
 * alarms wired to an SNS topic, and a dashboard. Usable in any CDK app.
 */
import { fileURLToPath } from 'node:url';
import { CfnOutput, Duration, Stack, Validations } from 'aws-cdk-lib';
import * as eks from 'aws-cdk-lib/aws-eks';
import * as destinations from 'aws-cdk-lib/aws-lambda-destinations';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import * as cwActions from 'aws-cdk-lib/aws-cloudwatch-actions';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as kms from 'aws-cdk-lib/aws-kms';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import { NodejsFunction, OutputFormat } from 'aws-cdk-lib/aws-lambda-nodejs';
import * as logs from 'aws-cdk-lib/aws-logs';
import * as scheduler from 'aws-cdk-lib/aws-scheduler';
import * as targets from 'aws-cdk-lib/aws-scheduler-targets';
import * as sns from 'aws-cdk-lib/aws-sns';
import * as subs from 'aws-cdk-lib/aws-sns-subscriptions';
import { Construct } from 'constructs';
import {
  functionMemoryMb,
  runtimeConfigFor,
  scheduleIntervalSeconds,
  type LocationConfig,
  type ProbeConfig,
  type ScheduleConfig,
} from '../src/config/probe-config.js';
import { LAMBDA_MAX_SECONDS, lambdaRunSeconds } from '../src/config/lambda-limits.js';
import { probeError } from '../src/errors.js';
import { regionOfArn } from '../src/aws/arn.js';
import { METRIC_NAMESPACE } from '../src/metrics/contract.js';
import { OPERATIONS, TRANSPORTS, parseDurationSeconds } from '../src/vocabulary.js';
import { ProbeNetwork } from './network.js';
import { probeMetric } from './metrics.js';

export interface StreamProbeProps {
  /** The validated configuration (see parseProbeConfig). */
  readonly config: ProbeConfig;
  /** The location this construct probes from. */
  readonly location: LocationConfig;
  /**
   * Where alarms notify.
   * @default - a new KMS-encrypted SNS topic, with the config's alarmEmail subscribed
   */
  readonly alarmTopic?: sns.ITopic;
  /**
   * The Lambda entry file.
   * @default - functions/probe.ts of this package
   */
  readonly entry?: string;
}

/** Lambda environment variables are limited to 4 KB in total. */
const MAX_ENV_BYTES = 3500;

/**
 * The function's runtime, named, so that a CDK upgrade never changes it behind a deploy. The bundle
 * targets Node 20, so any Node.js runtime from 22 on runs it; 24 is supported longest.
 */
export const PROBE_RUNTIME = lambda.Runtime.NODEJS_24_X;

function holdsOf(s: ScheduleConfig): number[] {
  return s.holds.map((h) => parseDurationSeconds('hold', h));
}

export class StreamProbe extends Construct {
  readonly function: NodejsFunction;
  readonly role: iam.Role;
  readonly logGroup: logs.LogGroup;
  readonly alarmTopic: sns.ITopic;
  /** The VPC placement, when the location has a VPC. */
  readonly network?: ProbeNetwork;
  readonly alarms: cloudwatch.Alarm[] = [];
  readonly dashboard: cloudwatch.Dashboard;

  constructor(scope: Construct, id: string, props: StreamProbeProps) {
    super(scope, id);
    const { config, location } = props;
    // Validation first: nothing is created for a configuration that cannot work.
    const runtimeConfig = runtimeConfigFor(config, location);
    if (runtimeConfig.clusters.length === 0) throw probeError('CONFIG_INVALID', `location ${location.name}: no clusters to probe`, { field: `locations[${location.name}].clusters` });
    const envJson = JSON.stringify(runtimeConfig);
    if (Buffer.byteLength(envJson) > MAX_ENV_BYTES) {
      throw probeError(
        'CONFIG_INVALID',
        `location ${location.name}: its cluster list is ${Buffer.byteLength(envJson)} bytes of configuration; Lambda allows about ${MAX_ENV_BYTES}. Drop caData (it is read with eks:DescribeCluster) or split the clusters over locations.`,
        { field: `locations[${location.name}].clusters` },
      );
    }
    const longestHold = Math.max(...config.schedules.flatMap(holdsOf));
    const timeoutSeconds = Math.min(LAMBDA_MAX_SECONDS, lambdaRunSeconds(longestHold));
    const stack = Stack.of(this);

    // Retained with the stack's destroy (the logs outlive it), so its name is CloudFormation's: a fixed
    // name would make the next deploy fail on the log group left behind.
    this.logGroup = new logs.LogGroup(this, 'Logs', {
      retention: config.logRetentionDays as logs.RetentionDays,
    });

    this.role = new iam.Role(this, 'Role', {
      assumedBy: new iam.ServicePrincipal('lambda.amazonaws.com'),
      description: `kube-stream-probe ${location.name}: metrics for its namespace, its secrets, its clusters`,
    });
    this.role.addToPolicy(new iam.PolicyStatement({ actions: ['logs:CreateLogStream', 'logs:PutLogEvents'], resources: [this.logGroup.logGroupArn] }));
    this.role.addToPolicy(
      new iam.PolicyStatement({
        actions: ['cloudwatch:PutMetricData'],
        resources: ['*'],
        conditions: { StringEquals: { 'cloudwatch:namespace': METRIC_NAMESPACE } },
      }),
    );
    const secretArns = runtimeConfig.clusters.flatMap((c) => (c.auth.type === 'secret' ? [c.auth.secretArn] : []));
    if (secretArns.length) this.role.addToPolicy(new iam.PolicyStatement({ actions: ['secretsmanager:GetSecretValue'], resources: secretArns }));
    // A secret under a customer-managed key: Secrets Manager decrypts it with the caller's rights, and only on its behalf.
    for (const c of runtimeConfig.clusters) {
      if (c.auth.type !== 'secret' || !c.auth.kmsKeyArn) continue;
      this.role.addToPolicy(
        new iam.PolicyStatement({
          actions: ['kms:Decrypt'],
          resources: [c.auth.kmsKeyArn],
          conditions: { StringEquals: { 'kms:ViaService': `secretsmanager.${regionOfArn(c.auth.secretArn)}.amazonaws.com` } },
        }),
      );
    }
    const describe = runtimeConfig.clusters.flatMap((c) =>
      c.auth.type === 'eks' && !c.caData ? [stack.formatArn({ service: 'eks', resource: 'cluster', resourceName: c.auth.clusterName, region: c.auth.region ?? location.region })] : [],
    );
    if (describe.length) this.role.addToPolicy(new iam.PolicyStatement({ actions: ['eks:DescribeCluster'], resources: describe }));

    let vpcProps: Partial<lambda.FunctionProps> = {};
    if (location.vpc) {
      this.network = new ProbeNetwork(this, 'Network', { location: { ...location, vpc: location.vpc }, clusters: runtimeConfig.clusters });
      vpcProps = { vpc: this.network.vpc, vpcSubnets: { subnets: this.network.subnets }, securityGroups: this.network.securityGroups };
      // CDK adds this policy only to roles it creates; without it CreateFunction fails: the role cannot make the function's network interfaces.
      this.role.addManagedPolicy(iam.ManagedPolicy.fromAwsManagedPolicyName('service-role/AWSLambdaVPCAccessExecutionRole'));
    }

    this.function = new NodejsFunction(this, 'Function', {
      functionName: `${config.project}-${location.name}`,
      description: `kube-stream-probe for location ${location.name}: exec and port-forward over SPDY and WebSocket`,
      entry: props.entry ?? fileURLToPath(new URL('../functions/probe.ts', import.meta.url)),
      handler: 'handler',
      runtime: PROBE_RUNTIME,
      architecture: lambda.Architecture.ARM_64,
      memorySize: functionMemoryMb(config, location),
      timeout: Duration.seconds(timeoutSeconds),
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
        externalModules: ['@aws-sdk/*'],
        banner: "import { createRequire as __ksp_cr } from 'node:module'; const require = __ksp_cr(import.meta.url);",
      },
      ...vpcProps,
    });

    // One role for this location's schedules, allowed to invoke only this function.
    const schedulerRole = new iam.Role(this, 'SchedulerRole', {
      assumedBy: new iam.ServicePrincipal('scheduler.amazonaws.com', { conditions: { StringEquals: { 'aws:SourceAccount': stack.account } } }),
      description: `kube-stream-probe ${location.name}: EventBridge Scheduler invokes the probe`,
    });
    const functionLogicalId = stack.getLogicalId(this.function.node.defaultChild as lambda.CfnFunction);
    Validations.of(schedulerRole).acknowledge({
      id: `AwsSolutions-IAM5[Resource::<${functionLogicalId}.Arn>:*]`,
      reason: "CDK's invoke grant covers this one function's versions and aliases (its ARN followed by :*); no other function.",
    });
    for (const s of config.schedules) {
      new scheduler.Schedule(this, `Schedule-${s.name}`, {
        description: `kube-stream-probe ${location.name}: holds ${s.holds.join(', ')}`,
        schedule: scheduler.ScheduleExpression.expression(s.expression),
        target: new targets.LambdaInvoke(this.function, {
          input: scheduler.ScheduleTargetInput.fromObject({ schedule: s.name, holds: s.holds, keepalives: s.keepalives, ...(s.operations ? { operations: s.operations } : {}) }),
          retryAttempts: 0,
          role: schedulerRole,
        }),
      });
    }

    if (props.alarmTopic) this.alarmTopic = props.alarmTopic;
    else {
      const topic = new sns.Topic(this, 'Alarms', {
        displayName: `kube-stream-probe alarms (${location.name})`,
        enforceSSL: true,
        masterKey: this.topicKey(),
      });
      if (config.alarmEmail) {
        const email = new subs.EmailSubscription(config.alarmEmail);
        topic.addSubscription(email);
        for (const s of topic.node.findAll().filter((c) => c instanceof sns.Subscription)) {
          Validations.of(s).acknowledge({
            id: 'Serverless-SNSRedrivePolicy',
            reason: 'An email subscription: SNS retries it under its delivery policy, and an undeliverable alarm mail stays visible as the alarm state in CloudWatch; a queue of lost e-mails would have no reader.',
          });
        }
      }
      this.alarmTopic = topic;
    }
    // Scheduler invokes asynchronously: Lambda would retry a failed run twice, overlapping the next one.
    // A failed run goes to the topic instead (CDK grants the role sns:Publish and the key).
    this.function.configureAsyncInvoke({ retryAttempts: 0, maxEventAge: Duration.hours(1), onFailure: new destinations.SnsDestination(this.alarmTopic) });

    Validations.of(this.function).acknowledge({
      id: 'Serverless-LambdaDLQ',
      reason: 'Failed asynchronous runs go to an on-failure destination (the alarm topic) with retries off, which carries the request and the error; a dead-letter queue would duplicate it.',
    });
    Validations.of(this.function).acknowledge({
      id: 'Serverless-LambdaTracing',
      reason: "Each run's timings are its product and are published as metrics and one structured log line; X-Ray would add cost per run and CPU inside the 128 MB function whose handshake latency it measures.",
    });

    new CfnOutput(this, 'RoleArn', { value: this.role.roleArn, description: 'The probe role: map it to a Kubernetes group (EKS access entry or aws-auth), see README step 4' });
    new CfnOutput(this, 'FunctionName', { value: this.function.functionName, description: 'The probe function, for aws lambda invoke' });
    new CfnOutput(this, 'AlarmTopicArn', { value: this.alarmTopic.topicArn, description: 'Where alarms notify' });
    for (const c of runtimeConfig.clusters) {
      if (c.auth.type !== 'eks' || !c.auth.accessEntryGroup) continue;
      // The probe role in a Kubernetes group of the cluster; `kube-stream-probe manifest --group` binds the group's least-privilege Role.
      new eks.CfnAccessEntry(this, `AccessEntry-${c.name}`, {
        clusterName: c.auth.clusterName,
        principalArn: this.role.roleArn,
        kubernetesGroups: [c.auth.accessEntryGroup],
        type: 'STANDARD',
      });
    }
    const action = new cwActions.SnsAction(this.alarmTopic);
    const alarm = (id: string, a: cloudwatch.AlarmProps) => {
      const x = new cloudwatch.Alarm(this, id, a);
      x.addAlarmAction(action);
      x.addOkAction(action);
      this.alarms.push(x);
      return x;
    };
    const m = config.alarms;
    const opsOf = (s: ScheduleConfig) => s.operations ?? OPERATIONS;
    const periodFor = (covering: ScheduleConfig[]) => Duration.seconds(Math.max(60, Math.min(...covering.map((s) => scheduleIntervalSeconds(s.expression)))));
    const dims = (cluster: string, op: string) => ({ Location: location.name, Cluster: cluster, Operation: op });

    const widgets: cloudwatch.IWidget[][] = [];
    for (const cluster of runtimeConfig.clusters) {
      for (const op of OPERATIONS) {
        const covering = config.schedules.filter((s) => opsOf(s).includes(op));
        if (covering.length === 0) continue;
        const period = periodFor(covering);
        for (const transport of TRANSPORTS) {
          alarm(`UpgradeSuccess-${cluster.name}-${op}-${transport}`, {
            alarmName: `${config.project}-${location.name}-${cluster.name}-${op}-${transport}-upgrade`,
            alarmDescription: `${transport} ${op} to ${cluster.name} from ${location.name} failed to upgrade or echo in ${m.datapointsToAlarm} of ${m.evaluationPeriods} periods (or the probe stopped reporting).`,
            metric: probeMetric('UpgradeSuccess', { ...dims(cluster.name, op), Transport: transport }, { statistic: 'Minimum', period }),
            threshold: 1,
            comparisonOperator: cloudwatch.ComparisonOperator.LESS_THAN_THRESHOLD,
            evaluationPeriods: m.evaluationPeriods,
            datapointsToAlarm: m.datapointsToAlarm,
            treatMissingData: cloudwatch.TreatMissingData.BREACHING,
          });
          for (const s of covering) {
            for (const keepalive of s.keepalives) {
              for (const hold of holdsOf(s).filter((h) => h > 0)) {
                alarm(`HoldSurvived-${cluster.name}-${op}-${transport}-${keepalive}-${hold}s`, {
                  alarmName: `${config.project}-${location.name}-${cluster.name}-${op}-${transport}-${keepalive}-hold${hold}s`,
                  alarmDescription: `${transport} ${op} to ${cluster.name} did not survive a ${hold}s idle hold with keepalive "${keepalive}".`,
                  metric: probeMetric('HoldSurvived', { ...dims(cluster.name, op), Transport: transport, Keepalive: keepalive, HoldSeconds: String(hold) }, { statistic: 'Minimum', period: periodFor([s]) }),
                  threshold: 1,
                  comparisonOperator: cloudwatch.ComparisonOperator.LESS_THAN_THRESHOLD,
                  evaluationPeriods: m.evaluationPeriods,
                  datapointsToAlarm: m.datapointsToAlarm,
                  treatMissingData: cloudwatch.TreatMissingData.BREACHING,
                });
              }
            }
          }
        }
        alarm(`SilentFallback-${cluster.name}-${op}`, {
          alarmName: `${config.project}-${location.name}-${cluster.name}-${op}-silent-fallback`,
          alarmDescription: `WebSocket ${op} to ${cluster.name} fails where SPDY works: kubectl works only by its silent fallback, which KEP-4006 GA removes.`,
          metric: probeMetric('SilentFallback', dims(cluster.name, op), { statistic: 'Maximum', period }),
          threshold: 1,
          comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
          evaluationPeriods: m.evaluationPeriods,
          datapointsToAlarm: m.datapointsToAlarm,
          treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
        });
      }
      widgets.push(this.clusterWidgets(location.name, cluster.name, config));
    }
    alarm('FunctionErrors', {
      alarmName: `${config.project}-${location.name}-function-errors`,
      alarmDescription: 'The probe Lambda itself failed.',
      metric: this.function.metricErrors({ period: Duration.minutes(5), statistic: 'Sum' }),
      threshold: 1,
      comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
      evaluationPeriods: 1,
      treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
    });
    alarm('FunctionThrottles', {
      alarmName: `${config.project}-${location.name}-function-throttles`,
      alarmDescription: 'The probe Lambda was throttled: runs were skipped.',
      metric: this.function.metricThrottles({ period: Duration.minutes(5), statistic: 'Sum' }),
      threshold: 1,
      comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
      evaluationPeriods: 1,
      treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
    });

    this.dashboard = new cloudwatch.Dashboard(this, 'Dashboard', {
      dashboardName: `${config.project}-${location.name}`,
      widgets: [[new cloudwatch.AlarmStatusWidget({ title: `Alarms: ${location.name}`, alarms: this.alarms, width: 24 })], ...widgets],
    });

    // Findings cdk-nag (AwsSolutions) raises on purpose, each with its reason.
    Validations.of(this.role).acknowledge({
      id: 'AwsSolutions-IAM5[Action::kms:GenerateDataKey*]',
      reason: "A failed run is sent to the alarm topic, whose customer-managed key it must use to encrypt; GenerateDataKey* covers SNS's data-key calls, on that one key only.",
    });
    Validations.of(this.role).acknowledge({
      id: 'AwsSolutions-IAM5[Resource::*]',
      reason: 'cloudwatch:PutMetricData has no resource-level permissions; it is limited to the KubeStreamProbe namespace by the cloudwatch:namespace condition.',
    });
    if (location.vpc) {
      Validations.of(this.role).acknowledge({
        id: 'AwsSolutions-IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/AWSLambdaVPCAccessExecutionRole]',
        reason: 'AWSLambdaVPCAccessExecutionRole is what Lambda needs to create its network interfaces in the location VPC; those EC2 actions take no resource scope.',
      });
    }
  }

  /**
   * The alarm topic's key. CloudWatch cannot use the AWS-managed SNS key (alias/aws/sns): its key policy
   * admits no other service, so every alarm action would fail. A customer-managed key whose policy lets
   * cloudwatch.amazonaws.com use it, for alarms in this account only.
   */
  private topicKey(): kms.Key {
    const stack = Stack.of(this);
    const key = new kms.Key(this, 'AlarmTopicKey', { enableKeyRotation: true, description: 'kube-stream-probe: encrypts the alarm topic; CloudWatch alarms may use it' });
    key.addToResourcePolicy(
      new iam.PolicyStatement({
        sid: 'CloudWatchAlarmsPublishToTheEncryptedTopic',
        principals: [new iam.ServicePrincipal('cloudwatch.amazonaws.com')],
        actions: ['kms:Decrypt', 'kms:GenerateDataKey*'],
        resources: ['*'],
        conditions: { StringEquals: { 'aws:SourceAccount': stack.account } },
      }),
    );
    return key;
  }

  private clusterWidgets(locationName: string, cluster: string, config: ProbeConfig): cloudwatch.IWidget[] {
    const period = Duration.minutes(5);
    const per = (name: 'HandshakeLatency' | 'UpgradeSuccess', statistic: string) =>
      OPERATIONS.flatMap((op) => TRANSPORTS.map((t) => probeMetric(name, { Location: locationName, Cluster: cluster, Operation: op, Transport: t }, { statistic, period, label: `${op} ${t}` })));
    const holdMetrics = config.schedules.flatMap((s) =>
      holdsOf(s)
        .filter((h) => h > 0)
        .flatMap((h) =>
          s.keepalives.flatMap((k) =>
            (s.operations ?? OPERATIONS).flatMap((op) =>
              TRANSPORTS.map((t) => probeMetric('DisconnectTime', { Location: locationName, Cluster: cluster, Operation: op, Transport: t, Keepalive: k, HoldSeconds: String(h) }, { statistic: 'Average', period, label: `${op} ${t} ${k} hold ${h}s` })),
            ),
          ),
        ),
    );
    const holds = [...new Set(config.schedules.flatMap(holdsOf).filter((h) => h > 0))];
    return [
      new cloudwatch.GraphWidget({ title: `${cluster}: handshake latency (ms)`, left: per('HandshakeLatency', 'p50'), width: 8, leftYAxis: { label: 'ms', showUnits: false } }),
      new cloudwatch.GraphWidget({ title: `${cluster}: upgrade success (0-1)`, left: per('UpgradeSuccess', 'Average'), width: 8, leftYAxis: { min: 0, max: 1, showUnits: false } }),
      new cloudwatch.GraphWidget({
        title: `${cluster}: disconnect time vs hold (s)`,
        left: holdMetrics.slice(0, 40),
        width: 8,
        leftYAxis: { label: 's', min: 0, showUnits: false },
        leftAnnotations: holds.map((h) => ({ value: h, label: `hold ${h}s` })),
      }),
    ];
  }
}
