/**
 * StreamProbe used as a library construct, the way a platform team would in
 * their own CDK app: CDK types in the props (a Vpc and a Secret made in the
 * same stack, Durations, topics of their own), optional alarms and dashboard,
 * metric helpers, alarms by key, and validation that names the prop. Plus
 * the routing rules: which alarm notifies which topic, on which transitions.
 */
import { App, Duration, Stack } from 'aws-cdk-lib';
import { Annotations, Match, Template } from 'aws-cdk-lib/assertions';
import * as ec2 from 'aws-cdk-lib/aws-ec2';
import * as secretsmanager from 'aws-cdk-lib/aws-secretsmanager';
import * as sns from 'aws-cdk-lib/aws-sns';
import { describe, expect, it } from 'vitest';
import { StreamProbe, type StreamProbeProps } from '../../infra/stream-probe.js';
import { caData } from '../helpers/ca-data.js';

const ENTRY_STUB = undefined; // the real entry: bundling runs once per synth (esbuild, ~1 s)

function build(over: Partial<StreamProbeProps> = {}, setup?: (stack: Stack) => Partial<StreamProbeProps>) {
  const app = new App();
  const stack = new Stack(app, 'Platform', { env: { account: '123456789012', region: 'eu-west-1' } });
  const props: StreamProbeProps = {
    locationName: 'office-vpn',
    clusters: [
      {
        name: 'prod',
        endpoint: 'https://10.0.0.1:6443',
        caData: caData(),
        auth: { type: 'eks', clusterName: 'prod' },
        target: { namespace: 'kube-stream-probe' },
      },
    ],
    schedules: [{ name: 'short', expression: 'rate(5 minutes)', holds: [Duration.seconds(0), Duration.seconds(65)] }],
    entry: ENTRY_STUB,
    ...over,
    ...(setup?.(stack) ?? {}),
  };
  const probe = new StreamProbe(stack, 'Probe', props);
  return { stack, probe, template: () => Template.fromStack(stack) };
}

/** The top-level JSON objects written in a text (balanced braces; no braces inside the strings here). */
function jsonObjectsIn(text: string): any[] {
  const out: any[] = [];
  let depth = 0;
  let start = -1;
  for (let i = 0; i < text.length; i++) {
    if (text[i] === '{' && depth++ === 0) start = i;
    else if (text[i] === '}' && --depth === 0) out.push(JSON.parse(text.slice(start, i + 1)));
  }
  return out;
}

