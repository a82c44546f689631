/**
 * Holds longer than a Lambda run: the schedule becomes an ECS Fargate task
 * (the same engine, functions/task.ts, in an image built at deploy time),
 * started by EventBridge Scheduler's ECS target in the location's subnets,
 * with a task role of the same least privilege, never overlapping its next
 * run; a 10 minute hold stays on Lambda. No Docker is needed to synthesize.
 */
import { App, Duration, Stack } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import * as ec2 from 'aws-cdk-lib/aws-ec2';
import * as secretsmanager from 'aws-cdk-lib/aws-secretsmanager';
import * as sns from 'aws-cdk-lib/aws-sns';
import { AwsSolutionsChecks, ServerlessChecks } from 'cdk-nag';
import { describe, expect, it } from 'vitest';
import { StreamProbe, type StreamProbeProps } from '../../infra/stream-probe.js';
import { PROBE_PROCESS_ENV } from '../../src/config/process-env.js';

/** eu-west-1's S3 prefix list (the subnets of this CDK VPC know their route tables). */
const S3_PREFIX_LIST = 'pl-6da54004';

function build(schedules: StreamProbeProps['schedules'], withVpc = true) {
  const app = new App();
  const stack = new Stack(app, 'LongHolds', { env: { account: '123456789012', region: 'eu-west-1' } });
  const vpc = withVpc
    ? new ec2.Vpc(stack, 'Vpc', { maxAzs: 2, natGateways: 0, subnetConfiguration: [{ name: 'private', subnetType: ec2.SubnetType.PRIVATE_ISOLATED }] })
    : undefined;
  const secret = new secretsmanager.Secret(stack, 'Token');
  const probe = new StreamProbe(stack, 'Probe', {
    locationName: 'corp',
    clusters: [{ name: 'prod', endpoint: 'https://10.0.0.1:6443', auth: { type: 'secret', secret }, target: { namespace: 'kube-stream-probe' } }],
    schedules,
    ...(vpc ? { vpc, subnets: vpc.isolatedSubnets, interfaceEndpoints: 'create' as const, s3Gateway: { prefixListId: S3_PREFIX_LIST } } : {}),
  });
  return { app, stack, probe, template: Template.fromStack(stack) };
}

const SHORT = { name: 'short', expression: 'rate(5 minutes)', holds: [Duration.seconds(0), Duration.seconds(65)] };
const HOUR_HOLD = { name: 'hour', expression: 'rate(2 hours)', holds: [Duration.minutes(60)], keepalives: ['kubectl', 'none'] as const };

