/**
 * Where it broke, across locations (docs/decisions.md): the project's page bus and the aggregator behind it, in one
 * home location. CloudWatch cannot decide this itself: a composite alarm names only alarms of its own account and
 * region, and cross-account observability shares metrics within one region, while a cluster's locations are usually
 * in different regions (often accounts). So each location's notifier forwards its finished pages of a cluster other
 * locations probe too to this bus (PutEvents, allowed by the bus policy for the locations' accounts, for our source
 * only), and the aggregator (src/lambda/cross-location.ts) pages once for the cluster when every location fails, or
 * for the location otherwise, after a wait (a delayed SQS message) that lets an outage reach every location first.
 *
 * If the aggregator fails, or EventBridge cannot invoke it, its alarms page this stack's topic directly.
 */
import { Duration, Names, RemovalPolicy, Stack, type StackProps, Validations } from 'aws-cdk-lib';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import * as events from 'aws-cdk-lib/aws-events';
import * as targets from 'aws-cdk-lib/aws-events-targets';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as kms from 'aws-cdk-lib/aws-kms';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import { SqsEventSource } from 'aws-cdk-lib/aws-lambda-event-sources';
import * as logs from 'aws-cdk-lib/aws-logs';
import * as sns from 'aws-cdk-lib/aws-sns';
import * as sqs from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import type { CrossLocationPlan } from '../src/config/cross-location.js';
import type { ProbeConfig } from '../src/config/probe-config.js';
import type { CrossLocationConfig } from '../src/lambda/cross-location.js';
import { LOCATION_PAGE_DETAIL_TYPE, LOCATION_PAGE_PUT_CONDITION, LOCATION_PAGE_SOURCE } from '../src/lambda/location-page.js';
import { deliveryAlarms } from './function-alarms.js';
import { AGGREGATE_HANDLER, bundleEntryFunction, entryFunctionRole, grantTopicKey } from './probe-code.js';
import { MAX_ENV_BYTES, PROBE_RUNTIME } from './stream-probe.js';
import { probeError } from '../src/errors.js';
import { admitPublisher, alarmArnPattern, cloudWatchAlarmsPublisher, encryptedTopic, keyStatementFor } from './topic-access.js';

/** The name the aggregator's alarms and function share (alarmArnPattern: `<project>-cross-location-*`). */
export const CROSS_LOCATION_NAME = 'cross-location';

export interface CrossLocationPagingProps {
  readonly project: string;
  /** The bus, clusters, wait and accounts (src/config/cross-location.ts crossLocationPlan for a YAML config). */
  readonly plan: Pick<CrossLocationPlan, 'busName' | 'clusters' | 'waitSeconds' | 'accounts'>;
  /** Subscribed to the page topic. @default - none */
  readonly pageEmail?: string;
  /** @default logs.RetentionDays.ONE_MONTH */
  readonly logRetention?: logs.RetentionDays;
  /** A different bundle to deploy. @default - functions/probe.ts of this package */
  readonly entry?: string;
}

export class CrossLocationPaging extends Construct {
  readonly bus: events.EventBus;
  readonly function: lambda.Function;
  readonly table: dynamodb.Table;
  readonly queue: sqs.Queue;
  readonly pageTopic: sns.ITopic;
  readonly failureAlarm: cloudwatch.Alarm;
  readonly undeliveredAlarm: cloudwatch.Alarm;

