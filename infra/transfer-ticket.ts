/**
 * The transfers ticket (alarms.ts): a ticket, not a page, when a bulk transfer through an operation × transport
 * does not come back whole (TransferComplete) while that operation's small session works (its UpgradeSuccess
 * alarm is not in ALARM): `kubectl cp` loses its tail, hangs or is cut on a path where exec works.
 */
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import type { Construct } from 'constructs';

/** One cluster × operation × transport: its TransferComplete alarm and its UpgradeSuccess alarm. */
export interface TransferPair {
  readonly transfer: cloudwatch.IAlarm;
  readonly upgrade: cloudwatch.IAlarm;
}

export function transfersTicket(scope: Construct, alarmName: string, pairs: readonly TransferPair[]): cloudwatch.CompositeAlarm {
  return new cloudwatch.CompositeAlarm(scope, 'ticket-transfers', {
    compositeAlarmName: alarmName,
    alarmDescription:
      'TICKET, Transfers: exec or port-forward upgrades and echoes work, but a bulk transfer through them does not come back whole: `kubectl cp` loses its tail ("unexpected EOF"), hangs or is cut on this path. See the dashboard\'s transfer row and the verdict log line.',
    alarmRule: cloudwatch.AlarmRule.anyOf(
      ...pairs.map((t) =>
        cloudwatch.AlarmRule.allOf(
          cloudwatch.AlarmRule.fromAlarm(t.transfer, cloudwatch.AlarmState.ALARM),
          cloudwatch.AlarmRule.not(cloudwatch.AlarmRule.fromAlarm(t.upgrade, cloudwatch.AlarmState.ALARM)),
        ),
      ),
    ),
  });
}
