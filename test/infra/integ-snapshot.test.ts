/**
 * The real-account integration test (test/integ/integ.location.ts) cannot run
 * here (no credentials, no cluster): CI synthesizes it and checks its
 * snapshot, so it stays buildable and its assertions stay what they say.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { App } from 'aws-cdk-lib';
import { stringify } from 'yaml';
import { readConfigDocument } from '../../src/config/load.js';
import { Template } from 'aws-cdk-lib/assertions';
import { describe, expect, it } from 'vitest';
import { CloudWatchLogsClient } from '@aws-sdk/client-cloudwatch-logs';
import { SNSClient } from '@aws-sdk/client-sns';
import { notify, parseNotifyConfig } from '../../src/lambda/notify.js';
import { deployedTemplate } from '../helpers/deployed-template.js';
import { startLocalAws } from '../helpers/local-aws.js';
import { buildIntegApp } from '../integ/integ.location.js';

const scrub = (t: unknown) =>
  JSON.stringify(t, null, 1)
    .replace(/[0-9a-f]{64}(\.zip)?/g, 'ASSET-HASH$1')
    .replace(/"aws:asset:path": "[^"]*"/g, '"aws:asset:path": "ASSET"')
    .replace(/"salt": "\d+"/g, '"salt": "SALT"');

describe('the real-account integration test', () => {
  it("synthesizes under names of its own: the schedule's own run, the metrics listed, a page driven to ALARM and read from the page queue", () => {
    const app = new App({ outdir: mkdtempSync(join(tmpdir(), 'ksp-integ-')) });
    const { stack, assertions } = buildIntegApp(app, 'infra/examples/single-location.yaml', 'r42', Date.parse('2026-12-06T12:00:00Z'));
    const assembly = app.synth();
    const asserts = Template.fromStack(assertions).toJSON();
    const calls = Object.values(asserts.Resources as Record<string, { Type: string; Properties: Record<string, unknown> }>)
      .filter((r) => r.Type.startsWith('Custom::DeployAssert'))
      .map((r) => `${r.Properties.service ?? 'Lambda'}.${r.Properties.api ?? 'invoke'}`)
      .sort();
    expect(calls).toEqual(
      expect.arrayContaining([
        'Scheduler.getSchedule',
        'CloudWatch.listMetrics',
        'CloudWatchLogs.createLogStream',
        'CloudWatchLogs.putLogEvents',
        'CloudWatch.setAlarmState',
        'SQS.receiveMessage',
      ]),
    );
    expect(JSON.stringify(asserts)).toMatch(/ok\W{0,12}true/); // the run's reply says ok
    // What the queue must receive is the PAGE composite (by reference), after its component was set to ALARM.
    expect(JSON.stringify(asserts)).toMatch(/receiveMessage.*ExportsOutputRefProbeAlarmsPageprodeu/);
    expect(JSON.stringify(asserts)).toMatch(/setAlarmState.*ExportsOutputRefProbeAlarmskubectlprodeuexec/);
    // No name of a deployed location: the function, schedule group, dashboard and alarms are the run's own.
    const location = Template.fromStack(stack);
    location.hasResourceProperties('AWS::Lambda::Function', { FunctionName: 'ksp-ir42-eu-west-1-public' });
    location.hasResourceProperties('AWS::Scheduler::ScheduleGroup', { Name: 'ksp-ir42-eu-west-1-public' });
    expect(JSON.stringify(location.toJSON())).not.toMatch(/"kube-stream-probe-eu-west-1-public/);
    // Each topic has a queue subscribed, which SNS may send to.
    expect(
      Object.values(location.findResources('AWS::SNS::Subscription'))
        .map((r) => r.Properties.Protocol)
        .sort(),
    ).toEqual(['sqs', 'sqs']);
    expect(assembly.stacks.map((s) => s.stackName).sort()).toEqual(['ksp-ir42-eu-west-1-public', 'ksp-ir42-eu-west-1-public-assertions']);
    expect(scrub(location.toJSON())).toMatchSnapshot('location');
    expect(scrub(asserts)).toMatchSnapshot('assertions');
  });

  it("step 3's expectation is what the deployed notifier writes for the evidence line the test logs (the real notifier, real SDK clients, the local stand-in)", async () => {
    const app = new App({ outdir: mkdtempSync(join(tmpdir(), 'ksp-integ-')) });
    const at = Date.parse('2026-12-06T12:00:00Z');
    const { stack, page } = buildIntegApp(app, 'infra/examples/single-location.yaml', 'r44', at);
    const t = deployedTemplate(Template.fromStack(stack).toJSON(), { account: '111111111111', region: 'eu-west-1', stackName: stack.stackName });
    const notifier = t.ofType('AWS::Lambda::Function').find((f) => f.props.Handler === 'index.notify')!;
    const config = parseNotifyConfig(String(t.resolve(notifier.props.Environment.Variables.KSP_NOTIFY_CONFIG)));
    const aws = await startLocalAws();
    try {
      // Deployed some minutes after synthesis: the line is inside the notifier's first window.
      aws.logGroups.set(config.logGroup, [{ timestamp: page.at, message: JSON.stringify(page.line) }]);
      const client = { region: 'eu-west-1', endpoint: aws.url, credentials: { accessKeyId: 'AKIDLOCAL', secretAccessKey: 'local' } };
      const now = new Date(at + 12 * 60_000);
      const out = await notify(
        {
          'detail-type': 'CloudWatch Alarm State Change',
          source: 'aws.cloudwatch',
          detail: {
            alarmName: String(t.resolve(stack.resolve(page.alarmName))),
            state: { value: 'ALARM', reason: 'integ', timestamp: now.toISOString() },
            previousState: { value: 'OK' },
          },
        },
        config,
        { logs: new CloudWatchLogsClient(client), sns: new SNSClient(client), log: () => {}, now: () => now },
      );
      expect(out.message).toMatch(new RegExp(String(t.resolve(stack.resolve(page.bodyPattern)))));
      expect(aws.published).toHaveLength(1);
    } finally {
      await aws.close();
    }
  });

  it('with a long-hold schedule in private subnets it also starts the task and waits for its clean stop', () => {
    const app = new App({ outdir: mkdtempSync(join(tmpdir(), 'ksp-integ-')) });
    const dir = mkdtempSync(join(tmpdir(), 'ksp-integ-config-'));
    const c = readConfigDocument('infra/examples/private-vpc.yaml') as any;
    const config = { ...c, schedules: [...c.schedules, { name: 'long', expression: 'rate(6 hours)', holds: ['30m'], keepalives: ['kubectl'] }] };
    config.locations[0].vpc.endpoints = { mode: 'create', routeTableIds: ['rtb-0a1b2c3d4e5f60718'], s3PrefixListId: 'pl-6da54004' };
    writeFileSync(join(dir, 'c.yaml'), stringify(config));
    const { assertions } = buildIntegApp(app, join(dir, 'c.yaml'), 'r43');
    const asserts = JSON.stringify(Template.fromStack(assertions).toJSON());
    expect(asserts).toMatch(/"api":"runTask"|runTask/);
    expect(asserts).toMatch(/describeTasks/);
    expect(asserts).toMatch(/STOPPED/);
  });

  it('refuses a run id that would make names AWS rejects', () => {
    expect(() => buildIntegApp(new App(), 'infra/examples/single-location.yaml', 'Run_1')).toThrow(/KSP_INTEG_RUN "Run_1" must be/);
  });
});
