/**
 * The location's notifier: pages and tickets as the on-call engineer reads them (src/lambda/notify.ts). The page and
 * ticket alarms notify no topic themselves; an EventBridge rule sends their state changes (CloudWatch emits "CloudWatch
 * Alarm State Change" for composite alarms too) to a small function, the probe bundle's second entry, which reads the
 * newest failed run's evidence lines and publishes the page with that run's diagnosis and evidence link to the alarm's
 * topic: pages on ALARM and OK, tickets on ALARM.
 *
 * If the notifier itself fails (a bad release, a topic it may not use), pages must still reach someone: its Errors
 * alarm notifies the page topic directly (CloudWatch's own message), as every alarm did before the notifier.
 * Its role may read the probe's log group, publish to the two topics and use their key, and put events on the
 * project's page bus when its pages are forwarded there (a cluster other locations probe too): nothing else.
 */
import { Annotations, ArnFormat, Duration, Stack, Validations } from 'aws-cdk-lib';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import * as events from 'aws-cdk-lib/aws-events';
import * as targets from 'aws-cdk-lib/aws-events-targets';
import * as iam from 'aws-cdk-lib/aws-iam';
import type * as kms from 'aws-cdk-lib/aws-kms';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import * as logs from 'aws-cdk-lib/aws-logs';
import type * as sns from 'aws-cdk-lib/aws-sns';
import { Construct } from 'constructs';
import { LOCATION_PAGE_PUT_CONDITION } from '../src/lambda/location-page.js';
import type { NotifyConfig } from '../src/lambda/notify.js';
import { deliveryAlarms } from './function-alarms.js';
import { NOTIFY_HANDLER, bundleEntryFunction, entryFunctionRole, grantTopicKey } from './probe-code.js';

/** One alarm the notifier speaks for. */
export interface NotifiedAlarm {
  readonly alarm: cloudwatch.IAlarm;
  /** Its name, as configured (the event names it so). */
  readonly name: string;
  readonly severity: 'PAGE' | 'TICKET';
  /** A page's cluster (its evidence); a ticket covers the location. */
  readonly cluster?: string;
  /** Also tell its OK (pages). */
  readonly onOk: boolean;
}

export interface ProbeNotifierProps {
  readonly project: string;
  readonly locationName: string;
  readonly runtime: lambda.Runtime;
  /** The probe function's log group: its evidence lines. */
  readonly probeLogGroup: logs.ILogGroup;
  readonly pageTopic: sns.ITopic;
  readonly ticketTopic: sns.ITopic;
  /** The topics' key, when the construct made them. */
  readonly topicKey?: kms.IKey;
  readonly alarms: readonly NotifiedAlarm[];
  readonly logRetention: logs.RetentionDays;
  /** A different bundle to deploy (the construct's `entry` prop). */
  readonly entry?: string;
  /** Pages of these clusters go to the project's page bus instead (the construct's `forwardPages`). */
  readonly forwardPages?: { readonly eventBusArn: string; readonly clusters: readonly string[] };
}

export class ProbeNotifier extends Construct {
  readonly function: lambda.Function;
  readonly rule: events.Rule;
  /** Page directly when the notifier fails, or EventBridge cannot invoke it. */
  readonly failureAlarm: cloudwatch.Alarm;
  readonly undeliveredAlarm: cloudwatch.Alarm;

