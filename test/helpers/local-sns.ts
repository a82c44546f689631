/**
 * SNS as the alarms and rules meet it: a service principal (CloudWatch for an
 * alarm action, EventBridge for a rule target) publishes to a topic, and SNS
 * delivers only if the topic's policy admits that service for that source
 * (and, for an encrypted topic, the key policy lets it use the key); otherwise
 * the publish fails with AuthorizationError and nobody is notified. The
 * decision is AWS's rules, evaluated by an IAM policy evaluator over the
 * deployed template (test/helpers/iam-authority.ts), never a rule of ours.
 */
import type { DeployedTemplate } from './deployed-template.js';
import { publishRefusal } from './iam-authority.js';

export interface Delivery {
  readonly topicArn: string;
  readonly message: string;
  readonly publisher: string;
}

export class SnsAuthorizationError extends Error {
  readonly code = 'AuthorizationError';
}

export class LocalSns {
  readonly deliveries: Delivery[] = [];
  readonly refusals: string[] = [];

  constructor(private readonly template: DeployedTemplate) {}

  /** A service publishing on behalf of a source (aws:SourceArn, aws:SourceAccount as the service sends them). */
  async publishAs(service: string, topicArn: string, message: string, source: { arn: string; account: string }): Promise<void> {
    if (!this.template.ofType('AWS::SNS::Topic').some((t) => t.arn === topicArn)) throw new Error(`NotFound: Topic does not exist (${topicArn})`);
    const why = await publishRefusal(this.template, topicArn, {
      principal: service,
      context: { 'aws:SourceArn': source.arn, 'aws:SourceAccount': source.account },
    });
    if (why) {
      this.refusals.push(why);
      throw new SnsAuthorizationError(`AuthorizationError: ${service} is not authorized to perform: SNS:Publish on resource: ${topicArn} (${why})`);
    }
    this.deliveries.push({ topicArn, message, publisher: service });
  }

  /** A function's role publishing (the notifier): its identity policies, the topic's and the key's policies. */
  async publishAsRole(role: { arn: string; policies: unknown[] }, topicArn: string, message: string): Promise<void> {
    if (!this.template.ofType('AWS::SNS::Topic').some((t) => t.arn === topicArn)) throw new Error(`NotFound: Topic does not exist (${topicArn})`);
    const why = await publishRefusal(this.template, topicArn, { principal: role.arn, identityPolicies: role.policies });
    if (why) {
      this.refusals.push(why);
      throw new SnsAuthorizationError(`AuthorizationError: ${role.arn} is not authorized to perform: SNS:Publish on resource: ${topicArn} (${why})`);
    }
    this.deliveries.push({ topicArn, message, publisher: role.arn });
  }
}