describe('StreamProbe as a construct', () => {
  it('takes CDK objects: a VPC and subnets made in the same stack, a Secret with its key, Durations', () => {
    const { template, probe } = build({}, (stack) => {
      const vpc = new ec2.Vpc(stack, 'Vpc', {
        maxAzs: 2,
        natGateways: 0,
        subnetConfiguration: [{ name: 'private', subnetType: ec2.SubnetType.PRIVATE_ISOLATED }],
      });
      const secret = new secretsmanager.Secret(stack, 'Token');
      return {
        vpc,
        subnets: vpc.isolatedSubnets,
        interfaceEndpoints: 'create',
        clusters: [{ name: 'onprem', endpoint: 'https://k8s.corp.example:6443', auth: { type: 'secret', secret }, target: { namespace: 'ksp', port: 9090 } }],
        schedules: [{ name: 'long', expression: 'cron(0 * * * ? *)', holds: [Duration.minutes(6)], keepalives: ['kubectl', 'none'] }],
      };
    });
    const t = template();
    const fn = Object.values(t.findResources('AWS::Lambda::Function')).find((f) => f.Properties.FunctionName === 'kube-stream-probe-office-vpn')!;
    expect(fn.Properties.VpcConfig.SubnetIds).toHaveLength(2);
    // The secret's ARN is a token here; the function's configuration carries it resolved at deploy.
    expect(JSON.stringify(fn.Properties.Environment.Variables.KSP_LOCATION_CONFIG)).toContain('"Ref":"Token');
    const statements = Object.values(t.findResources('AWS::IAM::Policy')).flatMap((p) => p.Properties.PolicyDocument.Statement);
    expect(statements.find((s) => s.Action === 'secretsmanager:GetSecretValue').Resource).toEqual({ Ref: expect.stringMatching(/^Token/) });
    // The created endpoints: monitoring and secretsmanager (a secret), no eks (no EKS cluster).
    expect(
      Object.values(t.findResources('AWS::EC2::VPCEndpoint'))
        .map((e) => JSON.stringify(e.Properties.ServiceName))
        .join(),
    ).toMatch(/monitoring.*secretsmanager|secretsmanager.*monitoring/);
    expect(probe.alarms!.byKey.get('hold/onprem/exec/websocket/kubectl/360')).toBeDefined();
    expect(probe.alarms!.byKey.get('hold/onprem/exec/websocket/none/360')).toBeUndefined();
  });

  it('injected page and ticket topics: their policies are not ours to change, so synth warns with the exact statements their owner must add', () => {
    const { stack } = build({}, (s) => ({
      pageTopic: sns.Topic.fromTopicArn(s, 'Oncall', 'arn:aws:sns:eu-west-1:123456789012:oncall'),
      ticketTopic: new sns.Topic(s, 'Backlog'),
    }));
    const warnings = Annotations.fromStack(stack)
      .findWarning('*', Match.stringLikeRegexp('cloudwatch\\.amazonaws\\.com'))
      .map((w) => String(w.entry.data));
    expect(warnings).toHaveLength(2); // one per topic
    const onPage = warnings.find((w) => w.includes('arn:aws:sns:eu-west-1:123456789012:oncall'))!;
    const [topicStatement, keyStatement] = jsonObjectsIn(onPage);
    expect(topicStatement).toMatchObject({
      Action: 'sns:Publish',
      Principal: { Service: 'cloudwatch.amazonaws.com' },
      Resource: 'arn:aws:sns:eu-west-1:123456789012:oncall',
      Condition: {
        StringEquals: { 'aws:SourceAccount': '123456789012' },
        ArnLike: { 'aws:SourceArn': 'arn:aws:cloudwatch:eu-west-1:123456789012:alarm:kube-stream-probe-office-vpn-*' },
      },
    });
    expect(keyStatement).toMatchObject({ Action: ['kms:Decrypt', 'kms:GenerateDataKey*'], Principal: { Service: 'cloudwatch.amazonaws.com' } });
  });

  it('injected page and ticket topics: no topic or key of its own; the page composite is told through the notifier on ALARM and OK, tickets on ALARM only, components never', () => {
    const { template, probe, stack } = build({}, (s) => ({ pageTopic: new sns.Topic(s, 'Oncall'), ticketTopic: new sns.Topic(s, 'Backlog') }));
    const t = template();
    t.resourceCountIs('AWS::SNS::Topic', 2); // theirs
    t.resourceCountIs('AWS::KMS::Key', 0);
    const ref = (logical: string) => [{ Ref: logical }];
    const oncall = stack.getLogicalId(probe.pageTopic.node.defaultChild as sns.CfnTopic);
    const backlog = stack.getLogicalId(probe.ticketTopic.node.defaultChild as sns.CfnTopic);
    expect([oncall, backlog].map((x) => x.replace(/[0-9A-F]{8}$/, ''))).toEqual(['Oncall', 'Backlog']);
    const composites = Object.values(t.findResources('AWS::CloudWatch::CompositeAlarm')).map((c) => c.Properties);
    const page = composites.find((c) => c.AlarmName === 'kube-stream-probe-office-vpn-prod-PAGE')!;
    // The page and the tickets with evidence go through the notifier (infra/notifier.ts), which publishes to their topic.
    expect(page.AlarmActions).toBeUndefined();
    const notifier = Object.values(t.findResources('AWS::Lambda::Function', { Properties: { Handler: 'index.notify' } }))[0]!.Properties;
    const joined = (v: any): string =>
      typeof v === 'string' ? v : v['Fn::Join'] ? v['Fn::Join'][1].map(joined).join(v['Fn::Join'][0]) : v.Ref ? v.Ref : `arn:${v['Fn::GetAtt'][0]}`;
    const routes = JSON.parse(joined(notifier.Environment.Variables.KSP_NOTIFY_CONFIG)).routes;
    expect(routes['kube-stream-probe-office-vpn-prod-PAGE']).toEqual({ topicArn: oncall, severity: 'PAGE', onOk: true, cluster: 'prod' });
    expect(routes['kube-stream-probe-office-vpn-ga-readiness']).toEqual({ topicArn: backlog, severity: 'TICKET', onOk: false });
    const rules = Object.values(t.findResources('AWS::Events::Rule')).map((r) => r.Properties);
    expect(rules).toEqual([
      expect.objectContaining({
        EventPattern: expect.objectContaining({ source: ['aws.cloudwatch'], 'detail-type': ['CloudWatch Alarm State Change'] }),
      }),
    ]);
    expect(JSON.stringify(rules[0]!.EventPattern.resources)).toContain('ProbeAlarmsPageprod');
    // The page is exactly "kubectl exec or port-forward is broken" (its KubectlWorks alarms) or "its upgrades burn the
    // SLO's budget" (both windows of a burn-rate pair), nothing measured.
    const rule = JSON.stringify(page.AlarmRule);
    expect(rule).toContain(' OR ');
    expect(rule).toMatch(/OR \(ALARM\([^)]*sloprodfastlong[^)]*\) AND ALARM\([^)]*sloprodfastshort/);
    expect(rule.match(/"Fn::GetAtt":\["[A-Za-z0-9]+"/g)!.map((x) => x.replace(/.*\["|[0-9A-F]{8}"$/g, ''))).toEqual([
      'ProbeAlarmskubectlprodexec',
      'ProbeAlarmskubectlprodportforward',
      'ProbeAlarmssloprodfastlong',
      'ProbeAlarmssloprodfastshort',
      'ProbeAlarmssloprodslowlong',
      'ProbeAlarmssloprodslowshort',
    ]);
    expect(JSON.stringify(page.AlarmRule)).not.toMatch(/upgrade|hold|fallback/i);
    // The probe's health is CloudWatch's own message, straight to the ticket topic (it reaches it without the notifier).
    const health = composites.find((x) => x.AlarmName === 'kube-stream-probe-office-vpn-probe-health')!;
    expect(health.AlarmActions).toEqual(ref(backlog));
    expect(health.OKActions).toBeUndefined();
    // Components notify no one; only the notifier's own failures page directly.
    for (const a of Object.values(t.findResources('AWS::CloudWatch::Alarm'))) {
      if (/-notifier-/.test(a.Properties.AlarmName)) expect(a.Properties.AlarmActions).toEqual(ref(oncall));
      else expect(a.Properties.AlarmActions).toBeUndefined();
      expect(a.Properties.OKActions).toBeUndefined();
    }
    // Alarms by stable key, for users who add their own actions.
    expect([...probe.alarms!.byKey.keys()]).toEqual(
      expect.arrayContaining([
        'page/prod',
        'ticket/ga-readiness',
        'ticket/probe-health',
        'kubectl/prod/exec',
        'upgrade/prod/portforward/websocket',
        'probe-error/prod',
        'health/duration',
      ]),
    );
  });

  it('a cluster probed per node gets a row of nodes failing on the dashboard', () => {
    const { template } = build({
      clusters: [
        {
          name: 'prod',
          endpoint: 'https://10.0.0.1:6443',
          caData: caData(),
          auth: { type: 'eks', clusterName: 'prod' },
          target: { namespace: 'kube-stream-probe', perNode: true },
        },
      ],
    });
    const body = JSON.stringify(Object.values(template().findResources('AWS::CloudWatch::Dashboard'))[0]!.Properties.DashboardBody);
    expect(body).toContain('prod: nodes failing, per operation and transport');
    expect(body).toContain('NodesFailing');
    expect(
      JSON.parse(
        Object.values(template().findResources('AWS::Lambda::Function')).find((f) => f.Properties.FunctionName)!.Properties.Environment.Variables
          .KSP_LOCATION_CONFIG,
      ).clusters[0].target.perNode,
    ).toBe(true);
  });

  it('a cluster probed per node gets its nodes alarms: a ticket when some nodes fail, probe health when none was probed; never a page', () => {
    const perNode = {
      name: 'prod',
      endpoint: 'https://10.0.0.1:6443',
      caData: caData(),
      auth: { type: 'eks' as const, clusterName: 'prod' },
      target: { namespace: 'kube-stream-probe', perNode: true },
    };
    const plain = { ...perNode, name: 'dev', target: { namespace: 'kube-stream-probe' } };
    const { template, probe } = build({ clusters: [perNode, plain] });
    const keys = [...probe.alarms!.byKey.keys()];
    expect(keys.filter((k) => k.startsWith('nodes/'))).toEqual([
      'nodes/prod/exec/websocket',
      'nodes/prod/exec/spdy',
      'nodes/prod/portforward/websocket',
      'nodes/prod/portforward/spdy',
    ]);
    expect(keys.filter((k) => k.startsWith('nodes-probed/'))).toEqual(['nodes-probed/prod']);
    const t = template();
    const alarms = Object.values(t.findResources('AWS::CloudWatch::Alarm')).map((a) => a.Properties);
    const failing = alarms.find((a) => a.AlarmName === 'kube-stream-probe-office-vpn-prod-exec-websocket-nodes-failing')!;
    expect(failing).toMatchObject({
      MetricName: 'NodesFailing',
      Statistic: 'Maximum',
      Threshold: 1,
      ComparisonOperator: 'GreaterThanOrEqualToThreshold',
      TreatMissingData: 'notBreaching',
    });
    expect(failing.Dimensions).toEqual(
      expect.arrayContaining([
        { Name: 'Cluster', Value: 'prod' },
        { Name: 'Transport', Value: 'websocket' },
      ]),
    );
    expect(alarms.find((a) => a.AlarmName === 'kube-stream-probe-office-vpn-prod-no-nodes-probed')).toMatchObject({
      MetricName: 'NodesProbed',
      ComparisonOperator: 'LessThanThreshold',
      TreatMissingData: 'notBreaching',
    });
    const composites = Object.values(t.findResources('AWS::CloudWatch::CompositeAlarm')).map((c) => c.Properties);
    const rule = (name: string) => JSON.stringify(composites.find((c) => c.AlarmName === `kube-stream-probe-office-vpn-${name}`)!.AlarmRule);
    expect(rule('nodes').match(/ALARM\(/g)).toHaveLength(4);
    expect(rule('nodes')).toMatch(/nodesprodexecwebsocket/);
    expect(rule('probe-health')).toMatch(/nodesprobedprod/);
    expect(rule('prod-PAGE')).not.toMatch(/nodes/i);
    expect(composites.find((c) => c.AlarmName === 'kube-stream-probe-office-vpn-nodes')!.OKActions).toBeUndefined();
  });

  it('alarms: false and dashboard: false make neither; the metrics helpers still work', () => {
    const { template, probe } = build({ alarms: false, dashboard: false });
    const t = template();
    t.resourceCountIs('AWS::CloudWatch::Alarm', 0);
    t.resourceCountIs('AWS::CloudWatch::CompositeAlarm', 0);
    t.resourceCountIs('AWS::CloudWatch::Dashboard', 0);
    expect(probe.alarms).toBeUndefined();
    const m = probe.metricUpgradeSuccess('prod', 'exec', 'websocket');
    expect(m.toMetricConfig().metricStat).toMatchObject({
      namespace: 'KubeStreamProbe',
      metricName: 'UpgradeSuccess',
      statistic: 'Minimum',
      dimensions: expect.arrayContaining([
        { name: 'Location', value: 'office-vpn' },
        { name: 'Transport', value: 'websocket' },
      ]),
    });
    expect(m.period.toSeconds()).toBe(300);
    expect(probe.metricHandshakeLatency('prod', 'portforward', 'spdy').toMetricConfig().metricStat?.statistic).toBe('p50');
    expect(probe.metricHoldSurvived('prod', 'exec', 'spdy', 'kubectl', Duration.seconds(65)).toMetricConfig().metricStat?.dimensions).toContainEqual({
      name: 'HoldSeconds',
      value: '65',
    });
    expect(probe.metricKubectlWorks('prod', 'exec', { period: Duration.hours(1) }).period.toSeconds()).toBe(3600);
    expect(() => probe.metricUpgradeSuccess('staging', 'exec', 'spdy')).toThrow(/clusters have no cluster named "staging" \(metrics exist for prod\)/);
  });

  it.each<[string, Partial<StreamProbeProps> | ((s: Stack) => Partial<StreamProbeProps>), RegExp]>([
    ['an empty cluster list', { clusters: [] }, /StreamProbe props: clusters is empty/],
    ['a location name metrics cannot carry', { locationName: 'Office VPN' }, /locationName "Office VPN" must be lower-case/],
    [
      'two clusters of one name',
      (s) => ({
        clusters: [0, 1].map(() => ({ name: 'x', endpoint: 'https://x', auth: { type: 'eks' as const, clusterName: 'x' }, target: { namespace: 'n' } })),
      }),
      /clusters\[1\]\.name "x" is used twice/,
    ],
    [
      'an http:// endpoint',
      { clusters: [{ name: 'x', endpoint: 'http://x', auth: { type: 'eks', clusterName: 'x' }, target: { namespace: 'n' } }] },
      /clusters\[0\]\.endpoint "http:\/\/x" must be an https:\/\/ URL/,
    ],
    [
      'a hold of half a second',
      { schedules: [{ name: 's', expression: 'rate(5 minutes)', holds: [Duration.millis(500)] }] },
      /schedules\[0\]\.holds\[0\] 0\.5 s is not a whole number of seconds/,
    ],
    [
      'a hold Lambda cannot finish, without a VPC for the task runner',
      { schedules: [{ name: 's', expression: 'rate(1 hour)', holds: [Duration.minutes(20)] }] },
      /schedules\[0\]\.holds hold 1200 s is longer than a Lambda run allows \(820 s\): it runs as an ECS Fargate task, which needs vpc and subnets/,
    ],
    [
      'a weekday cron with breaching missing data over the weekend',
      { schedules: [{ name: 's', expression: 'cron(0/10 * ? * MON-FRI *)', holds: [Duration.seconds(0)] }] },
      /schedules\[0\]\.expression "cron\(0\/10 \* \? \* MON-FRI \*\)" needs an alarm period of 346800 s; CloudWatch allows at most one day/,
    ],
    [
      'a daily cron with 8 evaluation periods',
      { schedules: [{ name: 's', expression: 'cron(0 9 * * ? *)', holds: [Duration.seconds(0)] }], alarms: { evaluationPeriods: 8, datapointsToAlarm: 2 } },
      /8 evaluation periods of 86400 s span 691200 s; CloudWatch allows at most seven days/,
    ],
    [
      'datapointsToAlarm above evaluationPeriods',
      { alarms: { evaluationPeriods: 2, datapointsToAlarm: 3 } },
      /alarms\.datapointsToAlarm 3 must be a whole number from 1 to evaluationPeriods \(2\)/,
    ],
    ['subnets without a VPC', (s) => ({ subnets: [ec2.Subnet.fromSubnetId(s, 'S', 'subnet-0123456789abcdef0')] }), /vpc is required with subnets/],
    [
      'a VPC without subnets',
      (s) => ({ vpc: ec2.Vpc.fromVpcAttributes(s, 'V', { vpcId: 'vpc-0123456789abcdef0', availabilityZones: ['eu-west-1a'] }) }),
      /subnets are required with vpc/,
    ],
    [
      'an e-mail for a topic it does not create',
      (s) => ({ pageTopic: new sns.Topic(s, 'T'), pageEmail: 'a@b.example' }),
      /pageEmail only subscribes to the topic the construct creates/,
    ],
    ['memory Lambda does not offer', { memorySize: 64 }, /memorySize 64 must be 128-10240 MB/],
  ])('refuses %s with CONFIG_INVALID naming the prop', (_name, over, message) => {
    let caught: unknown;
    try {
      typeof over === 'function' ? build({}, over) : build(over);
    } catch (err) {
      caught = err;
    }
    expect(caught).toMatchObject({ code: 'CONFIG_INVALID' });
    expect(String((caught as Error).message)).toMatch(message);
  });
});
