/**
 * Who may publish to the page and ticket topics, and use their key: exactly the
 * AWS services that deliver this location's notifications, each tied to its
 * source so no other account's alarm or rule can use them (confused deputy).
 *
 * Why this is needed at all: `enforceSSL` makes CDK write an AWS::SNS::TopicPolicy,
 * which *replaces* the default topic policy, so a service is admitted only if a
 * statement names it. Without one, CloudWatch's alarm actions fail
 * (repost.aws/knowledge-center/cloudwatch-receive-sns-for-alarm-trigger).
 *
 * - CloudWatch alarms: `sns:Publish` with aws:SourceAccount and aws:SourceArn
 *   (ArnLike this location's alarm names), the same on the key
 *   (docs.aws.amazon.com/sns/latest/dg/sns-key-management.html#compatibility-with-aws-services;
 *   docs.aws.amazon.com/AmazonCloudWatch/latest/monitoring/AlarmThatSendsEmail.html).
 * - EventBridge (the long-hold task's failures): `sns:Publish` with aws:SourceArn
 *   = the rule's ARN on the topic. On the key, no source condition: EventBridge's
 *   calls to KMS for an encrypted topic do not carry aws:SourceArn,
 *   aws:SourceAccount or aws:SourceOrgID, and the SNS guide (the section above)
 *   says they are not supported there; a condition on them would drop every
 *   ticket silently. The key statement is still limited to the service.
 *
 * A topic the construct does not own (pageTopic/ticketTopic props) cannot be
 * changed here: the statements its owner must add are a synth-time warning.
 */
import { Annotations, ArnFormat, Stack, Token, Validations } from 'aws-cdk-lib';
import type * as events from 'aws-cdk-lib/aws-events';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as kms from 'aws-cdk-lib/aws-kms';
import * as sns from 'aws-cdk-lib/aws-sns';
import * as subs from 'aws-cdk-lib/aws-sns-subscriptions';
import type { Construct } from 'constructs';
import { partitionOf as partitionOfRegion } from '../src/config/cross-location.js';

type Conditions = Record<string, Record<string, unknown>>;

/** A service that publishes to a topic, and under which conditions. */
export interface TopicPublisher {
  readonly sid: string;
  readonly service: string;
  /** What it publishes, for the note about a topic the construct does not own. */
  readonly what: string;
  readonly topicConditions: Conditions;
  /** Conditions on its key policy statement (none where AWS does not send the keys). */
  readonly keyConditions?: Conditions;
}

/** Every alarm of one location: their names all start with `<project>-<location>-` (infra/alarms.ts). */
export function alarmArnPattern(stack: Stack, project: string, location: string): string {
  return stack.formatArn({
    partition: partitionOf(stack),
    service: 'cloudwatch',
    resource: 'alarm',
    resourceName: `${project}-${location}-*`,
    arnFormat: ArnFormat.COLON_RESOURCE_NAME,
  });
}

/** The partition as a literal when the stack's region is known (so a note to a topic's owner reads as a plain ARN). */
function partitionOf(stack: Stack): string {
  const region = stack.region;
  return Token.isUnresolved(region) ? stack.partition : partitionOfRegion(region);
}

export function cloudWatchAlarmsPublisher(stack: Stack, alarmArns: string): TopicPublisher {
  const conditions = { StringEquals: { 'aws:SourceAccount': stack.account }, ArnLike: { 'aws:SourceArn': alarmArns } };
  return {
    sid: 'CloudWatchAlarmsOfThisLocation',
    service: 'cloudwatch.amazonaws.com',
    what: 'the alarms of this location',
    topicConditions: conditions,
    keyConditions: conditions,
  };
}

/** `ruleArn` undefined: only the key statement is wanted (it takes no source condition). */
export function eventBridgeRulePublisher(stack: Stack, ruleArn: string | undefined): TopicPublisher {
  return {
    sid: 'EventBridgeTaskFailedRule',
    service: 'events.amazonaws.com',
    what: 'the rule that reports long-hold tasks that stopped without finishing',
    topicConditions: { StringEquals: { 'aws:SourceAccount': stack.account }, ...(ruleArn ? { ArnEquals: { 'aws:SourceArn': ruleArn } } : {}) },
  };
}

