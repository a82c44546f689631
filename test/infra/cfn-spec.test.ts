/**
 * Every synthesized template against the CloudFormation resource specification
 * (test/helpers/cfn-spec.ts): the three examples, the task runner in each
 * endpoint mode, and the integration test's stacks. A property CloudFormation
 * does not know, a missing required one or a value of the wrong type fails
 * here instead of at deploy time.
 */
import { App, Duration, Stack } from 'aws-cdk-lib';
import * as ec2 from 'aws-cdk-lib/aws-ec2';
import * as secretsmanager from 'aws-cdk-lib/aws-secretsmanager';
import * as sns from 'aws-cdk-lib/aws-sns';
import { StreamProbe } from '../../infra/stream-probe.js';
import { Template } from 'aws-cdk-lib/assertions';
import { describe, expect, it } from 'vitest';
import { buildApp } from '../../infra/app.js';
import { LocationStack } from '../../infra/location-stack.js';
import { readConfigDocument } from '../../src/config/load.js';
import { parseProbeConfig } from '../../src/config/probe-config.js';
import { buildIntegApp } from '../integ/integ.location.js';
import { specProblems } from '../helpers/cfn-spec.js';

type Json = any;

function taskRunner(endpoints: Json): Stack {
  const c = readConfigDocument('infra/examples/private-vpc.yaml') as Json;
  c.schedules.push({ name: 'long', expression: 'rate(6 hours)', holds: ['30m'] });
  c.locations[0].vpc.endpoints = endpoints;
  const config = parseProbeConfig(c);
  return new LocationStack(new App(), 'spec-task', { config, location: config.locations[0]! });
}

describe('every synthesized template conforms to the CloudFormation resource specification', () => {
  it.each(['single-location', 'multi-location', 'private-vpc'])(
    '%s.yaml',
    (example) => {
      for (const stack of buildApp(new App(), `infra/examples/${example}.yaml`).all) expect(specProblems(Template.fromStack(stack).toJSON())).toEqual([]);
    },
    120_000,
  );

  it.each([
    ['create', { mode: 'create', routeTableIds: ['rtb-0a1b2c3d4e5f60718'], s3PrefixListId: 'pl-6da54004' }],
    ['existing', { mode: 'existing', securityGroupIds: ['sg-0e1d2c3b4a5968778'], s3PrefixListId: 'pl-6da54004' }],
    ['none', { mode: 'none' }],
  ])(
    'a long-hold task runner, endpoints %s',
    (_n, endpoints) => {
      expect(specProblems(Template.fromStack(taskRunner(endpoints)).toJSON())).toEqual([]);
    },
    120_000,
  );

  it('the construct in a CDK app of its own: a CDK VPC, a Secret, injected topics, a task runner', () => {
    const stack = new Stack(new App(), 'Platform', { env: { account: '123456789012', region: 'eu-west-1' } });
    const vpc = new ec2.Vpc(stack, 'Vpc', {
      maxAzs: 2,
      natGateways: 0,
      subnetConfiguration: [{ name: 'private', subnetType: ec2.SubnetType.PRIVATE_ISOLATED }],
    });
    const secret = new secretsmanager.Secret(stack, 'Token');
    new StreamProbe(stack, 'Probe', {
      locationName: 'office-vpn',
      vpc,
      subnets: vpc.isolatedSubnets,
      interfaceEndpoints: 'create',
      s3Gateway: { prefixListId: 'pl-6da54004' },
      clusters: [
        {
          name: 'onprem',
          endpoint: 'https://k8s.corp.example:6443',
          auth: { type: 'secret', secret },
          target: { namespace: 'ksp', port: 9090, perNode: true },
        },
      ],
      schedules: [
        { name: 'short', expression: 'rate(5 minutes)', holds: [Duration.seconds(0), Duration.seconds(65)], keepalives: ['kubectl', 'none'] },
        { name: 'hour', expression: 'rate(2 hours)', holds: [Duration.minutes(60)] },
      ],
      pageTopic: new sns.Topic(stack, 'Oncall'),
      ticketTopic: sns.Topic.fromTopicArn(stack, 'Backlog', 'arn:aws:sns:eu-west-1:123456789012:backlog'),
    });
    expect(specProblems(Template.fromStack(stack).toJSON())).toEqual([]);
  }, 120_000);

  it('the integration test: the location and its assertions', () => {
    const app = new App();
    const { stack, assertions } = buildIntegApp(app, 'infra/examples/single-location.yaml');
    expect(specProblems(Template.fromStack(stack).toJSON())).toEqual([]);
    expect(specProblems(Template.fromStack(assertions).toJSON())).toEqual([]);
  }, 120_000);

  it('refuses what CloudFormation would (the check can fail)', () => {
    const t = Template.fromStack(taskRunner({ mode: 'none' })).toJSON();
    const fn = Object.values<Json>(t.Resources).find((r) => r.Type === 'AWS::Lambda::Function')!;
    fn.Properties.MemorySizeMb = 512; // not a property
    fn.Properties.Timeout = 'long'; // not an integer
    delete fn.Properties.Code; // required
    const alarm = Object.values<Json>(t.Resources).find((r) => r.Type === 'AWS::CloudWatch::Alarm')!;
    alarm.Properties.Dimensions = [{ Name: 'Location' }]; // a Dimension needs Value
    expect(specProblems(t)).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/MemorySizeMb: AWS::Lambda::Function has no property MemorySizeMb/),
        expect.stringMatching(/\.Timeout: expected an integer/),
        expect.stringMatching(/AWS::Lambda::Function requires Code/),
        expect.stringMatching(/Dimensions\[0\]: Dimension requires Value/),
      ]),
    );
  });
});
