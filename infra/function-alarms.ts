/**
 * The alarms that page directly when a function that delivers pages (the notifier, the cross-location aggregator)
 * fails, or EventBridge cannot invoke it: CloudWatch's own message to the page topic, so a page is never lost
 * silently behind a broken function.
 */
import { Duration } from 'aws-cdk-lib';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import * as cwActions from 'aws-cdk-lib/aws-cloudwatch-actions';
import type * as events from 'aws-cdk-lib/aws-events';
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import type * as sns from 'aws-cdk-lib/aws-sns';
import type { Construct } from 'constructs';

export interface DeliveryAlarmsProps {
  readonly fn: lambda.IFunction;
  readonly rule: events.Rule;
  /**
   * The rule's bus when it is not the default one: "Metrics that specify both the EventBusName and RuleName dimensions
   * refer to a custom event bus" (docs.aws.amazon.com/eventbridge/latest/userguide/eb-monitoring.html).
   */
  readonly eventBusName?: string;
  /** The alarms' name prefix: `<prefix>-failed`, `<prefix>-undelivered`. */
  readonly namePrefix: string;
  readonly pageTopic: sns.ITopic;
  readonly failedDescription: string;
  readonly undeliveredDescription: string;
}

export function deliveryAlarms(scope: Construct, p: DeliveryAlarmsProps): { failed: cloudwatch.Alarm; undelivered: cloudwatch.Alarm } {
  const alarm = (id: string, suffix: string, description: string, metric: cloudwatch.IMetric) => {
    const a = new cloudwatch.Alarm(scope, id, {
      alarmName: `${p.namePrefix}-${suffix}`,
      alarmDescription: description,
      metric,
      threshold: 1,
      comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
      evaluationPeriods: 1,
      treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
    });
    a.addAlarmAction(new cwActions.SnsAction(p.pageTopic));
    return a;
  };
  return {
    failed: alarm('Failed', 'failed', p.failedDescription, p.fn.metricErrors({ period: Duration.minutes(5), statistic: 'Sum' })),
    undelivered: alarm(
      'Undelivered',
      'undelivered',
      p.undeliveredDescription,
      new cloudwatch.Metric({
        namespace: 'AWS/Events',
        metricName: 'FailedInvocations',
        dimensionsMap: { ...(p.eventBusName ? { EventBusName: p.eventBusName } : {}), RuleName: p.rule.ruleName },
        statistic: 'Sum',
        period: Duration.minutes(5),
      }),
    ),
  };
}