describe('the task runner', () => {
  it('a 60 m hold synthesizes a Fargate task (arm64, smallest size) started by Scheduler in the location subnets; the 5-minute schedule stays on Lambda', () => {
    const { template: t } = build([SHORT, HOUR_HOLD]);
    t.resourceCountIs('AWS::ECS::TaskDefinition', 1);
    const td = Object.values(t.findResources('AWS::ECS::TaskDefinition'))[0]!.Properties;
    expect(td).toMatchObject({
      Cpu: '256',
      Memory: '512',
      RequiresCompatibilities: ['FARGATE'],
      NetworkMode: 'awsvpc',
      RuntimePlatform: { CpuArchitecture: 'ARM64', OperatingSystemFamily: 'LINUX' },
    });
    const env = Object.fromEntries(td.ContainerDefinitions[0].Environment.map((e: { Name: string; Value: unknown }) => [e.Name, e.Value]));
    expect(JSON.parse(env.KSP_EVENT as string)).toEqual({
      schedule: 'hour',
      holds: ['3600s'],
      keepalives: ['kubectl', 'none'],
      operations: ['exec', 'portforward'],
      transports: ['websocket', 'spdy'],
    });
    expect(Number(env.KSP_TASK_SECONDS)).toBe(3600 + 20 + 60);
    // The task's Node runs with glibc's trimming as the function's does (test/unit/process-env.test.ts).
    expect(env).toMatchObject(PROBE_PROCESS_ENV);
    // What `invoke` finds it by and runs it with (src/aws/task-invoke.ts).
    expect(td.Family).toBe('kube-stream-probe-corp-hour');
    expect(JSON.stringify(env.KSP_NETWORK)).toMatch(/subnets.*securityGroups/);
    t.hasResourceProperties('AWS::ECS::Cluster', { ClusterName: 'kube-stream-probe-corp' });
    expect(td.ContainerDefinitions[0].LogConfiguration).toMatchObject({
      LogDriver: 'awslogs',
      Options: { 'awslogs-group': { Ref: expect.stringMatching(/^ProbeLogs/) } },
    });
    expect(td.ContainerDefinitions[0].ReadonlyRootFilesystem).toBe(true);
    const schedules = Object.values(t.findResources('AWS::Scheduler::Schedule')).map((s) => s.Properties);
    const hour = schedules.find((s) => s.Name === undefined && JSON.stringify(s.Description).includes('ECS Fargate'))!;
    expect(hour.Target.EcsParameters).toMatchObject({ LaunchType: 'FARGATE', NetworkConfiguration: { AwsvpcConfiguration: { AssignPublicIp: 'DISABLED' } } });
    expect(hour.Target.EcsParameters.NetworkConfiguration.AwsvpcConfiguration.Subnets).toHaveLength(2);
    expect(hour.Target.RetryPolicy.MaximumRetryAttempts).toBe(0);
    const lambdaSchedule = schedules.find((s) => !s.Target.EcsParameters)!;
    expect(JSON.parse(lambdaSchedule.Target.Input).holds).toEqual(['0s', '65s']);
    // The function is sized for its own holds only.
    const fn = Object.values(t.findResources('AWS::Lambda::Function')).find((f) => f.Properties.FunctionName === 'kube-stream-probe-corp')!;
    expect(fn.Properties.Timeout).toBe(65 + 20 + 60);
  });

  it('the task role: ecs-tasks only, no "*" action, PutMetricData for our namespace, the secret, nothing else', () => {
    const { template: t } = build([HOUR_HOLD]);
    const roles = Object.entries(t.findResources('AWS::IAM::Role')).filter(([, r]) =>
      JSON.stringify(r.Properties.AssumeRolePolicyDocument).includes('ecs-tasks.amazonaws.com'),
    );
    const taskRole = roles.find(([id]) => id.startsWith('ProbeTaskRole'))!;
    expect(taskRole).toBeDefined();
    const statements = Object.values(t.findResources('AWS::IAM::Policy'))
      .filter((p) => JSON.stringify(p.Properties.Roles).includes(taskRole[0]))
      .flatMap((p) => p.Properties.PolicyDocument.Statement);
    expect(statements.map((s) => s.Action).sort()).toEqual(['cloudwatch:PutMetricData', 'secretsmanager:GetSecretValue']);
    for (const st of Object.values(t.findResources('AWS::IAM::Policy')).flatMap((p) => p.Properties.PolicyDocument.Statement))
      for (const a of [st.Action].flat()) expect(a).not.toMatch(/(^|:)\*$/);
  });

  it('a task that stops without finishing its run is a ticket: an EventBridge rule on the task cluster to the ticket topic, which only that rule may publish to; EventBridge may use the key', () => {
    const { template: t, stack, probe } = build([SHORT, HOUR_HOLD]);
    // Beside the notifier's rule (alarm state changes, infra/notifier.ts): the task's.
    const ecsRules = Object.entries(t.findResources('AWS::Events::Rule')).filter(([, r]) => r.Properties.EventPattern.source[0] === 'aws.ecs');
    const rules = ecsRules.map(([, r]) => r.Properties);
    expect(rules).toHaveLength(1);
    const pattern = rules[0]!.EventPattern;
    expect(pattern).toMatchObject({ source: ['aws.ecs'], 'detail-type': ['ECS Task State Change'], detail: { lastStatus: ['STOPPED'] } });
    expect(pattern.detail.clusterArn).toEqual([{ 'Fn::GetAtt': [expect.stringMatching(/^ProbeTaskCluster/), 'Arn'] }]);
    // Failed to start, or exited non-zero (a failed run); a clean exit (findings included) or a person's stop is not a ticket.
    expect(pattern.detail.$or).toEqual([
      { stopCode: [{ 'anything-but': ['EssentialContainerExited', 'UserInitiated'] }] },
      { containers: { exitCode: [{ 'anything-but': 0 }] } },
    ]);
    const ticket = stack.getLogicalId(probe.ticketTopic.node.defaultChild as sns.CfnTopic);
    expect(rules[0]!.Targets).toEqual([
      expect.objectContaining({
        Arn: { Ref: ticket },
        InputTransformer: expect.objectContaining({ InputPathsMap: expect.objectContaining({ 'detail-stopCode': '$.detail.stopCode' }) }),
      }),
    ]);
    const topicPolicy = Object.values(t.findResources('AWS::SNS::TopicPolicy')).flatMap((p) => p.Properties.PolicyDocument.Statement);
    const ruleId = ecsRules[0]![0];
    // Only this rule (confused deputy: not any rule of any account).
    expect(topicPolicy.filter((st) => st.Principal?.Service === 'events.amazonaws.com')).toEqual([
      expect.objectContaining({
        Action: 'sns:Publish',
        Resource: { Ref: ticket },
        Condition: { StringEquals: { 'aws:SourceAccount': '123456789012' }, ArnEquals: { 'aws:SourceArn': { 'Fn::GetAtt': [ruleId, 'Arn'] } } },
      }),
    ]);
    const key = Object.values(t.findResources('AWS::KMS::Key'))[0]!.Properties.KeyPolicy.Statement;
    // No source condition on the key: EventBridge's KMS calls do not carry aws:SourceArn/SourceAccount (infra/topic-access.ts).
    const forEvents = key.filter((st: any) => st.Principal?.Service === 'events.amazonaws.com');
    expect(forEvents).toEqual([
      {
        Sid: 'EventBridgeTaskFailedRuleUsesTheTopicKey',
        Effect: 'Allow',
        Principal: { Service: 'events.amazonaws.com' },
        Action: ['kms:Decrypt', 'kms:GenerateDataKey*'],
        Resource: '*',
      },
    ]);
  });

  it("no long hold: no task rule (the notifier's alone), and the key admits no EventBridge", () => {
    const { template: t } = build([SHORT]);
    expect(Object.values(t.findResources('AWS::Events::Rule')).map((r) => r.Properties.EventPattern.source)).toEqual([['aws.cloudwatch']]);
    const key = Object.values(t.findResources('AWS::KMS::Key'))[0]!.Properties.KeyPolicy.Statement;
    expect(JSON.stringify(key)).not.toContain('events.amazonaws.com');
  });

  it('cdk-nag AwsSolutions and Serverless: nothing unexplained', () => {
    const { app, stack } = build([SHORT, HOUR_HOLD]);
    for (const pack of [new AwsSolutionsChecks(app), new ServerlessChecks(app)]) {
      const report = pack.validateScope(stack);
      // VPC7 (flow logs) and SMG4 (rotation) are about this test's own VPC and secret, not the construct.
      expect(report.violations.map((v) => v.ruleName).filter((r) => r !== 'AwsSolutions-VPC7' && r !== 'AwsSolutions-SMG4')).toEqual([]);
    }
  });

  it('a 10 m hold stays on Lambda: no task, no cluster', () => {
    const { template: t } = build([{ name: 'ten', expression: 'rate(30 minutes)', holds: [Duration.minutes(10)] }]);
    t.resourceCountIs('AWS::ECS::TaskDefinition', 0);
    t.resourceCountIs('AWS::ECS::Cluster', 0);
  });

  it.each<[string, StreamProbeProps['schedules'], boolean, RegExp]>([
    [
      'runs that would overlap (a 60 m hold every hour)',
      [{ name: 'h', expression: 'rate(1 hour)', holds: [Duration.minutes(60)] }],
      true,
      /schedules\[0\]\.expression "rate\(1 hour\)" starts a run every 3600 s, but a run holding 3600 s lasts up to 3680 s: runs would overlap/,
    ],
    [
      'a long hold without a VPC',
      [HOUR_HOLD],
      false,
      /schedules\[0\]\.holds hold 3600 s is longer than a Lambda run allows \(\d+ s\): it runs as an ECS Fargate task, which needs vpc and subnets/,
    ],
    [
      "a hold above the task runner's limit",
      [{ name: 'x', expression: 'rate(1 day)', holds: [Duration.hours(3)] }],
      true,
      /schedules\[0\]\.holds\[0\] 10800 s is longer than the task runner's 7200 s \(taskMaxHold\)/,
    ],
  ])('refuses %s', (_n, schedules, vpc, message) => {
    expect(() => build(schedules, vpc)).toThrow(message);
  });
});
