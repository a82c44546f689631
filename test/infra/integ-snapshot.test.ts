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
import { buildIntegApp } from '../integ/integ.location.js';

const scrub = (t: unknown) =>
  JSON.stringify(t, null, 1)
    .replace(/[0-9a-f]{64}(\.zip)?/g, 'ASSET-HASH$1')
    .replace(/"aws:asset:path": "[^"]*"/g, '"aws:asset:path": "ASSET"')
    .replace(/"salt": "\d+"/g, '"salt": "SALT"');

describe('the real-account integration test', () => {
  it("synthesizes under names of its own: the schedule's own run, the metrics listed, a page driven to ALARM and read from the page queue", () => {
    const app = new App({ outdir: mkdtempSync(join(tmpdir(), 'ksp-integ-')) });
    const { stack, assertions } = buildIntegApp(app, 'infra/examples/single-location.yaml', 'r42');
    const assembly = app.synth();
    const asserts = Template.fromStack(assertions).toJSON();
    const calls = Object.values(asserts.Resources as Record<string, { Type: string; Properties: Record<string, unknown> }>)
      .filter((r) => r.Type.startsWith('Custom::DeployAssert'))
      .map((r) => `${r.Properties.service ?? 'Lambda'}.${r.Properties.api ?? 'invoke'}`)
      .sort();
    expect(calls).toEqual(expect.arrayContaining(['Scheduler.getSchedule', 'CloudWatch.listMetrics', 'CloudWatch.setAlarmState', 'SQS.receiveMessage']));
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
