/**
 * CDK assertions for every promise of the StreamProbe construct, cdk-nag
 * (AwsSolutions) with no unexplained finding, and one snapshot per example
 * configuration with asset hashes removed. No AWS credentials are used.
 */
import { spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { App, Stack } from 'aws-cdk-lib';
import { Match, Template } from 'aws-cdk-lib/assertions';
import { AwsSolutionsChecks, ServerlessChecks } from 'cdk-nag';
import { beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../infra/app.js';
import { loadProbeConfig } from '../../src/config/load.js';
import { LocationStack } from '../../infra/location-stack.js';
import { PROBE_RUNTIME, StreamProbe } from '../../infra/stream-probe.js';
import { estimateMonthlyCost } from '../../src/config/cost.js';
import { lambdaRunSeconds } from '../../src/config/lambda-limits.js';
import { functionMemoryMb, parseProbeConfig } from '../../src/config/probe-config.js';
import { METRIC_NAMESPACE, METRICS } from '../../src/metrics/contract.js';

const EXAMPLES = ['infra/examples/single-location.yaml', 'infra/examples/multi-location.yaml', 'infra/examples/private-vpc.yaml'];
const apps = new Map<string, { app: App; stacks: LocationStack[] }>();

beforeAll(() => {
  mkdirSync(join(process.cwd(), '.tmp'), { recursive: true });
  for (const path of EXAMPLES) {
    const app = new App({ outdir: mkdtempSync(join(tmpdir(), 'ksp-cdk-')) });
    apps.set(path, { app, stacks: buildApp(app, path) });
  }
}, 120_000);

const stacksOf = (path: string) => apps.get(path)!.stacks;
const single = () => Template.fromStack(stacksOf(EXAMPLES[0]!)[0]!);
const vpcStack = () => Template.fromStack(stacksOf(EXAMPLES[1]!)[0]!);

describe('StreamProbe: what each location gets', () => {
  it('one stack per location, in that location\'s account and region', () => {
    expect(stacksOf(EXAMPLES[1]!).map((s) => [s.stackName, s.account, s.region])).toEqual([
      ['kube-stream-probe-corp-vpc-a', '222222222222', 'us-east-1'],
      ['kube-stream-probe-eu-central-1-public', '222222222222', 'eu-central-1'],
    ]);
  });

  it('the probe Lambda: the pinned Node.js runtime, arm64, small memory sized by cluster count, timeout from the longest hold', () => {
    const t = single();
    t.resourceCountIs('AWS::Lambda::Function', 1);
    const fn = Object.values(t.findResources('AWS::Lambda::Function'))[0]!.Properties;
    expect(fn.Runtime).toBe(PROBE_RUNTIME.name); // named in the construct: a CDK upgrade never changes it
    expect(PROBE_RUNTIME.name).toBe('nodejs24.x');
    expect(fn.Architectures).toEqual(['arm64']);
    expect(fn.MemorySize).toBe(512); // one cluster: 512 MB, for the CPU share an honest handshake time needs (bench lambda-cpu)
    expect(fn.Timeout).toBe(lambdaRunSeconds(360)); // 6 m hold + the session, credentials, publishing and margin
    expect(lambdaRunSeconds(360)).toBe(360 + 60);
    const env = JSON.parse(fn.Environment.Variables.KSP_LOCATION_CONFIG);
    expect(env).toMatchObject({ location: 'eu-west-1-public', region: 'eu-west-1', clusters: [{ name: 'prod-eu', auth: { type: 'eks', clusterName: 'prod-eu' } }] });
  });

  it('VPC placement: the configured subnets, its own security group and the configured ones when a VPC is given, none otherwise', () => {
    vpcStack().hasResourceProperties('AWS::Lambda::Function', {
      VpcConfig: { SubnetIds: ['subnet-0a1b2c3d4e5f60718', 'subnet-1a2b3c4d5e6f70819'], SecurityGroupIds: [{ 'Fn::GetAtt': [Match.stringLikeRegexp('NetworkSecurityGroup'), 'GroupId'] }, 'sg-0a1b2c3d4e5f60718'] },
    });
    const fn = Object.values(single().findResources('AWS::Lambda::Function'))[0]!.Properties;
    expect(fn.VpcConfig).toBeUndefined();
  });

  it('only the clusters named for a location are baked into its function', () => {
    const t = Template.fromStack(stacksOf(EXAMPLES[1]!)[1]!);
    const fn = Object.values(t.findResources('AWS::Lambda::Function'))[0]!.Properties;
    expect(JSON.parse(fn.Environment.Variables.KSP_LOCATION_CONFIG).clusters.map((c: { name: string }) => c.name)).toEqual(['shared-gitops']);
  });

  it('EventBridge Scheduler schedules with their payloads', () => {
    const t = single();
    t.resourceCountIs('AWS::Scheduler::Schedule', 2);
    const schedules = Object.values(t.findResources('AWS::Scheduler::Schedule')).map((r) => r.Properties);
    expect(schedules.map((s) => s.ScheduleExpression).sort()).toEqual(['rate(1 hour)', 'rate(5 minutes)']);
    const inputs = schedules.map((s) => JSON.parse(s.Target.Input)).sort((a, b) => a.schedule.localeCompare(b.schedule));
    expect(inputs).toEqual([
      { schedule: 'long', holds: ['6m'], keepalives: ['kubectl', 'none'] },
      { schedule: 'short', holds: ['0s', '65s'], keepalives: ['kubectl', 'none'] },
    ]);
    for (const s of schedules) expect(s.Target.RetryPolicy.MaximumRetryAttempts).toBe(0);
  });

  it('a log group with the configured retention, used by the function', () => {
    single().hasResourceProperties('AWS::Logs::LogGroup', { RetentionInDays: 30 });
    // Retained after a destroy, so never a fixed name: the next deploy would fail on the one left behind.
    for (const lg of Object.values(single().findResources('AWS::Logs::LogGroup'))) {
      expect(lg.Properties.LogGroupName).toBeUndefined();
      expect(lg.DeletionPolicy).toBe('Retain');
    }
    vpcStack().hasResourceProperties('AWS::Logs::LogGroup', { RetentionInDays: 90 });
    single().hasResourceProperties('AWS::Lambda::Function', { LoggingConfig: { LogGroup: Match.anyValue() } });
  });

  it('least-privilege IAM: no "*" action anywhere; PutMetricData only for our namespace; only its secrets; DescribeCluster only its clusters', () => {
    for (const path of EXAMPLES) {
      for (const stack of stacksOf(path)) {
        const t = Template.fromStack(stack);
        const statements = Object.values(t.findResources('AWS::IAM::Policy')).flatMap((p) => p.Properties.PolicyDocument.Statement);
        for (const st of statements) for (const a of [st.Action].flat()) expect(a).not.toMatch(/(^|:)\*$/);
        const put = statements.find((st) => st.Action === 'cloudwatch:PutMetricData');
        expect(put.Condition).toEqual({ StringEquals: { 'cloudwatch:namespace': METRIC_NAMESPACE } });
      }
    }
    const gitops = Template.fromStack(stacksOf(EXAMPLES[1]!)[1]!);
    const st = Object.values(gitops.findResources('AWS::IAM::Policy')).flatMap((p) => p.Properties.PolicyDocument.Statement);
    expect(st.find((x) => x.Action === 'secretsmanager:GetSecretValue').Resource).toBe('arn:aws:secretsmanager:eu-central-1:222222222222:secret:ksp/shared-gitops-a1B2c3');
    expect(st.some((x) => x.Action === 'eks:DescribeCluster')).toBe(false);
    const eks = Object.values(single().findResources('AWS::IAM::Policy')).flatMap((p) => p.Properties.PolicyDocument.Statement);
    expect(JSON.stringify(eks.find((x) => x.Action === 'eks:DescribeCluster').Resource)).toContain(':cluster/prod-eu');
  });

  it('alarms: UpgradeSuccess per cluster × operation × transport, M of N, missing data breaching', () => {
    const alarms = Object.values(single().findResources('AWS::CloudWatch::Alarm')).map((a) => a.Properties);
    const upgrade = alarms.filter((a) => a.MetricName === 'UpgradeSuccess');
    expect(upgrade).toHaveLength(4);
    for (const a of upgrade) {
      expect(a).toMatchObject({ Namespace: METRIC_NAMESPACE, Statistic: 'Minimum', Period: 300, Threshold: 1, ComparisonOperator: 'LessThanThreshold', EvaluationPeriods: 3, DatapointsToAlarm: 2, TreatMissingData: 'breaching' });
      expect(a.Dimensions.map((d: { Name: string }) => d.Name).sort()).toEqual([...METRICS.UpgradeSuccess.dimensions].sort());
      expect(a.AlarmActions).toHaveLength(1);
    }
    expect(upgrade.map((a) => a.Dimensions.filter((d: { Name: string }) => d.Name === 'Operation' || d.Name === 'Transport').map((d: { Value: string }) => d.Value).join('/')).sort()).toEqual([
      'exec/spdy',
      'exec/websocket',
      'portforward/spdy',
      'portforward/websocket',
    ]);
  });

  it('alarms: HoldSurvived per keepalive mode and hold, with the period of the schedule that runs that hold', () => {
    const alarms = Object.values(single().findResources('AWS::CloudWatch::Alarm')).map((a) => a.Properties);
    const hold = alarms.filter((a) => a.MetricName === 'HoldSurvived');
    // holds 65s (every 5 min) and 6m (hourly) × kubectl/none × 2 ops × 2 transports
    expect(hold).toHaveLength(16);
    const dims = (a: { Dimensions: { Name: string; Value: string }[] }) => Object.fromEntries(a.Dimensions.map((d) => [d.Name, d.Value]));
    expect(new Set(hold.map((a) => `${dims(a).Keepalive}/${dims(a).HoldSeconds}/${a.Period}`))).toEqual(new Set(['kubectl/65/300', 'none/65/300', 'kubectl/360/3600', 'none/360/3600']));
    for (const a of hold) expect(a.TreatMissingData).toBe('breaching');
  });

  it('alarms: SilentFallback per operation, and the function\'s own Errors and Throttles', () => {
    const alarms = Object.values(single().findResources('AWS::CloudWatch::Alarm')).map((a) => a.Properties);
    const fallback = alarms.filter((a) => a.MetricName === 'SilentFallback');
    expect(fallback).toHaveLength(2);
    for (const a of fallback) expect(a).toMatchObject({ Statistic: 'Maximum', Threshold: 1, ComparisonOperator: 'GreaterThanOrEqualToThreshold' });
    expect(alarms.filter((a) => a.Namespace === 'AWS/Lambda').map((a) => a.MetricName).sort()).toEqual(['Errors', 'Throttles']);
  });

  it('an SNS topic for the alarms: encrypted, TLS only, the email subscribed', () => {
    const t = single();
    t.hasResourceProperties('AWS::SNS::Topic', { KmsMasterKeyId: Match.anyValue() });
    t.hasResourceProperties('AWS::SNS::TopicPolicy', { PolicyDocument: { Statement: Match.arrayWith([Match.objectLike({ Effect: 'Deny', Condition: { Bool: { 'aws:SecureTransport': 'false' } } })]) } });
    t.hasResourceProperties('AWS::SNS::Subscription', { Protocol: 'email', Endpoint: 'sre-oncall@example.com' });
  });

  it('a dashboard per location: latency and success side by side per transport, disconnect time against the holds', () => {
    const t = single();
    const body = JSON.stringify(Object.values(t.findResources('AWS::CloudWatch::Dashboard'))[0]!.Properties.DashboardBody);
    for (const title of ['prod-eu: handshake latency (ms)', 'prod-eu: upgrade success (0-1)', 'prod-eu: disconnect time vs hold (s)', 'hold 65s', 'hold 360s']) expect(body).toContain(title);
  });

  it.each([
    ['AwsSolutions', (app: App) => new AwsSolutionsChecks(app)],
    ['Serverless', (app: App) => new ServerlessChecks(app)],
  ] as const)('cdk-nag %s: no finding left unexplained, in every stack of every example', (_name, pack) => {
    for (const path of EXAMPLES) {
      const { app, stacks } = apps.get(path)!;
      for (const stack of stacks) {
        const report = pack(app).validateScope(stack);
        expect(report.violations.map((v) => `${v.ruleName}: ${v.violatingResources.map((r) => r.resourceLogicalId).join(',')}`)).toEqual([]);
      }
    }
  });

  it.each(EXAMPLES)('snapshot of %s with asset hashes removed', (path) => {
    for (const stack of stacksOf(path)) {
      const json = JSON.stringify(Template.fromStack(stack).toJSON(), null, 1)
        .replace(/[0-9a-f]{64}(\.zip)?/g, 'ASSET-HASH$1')
        .replace(/"aws:asset:path": "[^"]*"/g, '"aws:asset:path": "ASSET"');
      expect(json).toMatchSnapshot(stack.stackName);
    }
  });
});

describe('cost estimate', () => {
  it('counts the alarms the construct really creates', () => {
    for (const path of EXAMPLES) {
      const config = loadProbeConfig(path);
      for (const [i, stack] of stacksOf(path).entries()) {
        const alarms = Object.keys(Template.fromStack(stack).findResources('AWS::CloudWatch::Alarm')).length;
        expect(estimateMonthlyCost(config, config.locations[i]!).alarms).toBe(alarms);
      }
    }
  });
});

describe('the bundled Lambda', () => {
  it('is the asset CDK deploys, loads with node (the AWS SDK from the runtime) and handles a bad event', () => {
    const { app } = apps.get(EXAMPLES[0]!)!;
    const assembly = app.synth();
    const assetDir = readdirSync(assembly.directory).find((d) => d.startsWith('asset.') && existsSync(join(assembly.directory, d, 'index.mjs')));
    expect(assetDir).toBeDefined();
    const bundle = join(assembly.directory, assetDir!, 'index.mjs');
    // Its size and load time are benchmark targets (npm run bench -- bundle), not test assertions.
    // Lambda's Node.js runtime provides @aws-sdk/*; here the project's node_modules stands in for it.
    const dir = mkdtempSync(join(process.cwd(), '.tmp', 'lambda-smoke-'));
    copyFileSync(bundle, join(dir, 'index.mjs'));
    const runtimeConfig = { project: 'p', location: 'l', region: 'eu-west-1', clusters: [{ name: 'c', endpoint: 'https://127.0.0.1:1', auth: { type: 'eks', clusterName: 'c' }, caData: 'QQ==', target: { namespace: 'n', pod: 'p', port: 8080 } }] };
    const env = { ...process.env, KSP_LOCATION_CONFIG: JSON.stringify(runtimeConfig) };
    const script = `const m = await import(${JSON.stringify(join(dir, 'index.mjs'))}); const out = await m.handler({ holds: ['never'] }, { getRemainingTimeInMillis: () => 60000 }); process.stdout.write(JSON.stringify(out));`;
    const r = spawnSync(process.execPath, ['--input-type=module', '-e', script], { env, encoding: 'utf8', timeout: 30_000 });
    rmSync(dir, { recursive: true, force: true });
    expect(r.status, r.stderr).toBe(0);
    const out = JSON.parse(r.stdout.trim().split('\n').pop()!);
    expect(out).toMatchObject({ ok: false, error: { code: 'CONFIG_INVALID' } });
    expect(out.error.message).toContain('event.holds[0]');
  });
});

describe('fails when…', () => {
  const base = () => structuredClone(loadProbeConfig(EXAMPLES[1]!)) as any;
  const parse = async (raw: unknown) => parseProbeConfig(raw, 'test.yaml');
  const cases: Array<[string, (c: any) => void, RegExp]> = [
    ['a location has a bad account id', (c) => (c.locations[0].account = '1234'), /locations\[0\]\.account "1234" must be a 12-digit AWS account id/],
    ['a region is not a region', (c) => (c.locations[0].region = 'moon-1'), /locations\[0\]\.region "moon-1" is not an AWS region/],
    ['a VPC has no subnets', (c) => (c.locations[0].vpc.subnetIds = []), /locations\[0\]\.vpc\.subnetIds must have at least 1 item/],
    ['a subnet id is malformed', (c) => (c.locations[0].vpc.subnetIds = ['subnet-xyz']), /locations\[0\]\.vpc\.subnetIds\[0\] "subnet-xyz" is not a subnet id/],
    ['a VPC has no security group', (c) => (c.locations[0].vpc.securityGroupIds = []), /securityGroupIds must have at least 1 item/],
    ['a location names an unknown cluster', (c) => (c.locations[1].clusters = ['nope']), /locations\[1\]\.clusters\[0\] "nope" is not a cluster in clusters\[\]/],
    ['two locations share a name', (c) => (c.locations[1].name = c.locations[0].name), /locations\[1\]\.name "corp-vpc-a" is used twice/],
    ['an endpoint is not https', (c) => (c.clusters[0].endpoint = 'http://k8s:8080'), /clusters\[0\]\.endpoint "http:\/\/k8s:8080" must be an https:\/\/ URL/],
    ['an auth type is unknown', (c) => (c.clusters[0].auth = { type: 'password' }), /clusters\[0\]\.auth\.type must be "eks" or "secret"/],
    ['a secret ARN is not one', (c) => (c.clusters[1].auth.secretArn = 'my-secret'), /clusters\[1\]\.auth\.secretArn "my-secret" is not a Secrets Manager secret ARN/],
    ['a target port is out of range', (c) => (c.clusters[0].target.port = 70000), /clusters\[0\]\.target\.port must be a whole number from 1 to 65535/],
    ['a hold cannot fit in Lambda', (c) => (c.schedules[1].holds = ['20m']), /schedules\[1\]\.holds\[0\] 20m is longer than 840s/],
    ['a hold is not a duration', (c) => (c.schedules[0].holds = ['soon']), /schedules\[0\]\.holds\[0\] "soon" is not a duration/],
    ['a schedule expression is not one', (c) => (c.schedules[0].expression = 'every 5 minutes'), /schedules\[0\]\.expression "every 5 minutes" must be rate/],
    ['a keepalive is unknown', (c) => (c.schedules[0].keepalives = ['tcp']), /schedules\[0\]\.keepalives\[0\] "tcp" must be one of kubectl, none/],
    ['datapointsToAlarm exceeds evaluationPeriods', (c) => (c.alarms = { evaluationPeriods: 2, datapointsToAlarm: 3 }), /alarms\.datapointsToAlarm must be a whole number from 1 to 2/],
    ['a log retention CloudWatch does not offer', (c) => (c.logRetentionDays = 45), /logRetentionDays 45 is not one CloudWatch Logs accepts/],
    ['there are no clusters', (c) => (c.clusters = []), /config\.clusters must have at least 1 item/],
  ];
  for (const [name, mutate, message] of cases) {
    it(name, async () => {
      const c = base();
      mutate(c);
      await expect(parse(c)).rejects.toThrow(message);
    });
  }

  it('the config file cannot be read, or is not YAML', () => {
    expect(() => loadProbeConfig('infra/examples/missing.yaml')).toThrow(/missing\.yaml cannot be read \(ENOENT\)/);
  });

  it('memory: 512 MB up to 3 clusters, 1024 MB above, or what memoryMb says', async () => {
    const c = base();
    c.clusters = Array.from({ length: 4 }, (_, i) => ({ ...c.clusters[0], name: `c${i}` }));
    delete c.locations[1].clusters;
    const config = await parse(c);
    expect(functionMemoryMb(config, config.locations[0]!)).toBe(1024);
    expect(functionMemoryMb(await parse({ ...c, clusters: c.clusters.slice(0, 3) }), config.locations[0]!)).toBe(512);
    expect(functionMemoryMb(await parse({ ...c, memoryMb: 128 }), config.locations[0]!)).toBe(128);
    await expect(parse({ ...c, memoryMb: 64 })).rejects.toThrow(/memoryMb must be a whole number from 128 to 10240/);
  });

  it('a location whose clusters do not fit in the Lambda environment', async () => {
    const c = base();
    c.clusters = Array.from({ length: 30 }, (_, i) => ({ ...c.clusters[0], name: `cluster-${i}`, caData: 'A'.repeat(200) }));
    delete c.locations[1].clusters;
    const config = await parse(c);
    expect(() => new StreamProbe(new Stack(new App(), 'S'), 'P', { config, location: config.locations[0]! })).toThrow(/Lambda allows about 3500\. Drop caData/);
  });
});