  constructor(scope: Construct, id: string, props: ProbeNotifierProps) {
    super(scope, id);
    const stack = Stack.of(this);
    const topicOf = (a: NotifiedAlarm) => (a.severity === 'PAGE' ? props.pageTopic : props.ticketTopic);
    const forwarded = (a: NotifiedAlarm) => a.severity === 'PAGE' && a.cluster !== undefined && props.forwardPages?.clusters.includes(a.cluster) === true;
    const config: NotifyConfig & { readonly routes: Record<string, { onOk: boolean }> } = {
      project: props.project,
      location: props.locationName,
      region: stack.region,
      logGroup: props.probeLogGroup.logGroupName,
      routes: Object.fromEntries(
        props.alarms.map((a) => [
          a.name,
          {
            topicArn: topicOf(a).topicArn,
            severity: a.severity,
            onOk: a.onOk,
            ...(a.cluster ? { cluster: a.cluster } : {}),
            ...(forwarded(a) ? { forward: props.forwardPages!.eventBusArn } : {}),
          },
        ]),
      ),
    };
    const { role, logGroup } = entryFunctionRole(
      this,
      `kube-stream-probe ${props.locationName}: reads its evidence lines, publishes its pages and tickets`,
      props.logRetention,
    );
    // The log group as the Service Authorization Reference names it (log-group:NAME) and as its Arn attribute does
    // (log-group:NAME:*): AWS matches the request against either form in practice, so both are granted.
    const probeGroupArn = stack.formatArn({
      service: 'logs',
      resource: 'log-group',
      resourceName: props.probeLogGroup.logGroupName,
      arnFormat: ArnFormat.COLON_RESOURCE_NAME,
    });
    role.addToPolicy(new iam.PolicyStatement({ actions: ['logs:FilterLogEvents'], resources: [probeGroupArn, props.probeLogGroup.logGroupArn] }));
    role.addToPolicy(new iam.PolicyStatement({ actions: ['sns:Publish'], resources: [props.pageTopic.topicArn, props.ticketTopic.topicArn] }));
    // The project's page bus (infra/cross-location.ts), whose own policy admits this account.
    if (props.alarms.some(forwarded))
      role.addToPolicy(
        new iam.PolicyStatement({
          actions: ['events:PutEvents'],
          resources: [props.forwardPages!.eventBusArn],
          // Only its pages (the condition keys EventBridge documents for PutEvents).
          conditions: LOCATION_PAGE_PUT_CONDITION,
        }),
      );
    if (props.topicKey) grantTopicKey(role, props.topicKey.keyArn);
    else
      Annotations.of(this).addWarningV2(
        'kube-stream-probe:notifierKey',
        `the page and ticket topics are not created by this construct: the notifier publishes to them with its role ${JSON.stringify(stack.resolve(role.roleArn))}; if a topic is encrypted with a customer-managed key, that key's policy must let this role use it (kms:GenerateDataKey*, kms:Decrypt), or the notifier fails and its alarm pages directly.`,
      );
    const common = {
      functionName: `${props.project}-${props.locationName}-notify`,
      description: `kube-stream-probe ${props.locationName}: pages and tickets with the failed run's diagnosis and evidence link`,
      runtime: props.runtime,
      architecture: lambda.Architecture.ARM_64,
      memorySize: 256,
      timeout: Duration.seconds(30),
      role,
      logGroup,
      environment: { KSP_NOTIFY_CONFIG: stack.toJsonString(config), NODE_OPTIONS: '--enable-source-maps' },
    };
    this.function = bundleEntryFunction(this, 'Function', NOTIFY_HANDLER, props.entry, common);
    Validations.of(this.function).acknowledge({
      id: 'Serverless-LambdaDLQ',
      reason:
        'EventBridge retries the invocation; a notifier that still fails raises its Errors alarm, which pages directly. A queue of undelivered pages would have no reader.',
    });
    Validations.of(this.function).acknowledge({
      id: 'Serverless-LambdaTracing',
      reason: 'One small call per alarm state change; its log line says what it published.',
    });
    this.rule = new events.Rule(this, 'AlarmChanges', {
      description: `kube-stream-probe ${props.locationName}: page and ticket alarm state changes to the notifier`,
      eventPattern: {
        source: ['aws.cloudwatch'],
        detailType: ['CloudWatch Alarm State Change'],
        resources: props.alarms.map((a) => a.alarm.alarmArn),
      },
      targets: [new targets.LambdaFunction(this.function, { retryAttempts: 2, maxEventAge: Duration.hours(1) })],
    });
    Validations.of(this.rule).acknowledge({
      id: 'Serverless-EventBusDLQ',
      reason:
        "A state change EventBridge cannot deliver to the notifier shows in the rule's FailedInvocations, whose alarm pages directly (below); a queue of undelivered pages would have no reader.",
    });
    const alarms = deliveryAlarms(this, {
      fn: this.function,
      rule: this.rule,
      namePrefix: `${props.project}-${props.locationName}-notifier`,
      pageTopic: props.pageTopic,
      failedDescription: `PAGE: the notifier of ${props.locationName} failed, so its pages and tickets may not have been delivered: the alarms named ${props.project}-${props.locationName}-* show their states on the CloudWatch console; the notifier's log group says why it failed.`,
      undeliveredDescription: `PAGE: EventBridge could not invoke the notifier of ${props.locationName} for an alarm's state change (its rule's FailedInvocations), so a page or ticket may not have been delivered: see the alarms named ${props.project}-${props.locationName}-* on the CloudWatch console.`,
    });
    this.failureAlarm = alarms.failed;
    this.undeliveredAlarm = alarms.undelivered;
  }
}
