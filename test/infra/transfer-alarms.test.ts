/**
 * A schedule with `transfer` (issue 24) in the synthesized template: the schedule hands the size to the function
 * (and the function's own event parser accepts what it is handed), TransferComplete alarms per operation ×
 * transport that notify no one alone, one ticket composite "transfer broken while the small session works", and
 * the dashboard's transfer row.
 */
import { App } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { describe, expect, it } from 'vitest';
import { LocationStack } from '../../infra/location-stack.js';
import { readConfigDocument } from '../../src/config/load.js';
import { parseProbeConfig } from '../../src/config/probe-config.js';
import { parseProbeEvent } from '../../src/lambda/event.js';

type Json = any;

function synth(): Template {
  const c = readConfigDocument('infra/examples/single-location.yaml') as Json;
  c.schedules.push({ name: 'cp', expression: 'rate(1 hour)', holds: ['0s'], transfer: '8MiB' });
  const config = parseProbeConfig(c);
  return Template.fromStack(new LocationStack(new App(), 'transfer', { config, location: config.locations[0]! }));
}

describe('a transfer schedule, synthesized', () => {
  const t = synth();
  const alarms = Object.values(t.findResources('AWS::CloudWatch::Alarm')).map((r) => r.Properties as Json);
  const composites = Object.values(t.findResources('AWS::CloudWatch::CompositeAlarm')).map((r) => r.Properties as Json);

  it('the schedule hands "8MiB" to the function, and the function reads it as 8 MiB', () => {
    const inputs = Object.values(t.findResources('AWS::Scheduler::Schedule')).map((r) => JSON.parse((r.Properties as Json).Target.Input));
    const cp = inputs.find((i) => i.schedule === 'cp');
    expect(cp).toMatchObject({ transfer: '8MiB', holds: ['0s'] });
    expect(parseProbeEvent(cp).transferBytes).toBe(8 * 1024 * 1024);
    expect(inputs.filter((i) => i.schedule !== 'cp').every((i) => i.transfer === undefined)).toBe(true);
  });

  it('TransferComplete alarms per operation × transport, notifying no one alone', () => {
    const transfer = alarms.filter((a) => a.MetricName === 'TransferComplete');
    expect(
      transfer
        .map((a) => `${a.Dimensions.find((d: Json) => d.Name === 'Operation').Value}/${a.Dimensions.find((d: Json) => d.Name === 'Transport').Value}`)
        .sort(),
    ).toEqual(['exec/spdy', 'exec/websocket', 'portforward/spdy', 'portforward/websocket']);
    for (const a of transfer) {
      expect(a).toMatchObject({
        Namespace: 'KubeStreamProbe',
        Statistic: 'Minimum',
        Threshold: 1,
        ComparisonOperator: 'LessThanThreshold',
        TreatMissingData: 'notBreaching',
      });
      expect(a.AlarmActions).toBeUndefined();
    }
  });

  it('one ticket, not a page: a transfer in ALARM while the same upgrade alarm is not', () => {
    const ticket = composites.find((c) => c.AlarmName === 'kube-stream-probe-eu-west-1-public-transfers');
    expect(ticket).toBeDefined();
    // The rule as CloudWatch reads it, each alarm ARN replaced by its logical id.
    const rule = (ticket.AlarmRule['Fn::Join'][1] as Json[]).map((x) => (typeof x === 'string' ? x : x['Fn::GetAtt'][0])).join('');
    const pairs = [...rule.matchAll(/\(ALARM\("ProbeAlarmstransfer(\w+?)[0-9A-F]{8}"\) AND \(NOT \(ALARM\("ProbeAlarmsupgrade(\w+?)[0-9A-F]{8}"\)\)\)\)/g)];
    expect(pairs.map((m) => m[1]).sort()).toEqual(['prodeuexecspdy', 'prodeuexecwebsocket', 'prodeuportforwardspdy', 'prodeuportforwardwebsocket']);
    for (const m of pairs) expect(m[2]).toBe(m[1]);
    // Told through the notifier, to the ticket topic, on ALARM only.
    expect(ticket.AlarmActions).toBeUndefined();
    const notifier = Object.values(t.findResources('AWS::Lambda::Function', { Properties: { Handler: 'index.notify' } }))[0]!.Properties;
    expect(JSON.stringify(notifier.Environment.Variables.KSP_NOTIFY_CONFIG)).toMatch(
      /kube-stream-probe-eu-west-1-public-transfers\\":\{\\"topicArn\\":\\"",\{"Ref":"ProbeTicketTopic[0-9A-F]{8}"\},"\\",\\"severity\\":\\"TICKET\\",\\"onOk\\":false/,
    );
    const pages = composites.filter((c) => String(c.AlarmName).endsWith('-PAGE'));
    expect(pages.length).toBeGreaterThan(0);
    for (const p of pages) expect(JSON.stringify(p.AlarmRule)).not.toContain('transfer');
  });

  it('the dashboard has the transfer row: TransferComplete and TransferThroughput in MiB/s', () => {
    const body = JSON.stringify(Object.values(t.findResources('AWS::CloudWatch::Dashboard'))[0]);
    expect(body).toContain('TransferComplete');
    expect(body).toContain('TransferThroughput');
    expect(body).toContain('MiB/s');
  });
});