function topicStatement(topic: sns.ITopic, p: TopicPublisher): iam.PolicyStatement {
  return new iam.PolicyStatement({
    sid: p.sid,
    principals: [new iam.ServicePrincipal(p.service)],
    actions: ['sns:Publish'],
    resources: [topic.topicArn],
    conditions: p.topicConditions,
  });
}

/** The key policy statement that lets the publisher encrypt to a topic under the key. */
export function keyStatementFor(p: TopicPublisher): iam.PolicyStatement {
  return new iam.PolicyStatement({
    sid: `${p.sid}UsesTheTopicKey`,
    principals: [new iam.ServicePrincipal(p.service)],
    actions: ['kms:Decrypt', 'kms:GenerateDataKey*'],
    resources: ['*'],
    conditions: p.keyConditions,
  });
}

/** Admits the publisher to a topic the construct owns, or tells the owner of an injected one what to add. */
export function admitPublisher(scope: Construct, topic: sns.ITopic, owned: boolean, p: TopicPublisher): void {
  const statement = topicStatement(topic, p);
  if (owned) {
    topic.addToResourcePolicy(statement);
    return;
  }
  const stack = Stack.of(scope);
  const json = (s: iam.PolicyStatement) => JSON.stringify(stack.resolve(s.toStatementJson()));
  Annotations.of(scope).addWarningV2(
    `kube-stream-probe:topicPolicy:${p.sid}`,
    `the topic ${JSON.stringify(stack.resolve(topic.topicArn))} is not created by this construct, so ${p.service} (${p.what}) can only publish to it if its owner adds this statement to its topic policy: ${json(statement)}; and, if it is encrypted with a customer-managed key, this one to the key policy: ${json(keyStatementFor(p))}.`,
  );
}

/** An EventBridge target that publishes to the topic with no policy change of its own (admitPublisher makes it). */
export function snsRuleTarget(topic: sns.ITopic, opts: { readonly message: events.RuleTargetInput }): events.IRuleTarget {
  return { bind: () => ({ arn: topic.topicArn, input: opts.message }) };
}

/** A topic the construct owns: TLS enforced, encrypted with the topics' key, an e-mail subscribed when given. */
export function encryptedTopic(scope: Construct, id: string, displayName: string, masterKey: kms.IKey | undefined, email: string | undefined): sns.ITopic {
  const topic = new sns.Topic(scope, id, { displayName, enforceSSL: true, masterKey });
  if (email) {
    topic.addSubscription(new subs.EmailSubscription(email));
    for (const s of topic.node.findAll().filter((c) => c instanceof sns.Subscription)) {
      Validations.of(s).acknowledge({
        id: 'Serverless-SNSRedrivePolicy',
        reason:
          'An email subscription: SNS retries it under its delivery policy, and an undeliverable alarm mail stays visible as the alarm state in CloudWatch; a queue of lost e-mails would have no reader.',
      });
    }
  }
  return topic;
}

/**
 * The topics' key. CloudWatch cannot use the AWS-managed SNS key (alias/aws/sns): its key policy admits no other
 * service, so every alarm action would fail. A customer-managed key whose policy lets the location's alarms use it
 * (docs.aws.amazon.com/AmazonCloudWatch/latest/monitoring/AlarmThatSendsEmail.html#Encrypted_SNS_topic), and
 * EventBridge when a long-hold task's failures are tickets
 * (repost.aws/knowledge-center/sns-not-getting-eventbridge-notification).
 */
export function topicKey(
  scope: Construct,
  o: { readonly project: string; readonly location: string; readonly alarms: boolean; readonly eventBridge: boolean },
): kms.Key {
  const stack = Stack.of(scope);
  const key = new kms.Key(scope, 'AlarmTopicKey', {
    enableKeyRotation: true,
    description: 'kube-stream-probe: encrypts the page and ticket topics; CloudWatch alarms may use it',
  });
  // The services that publish to the topics must use the key too (the topic policy is the other gate).
  if (o.alarms) key.addToResourcePolicy(keyStatementFor(cloudWatchAlarmsPublisher(stack, alarmArnPattern(stack, o.project, o.location))));
  if (o.eventBridge) key.addToResourcePolicy(keyStatementFor(eventBridgeRulePublisher(stack, undefined)));
  return key;
}