  constructor(scope: Construct, id: string, props: CrossLocationPagingProps) {
    super(scope, id);
    const stack = Stack.of(this);
    const { plan, project } = props;
    const name = `${project}-${CROSS_LOCATION_NAME}`;

    this.bus = new events.EventBus(this, 'Bus', {
      eventBusName: plan.busName,
      description: `kube-stream-probe ${project}: pages of clusters several locations probe`,
    });
    // Each location's notifier puts its pages here, from its own account: only our source and detail type.
    this.bus.addToResourcePolicy(
      new iam.PolicyStatement({
        sid: 'LocationNotifiersPutPages',
        principals: plan.accounts.map((a) => new iam.AccountPrincipal(a)),
        actions: ['events:PutEvents'],
        resources: [this.bus.eventBusArn],
        conditions: LOCATION_PAGE_PUT_CONDITION,
      }),
    );

    const key = new kms.Key(this, 'TopicKey', {
      enableKeyRotation: true,
      description: `kube-stream-probe ${project}: encrypts the cross-location page topic; its alarms may use it`,
    });
    const alarmsPublisher = cloudWatchAlarmsPublisher(stack, alarmArnPattern(stack, project, CROSS_LOCATION_NAME));
    key.addToResourcePolicy(keyStatementFor(alarmsPublisher));
    this.pageTopic = encryptedTopic(this, 'PageTopic', `kube-stream-probe pages across locations (${project})`, key, props.pageEmail);
    admitPublisher(this, this.pageTopic, true, alarmsPublisher);

    // One item per cluster: its locations' page states and what was paged, written only at the version it was read
    // (concurrent decisions: the function reserves no concurrency, which accounts at the minimum quota cannot give).
    // Transient: rebuilt by the next changes.
    this.table = new dynamodb.Table(this, 'States', {
      partitionKey: { name: 'cluster', type: dynamodb.AttributeType.STRING },
      billingMode: dynamodb.BillingMode.PAY_PER_REQUEST,
      pointInTimeRecoverySpecification: { pointInTimeRecoveryEnabled: true },
      removalPolicy: RemovalPolicy.DESTROY,
    });
    // Decisions due later: a location's page waits for the others (SQS delays a message up to 15 minutes).
    this.queue = new sqs.Queue(this, 'Decisions', {
      encryption: sqs.QueueEncryption.SQS_MANAGED,
      enforceSSL: true,
      retentionPeriod: Duration.days(1),
      visibilityTimeout: Duration.minutes(3),
    });
    Validations.of(this.queue).acknowledge({
      id: 'AwsSolutions-SQS3',
      reason:
        "A decision the aggregator cannot make fails its invocation, whose Errors alarm pages directly; every later state change decides the cluster again, so a dead-letter queue's messages would have no reader.",
    });
    Validations.of(this.queue).acknowledge({ id: 'Serverless-SQSRedrivePolicy', reason: 'As AwsSolutions-SQS3: the Errors alarm pages.' });

    const { role, logGroup } = entryFunctionRole(
      this,
      `kube-stream-probe ${project}: decides cross-location pages and publishes them`,
      props.logRetention ?? logs.RetentionDays.ONE_MONTH,
    );
    role.addToPolicy(new iam.PolicyStatement({ actions: ['dynamodb:GetItem', 'dynamodb:PutItem'], resources: [this.table.tableArn] }));
    role.addToPolicy(new iam.PolicyStatement({ actions: ['sqs:SendMessage'], resources: [this.queue.queueArn] }));
    role.addToPolicy(new iam.PolicyStatement({ actions: ['sns:Publish'], resources: [this.pageTopic.topicArn] }));
    grantTopicKey(role, key.keyArn);
    const config: CrossLocationConfig = {
      project,
      topicArn: this.pageTopic.topicArn,
      queueUrl: this.queue.queueUrl,
      table: this.table.tableName,
      waitSeconds: plan.waitSeconds,
      clusters: plan.clusters,
    };
    // Its environment holds every shared cluster's locations, beside ARNs known only at deploy (so not compressible):
    // refused here, naming the fix, rather than by Lambda at deploy. The ARNs are counted at their longest.
    const envBytes = Buffer.byteLength(JSON.stringify({ ...config, topicArn: 'x'.repeat(256), queueUrl: 'x'.repeat(256), table: 'x'.repeat(255) }));
    if (envBytes > MAX_ENV_BYTES)
      throw probeError(
        'CONFIG_INVALID',
        `CrossLocationPaging props: plan.clusters are ${Object.keys(plan.clusters).length} clusters shared by several locations: about ${envBytes} bytes of the aggregator's configuration, and Lambda allows about ${MAX_ENV_BYTES} of environment; turn cross-location paging off (crossLocation: false) or give fewer clusters several locations`,
        { field: 'plan.clusters' },
      );
    this.function = bundleEntryFunction(this, 'Function', AGGREGATE_HANDLER, props.entry, {
      functionName: name,
      description: `kube-stream-probe ${project}: one page for a cluster every location fails to reach, one per location otherwise`,
      runtime: PROBE_RUNTIME,
      architecture: lambda.Architecture.ARM_64,
      memorySize: 256,
      timeout: Duration.seconds(30),
      role,
      logGroup,
      environment: { KSP_CROSS_LOCATION_CONFIG: stack.toJsonString(config), NODE_OPTIONS: '--enable-source-maps' },
    });
    const source = new SqsEventSource(this.queue, { batchSize: 10 });
    this.function.addEventSource(source);
    Validations.of(this.function.node.findChild('SqsEventSource:' + Names.nodeUniqueId(this.queue.node))).acknowledge({
      id: 'Serverless-LambdaEventSourceMappingDestination',
      reason:
        "A decision that keeps failing raises the aggregator's Errors alarm, which pages directly; the next state change of the cluster decides it again.",
    });
    Validations.of(this.function).acknowledge({
      id: 'Serverless-LambdaDLQ',
      reason: 'EventBridge retries the invocation; an aggregator that still fails raises its Errors alarm, which pages directly.',
    });
    Validations.of(this.function).acknowledge({
      id: 'Serverless-LambdaTracing',
      reason: 'A few small calls per page state change; its log lines say what it decided.',
    });
    const rule = new events.Rule(this, 'Pages', {
      eventBus: this.bus,
      description: `kube-stream-probe ${project}: the locations' forwarded pages to the aggregator`,
      eventPattern: { source: [LOCATION_PAGE_SOURCE], detailType: [LOCATION_PAGE_DETAIL_TYPE] },
      targets: [new targets.LambdaFunction(this.function, { retryAttempts: 8, maxEventAge: Duration.hours(1) })],
    });
    Validations.of(rule).acknowledge({
      id: 'Serverless-EventBusDLQ',
      reason: "A page EventBridge cannot deliver to the aggregator shows in the rule's FailedInvocations, whose alarm pages directly.",
    });

    const alarms = deliveryAlarms(this, {
      fn: this.function,
      rule,
      eventBusName: this.bus.eventBusName,
      namePrefix: name,
      pageTopic: this.pageTopic,
      failedDescription: `PAGE: the cross-location aggregator of ${project} failed, so a page of a cluster several locations probe may not have been sent: the alarms named ${project}-<location>-<cluster>-PAGE show their states on each location's CloudWatch console; the aggregator's log group says why it failed.`,
      undeliveredDescription: `PAGE: EventBridge could not invoke the cross-location aggregator of ${project} for a location's page (its rule's FailedInvocations): see the alarms named ${project}-<location>-<cluster>-PAGE on each location's CloudWatch console.`,
    });
    this.failureAlarm = alarms.failed;
    this.undeliveredAlarm = alarms.undelivered;
  }
}

export interface CrossLocationStackProps extends StackProps {
  readonly config: ProbeConfig;
  readonly plan: CrossLocationPlan;
}

/** The YAML app's stack for cross-location paging, in the home location's account and region. */
export class CrossLocationStack extends Stack {
  readonly paging: CrossLocationPaging;

  constructor(scope: Construct, id: string, props: CrossLocationStackProps) {
    super(scope, id, {
      ...props,
      env: { account: props.plan.home.account, region: props.plan.home.region },
      description: `kube-stream-probe: pages across locations (home ${props.plan.home.name})`,
    });
    this.paging = new CrossLocationPaging(this, 'Paging', {
      project: props.config.project,
      plan: props.plan,
      pageEmail: props.config.alarmEmail,
      logRetention: props.config.logRetentionDays as logs.RetentionDays,
    });
  }
}
