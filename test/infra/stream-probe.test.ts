/**
 * CDK assertions for every promise of the StreamProbe construct, cdk-nag
 * (AwsSolutions) with no unexplained finding, and one snapshot per example
 * configuration with asset hashes removed. No AWS credentials are used.
 */
import { IDLE_MARK_SECONDS } from '../../src/probe/idle-devices.js';
import { spawnSync } from 'node:child_process';
import { copyFileSync, readFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative, resolve } from 'node:path';
import { App, Stack } from 'aws-cdk-lib';
import { Match, Template } from 'aws-cdk-lib/assertions';
import { AwsSolutionsChecks, ServerlessChecks } from 'cdk-nag';
import { beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../infra/app.js';
import { loadProbeConfig, readConfigDocument } from '../../src/config/load.js';
import { LocationStack, probePropsFromConfig } from '../../infra/location-stack.js';
import { PROBE_RUNTIME, StreamProbe } from '../../infra/stream-probe.js';
import { estimateMonthlyCost } from '../../src/config/cost.js';
import { lambdaRunSeconds } from '../../src/config/lambda-limits.js';
import { functionMemoryMb, locationSessionStarts, parseProbeConfig, parseRuntimeConfig } from '../../src/config/probe-config.js';
import { PROBE_PROCESS_ENV } from '../../src/config/process-env.js';
import { COMPRESSED_PREFIX } from '../../src/config/runtime-config.js';
import { randomBytes } from 'node:crypto';
import { METRIC_NAMESPACE, METRICS } from '../../src/metrics/contract.js';
import { caData } from '../helpers/ca-data.js';

const EXAMPLES = ['infra/examples/single-location.yaml', 'infra/examples/multi-location.yaml', 'infra/examples/private-vpc.yaml'];
const apps = new Map<string, { app: App; stacks: LocationStack[] }>();

beforeAll(() => {
  mkdirSync(join(process.cwd(), '.tmp'), { recursive: true });
  for (const path of EXAMPLES) {
    const app = new App({ outdir: mkdtempSync(join(tmpdir(), 'ksp-cdk-')) });
    apps.set(path, { app, stacks: buildApp(app, path).locations });
  }
}, 120_000);

const stacksOf = (path: string) => apps.get(path)!.stacks;
const single = () => Template.fromStack(stacksOf(EXAMPLES[0]!)[0]!);
const vpcStack = () => Template.fromStack(stacksOf(EXAMPLES[1]!)[0]!);

describe('StreamProbe: what each location gets', () => {
  it("one stack per location, in that location's account and region", () => {
    expect(stacksOf(EXAMPLES[1]!).map((s) => [s.stackName, s.account, s.region])).toEqual([
      ['kube-stream-probe-corp-vpc-a', '222222222222', 'us-east-1'],
      ['kube-stream-probe-eu-central-1-public', '222222222222', 'eu-central-1'],
    ]);
  });

  it('the probe Lambda: the pinned Node.js runtime, arm64, small memory sized by cluster count, timeout from the longest hold', () => {
    const t = single();
    // The probe, and the notifier (the same bundle's second entry: infra/notifier.ts).
    t.resourceCountIs('AWS::Lambda::Function', 2);
    const fn = Object.values(t.findResources('AWS::Lambda::Function', { Properties: { Handler: 'index.handler' } }))[0]!.Properties;
    const notifier = Object.values(t.findResources('AWS::Lambda::Function', { Properties: { Handler: 'index.notify' } }))[0]!.Properties;
    expect(notifier).toMatchObject({ Runtime: PROBE_RUNTIME.name, Architectures: ['arm64'], MemorySize: 256, Timeout: 30 });
    expect(notifier.Code).toEqual(fn.Code); // one asset
    expect(fn.Runtime).toBe(PROBE_RUNTIME.name); // named in the construct: a CDK upgrade never changes it
    expect(PROBE_RUNTIME.name).toBe('nodejs24.x');
    expect(fn.Architectures).toEqual(['arm64']);
    expect(fn.MemorySize).toBe(512); // one cluster: 512 MB, for the CPU share an honest handshake time needs (bench lambda-cpu)
    expect(fn.Timeout).toBe(lambdaRunSeconds(360)); // 6 m hold + the pacer's window, the session, credentials, publishing and margin
    expect(lambdaRunSeconds(360)).toBe(360 + 20 + 60);
    const env = JSON.parse(fn.Environment.Variables.KSP_LOCATION_CONFIG);
    expect(env).toMatchObject({
      location: 'eu-west-1-public',
      region: 'eu-west-1',
      clusters: [{ name: 'prod-eu', auth: { type: 'eks', clusterName: 'prod-eu' } }],
    });
  });

  it('VPC placement: the configured subnets, its own security group and the configured ones when a VPC is given, none otherwise', () => {
    vpcStack().hasResourceProperties('AWS::Lambda::Function', {
      VpcConfig: {
        SubnetIds: ['subnet-0a1b2c3d4e5f60718', 'subnet-1a2b3c4d5e6f70819'],
        SecurityGroupIds: [{ 'Fn::GetAtt': [Match.stringLikeRegexp('NetworkSecurityGroup'), 'GroupId'] }, 'sg-0a1b2c3d4e5f60718'],
      },
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
      { schedule: 'long', holds: ['360s'], keepalives: ['kubectl', 'none'], operations: ['exec', 'portforward'], transports: ['websocket', 'spdy'] },
      { schedule: 'short', holds: ['0s', '65s'], keepalives: ['kubectl', 'none'], operations: ['exec', 'portforward'], transports: ['websocket', 'spdy'] },
    ]);
    for (const s of schedules) expect(s.Target.RetryPolicy.MaximumRetryAttempts).toBe(0);
    // In the location's own group, whose Scheduler metrics (TargetErrorCount…) the probe-health ticket watches.
    t.hasResourceProperties('AWS::Scheduler::ScheduleGroup', { Name: 'kube-stream-probe-eu-west-1-public' });
    const group = Object.keys(t.findResources('AWS::Scheduler::ScheduleGroup'))[0]!;
    for (const [, s] of Object.entries(t.findResources('AWS::Scheduler::Schedule'))) {
      expect(s.Properties.GroupName).toBe('kube-stream-probe-eu-west-1-public');
      expect(s.DependsOn).toContain(group); // a literal name makes no reference: created after the group, explicitly
    }
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
    expect(st.find((x) => x.Action === 'secretsmanager:GetSecretValue').Resource).toBe(
      'arn:aws:secretsmanager:eu-central-1:222222222222:secret:ksp/shared-gitops-a1B2c3',
    );
    expect(st.some((x) => x.Action === 'eks:DescribeCluster')).toBe(false);
    const eks = Object.values(single().findResources('AWS::IAM::Policy')).flatMap((p) => p.Properties.PolicyDocument.Statement);
    expect(JSON.stringify(eks.find((x) => x.Action === 'eks:DescribeCluster').Resource)).toContain(':cluster/prod-eu');
  });

  const alarmsOf = (t: Template) => Object.values(t.findResources('AWS::CloudWatch::Alarm')).map((a) => a.Properties);
  // A metric-math alarm (the SLO's) has its dimensions in its Metrics, none of its own.
  const dimsOf = (a: { Dimensions?: { Name: string; Value: string }[] }) => Object.fromEntries((a.Dimensions ?? []).map((d) => [d.Name, d.Value]));

  it('alarms: UpgradeSuccess per cluster × operation × transport, M of N, missing data breaching (the probe did not run), notifying no one alone', () => {
    const upgrade = alarmsOf(single()).filter((a) => a.MetricName === 'UpgradeSuccess');
    expect(upgrade).toHaveLength(4);
    for (const a of upgrade) {
      expect(a).toMatchObject({
        Namespace: METRIC_NAMESPACE,
        Statistic: 'Minimum',
        Period: 600,
        Threshold: 1,
        ComparisonOperator: 'LessThanThreshold',
        EvaluationPeriods: 3,
        DatapointsToAlarm: 2,
        TreatMissingData: 'breaching',
      });
      expect(a.Dimensions.map((d: { Name: string }) => d.Name).sort()).toEqual([...METRICS.UpgradeSuccess.dimensions].sort());
      expect(a.AlarmActions).toBeUndefined();
      expect(a.OKActions).toBeUndefined();
    }
    expect(upgrade.map((a) => `${dimsOf(a).Operation}/${dimsOf(a).Transport}`).sort()).toEqual([
      'exec/spdy',
      'exec/websocket',
      'portforward/spdy',
      'portforward/websocket',
    ]);
  });

  it("alarms: HoldSurvived only for holds with kubectl's keepalive, with the period of the schedule that runs the hold, missing data not breaching", () => {
    const hold = alarmsOf(single()).filter((a) => a.MetricName === 'HoldSurvived');
    // holds 65s (every 5 min) and 6m (hourly) × kubectl × 2 ops × 2 transports; none for keepalive "none".
    // Periods of two runs: a path failing every other run stays in ALARM (test/infra/alarm-storm.test.ts).
    expect(hold).toHaveLength(8);
    expect(new Set(hold.map((a) => `${dimsOf(a).Keepalive}/${dimsOf(a).HoldSeconds}/${a.Period}`))).toEqual(new Set(['kubectl/65/600', 'kubectl/360/7200']));
    for (const a of hold) expect(a).toMatchObject({ TreatMissingData: 'notBreaching' });
    for (const a of hold) expect(a.AlarmActions).toBeUndefined();
  });

  it("alarms: KubectlWorks and SilentFallback per operation, ProbeError per cluster, the function's Errors, Throttles and Duration, Scheduler errors", () => {
    const alarms = alarmsOf(single());
    const by = (name: string) => alarms.filter((a) => a.MetricName === name);
    expect(by('KubectlWorks')).toHaveLength(2);
    for (const a of by('KubectlWorks'))
      expect(a).toMatchObject({ Statistic: 'Minimum', Threshold: 1, ComparisonOperator: 'LessThanThreshold', TreatMissingData: 'notBreaching' });
    expect(by('SilentFallback')).toHaveLength(2);
    for (const a of by('SilentFallback'))
      expect(a).toMatchObject({ Statistic: 'Maximum', Threshold: 1, ComparisonOperator: 'GreaterThanOrEqualToThreshold', TreatMissingData: 'notBreaching' });
    expect(by('ProbeError')).toHaveLength(1);
    // The flapping ticket's component: three flapped runs within an hour (the densest schedule runs every 5 minutes).
    expect(by('Flapping')).toEqual([
      expect.objectContaining({ Statistic: 'Sum', Period: 3600, Threshold: 3, ComparisonOperator: 'GreaterThanOrEqualToThreshold', EvaluationPeriods: 1 }),
    ]);
    // The SLO's burn rates in metric math: 1 h and 5 min over 14.4, 6 h and 30 min over 6, on KubectlUpgrade's mean.
    const burn = alarms.filter((a) => (a as { Metrics?: unknown }).Metrics) as unknown as {
      AlarmName: string;
      Threshold: number;
      Metrics: { Expression?: string; MetricStat?: { Period: number; Stat: string; Metric: { MetricName: string } } }[];
    }[];
    expect(burn.map((a) => [a.AlarmName.replace(/^.*-slo-/, ''), a.Threshold, a.Metrics[1]!.MetricStat!.Period, a.Metrics[0]!.Expression])).toEqual([
      ['fast-1h', 14.4, 3600, '(1 - sli_1h) / 0.001'],
      ['fast-5m', 14.4, 300, '(1 - sli_5m) / 0.001'],
      ['slow-6h', 6, 21600, '(1 - sli_6h) / 0.001'],
      ['slow-30m', 6, 1800, '(1 - sli_30m) / 0.001'],
    ]);
    for (const a of burn) expect(a.Metrics[1]!.MetricStat).toMatchObject({ Stat: 'Average', Metric: { MetricName: 'KubectlUpgrade' } });
    const probeFn = (a: { Dimensions?: { Value: unknown }[] }) => JSON.stringify(a.Dimensions).includes('ProbeFunction');
    expect(
      alarms
        .filter((a) => a.Namespace === 'AWS/Lambda' && probeFn(a as never))
        .map((a) => a.MetricName)
        .sort(),
    ).toEqual(['Duration', 'Errors', 'Throttles']);
    // The notifier's own failures page directly: its Errors, and EventBridge failing to invoke it.
    expect(
      alarms
        .filter((a) => /notifier-/.test(String(a.AlarmName)))
        .map((a) => [a.AlarmName, a.MetricName, a.AlarmActions?.[0]?.Ref?.replace(/[0-9A-F]{8}$/, '')]),
    ).toEqual([
      ['kube-stream-probe-eu-west-1-public-notifier-failed', 'Errors', 'ProbePageTopic'],
      ['kube-stream-probe-eu-west-1-public-notifier-undelivered', 'FailedInvocations', 'ProbePageTopic'],
    ]);
    const duration = alarms.find((a) => a.MetricName === 'Duration')!;
    expect(duration.Threshold).toBe(Math.round(lambdaRunSeconds(360) * 1000 * 0.9));
    const scheduler = alarms.filter((a) => a.Namespace === 'AWS/Scheduler');
    expect(scheduler.map((a) => a.MetricName).sort()).toEqual(['InvocationDroppedCount', 'TargetErrorCount']);
    for (const a of scheduler) expect(a.Dimensions).toEqual([{ Name: 'ScheduleGroup', Value: 'kube-stream-probe-eu-west-1-public' }]);
    // Nothing about holds without pings: they are measured (IdleTimeout), not alarmed.
    expect(alarms.filter((a) => dimsOf(a as never).Keepalive === 'none')).toEqual([]);
  });

  it('two SNS topics, page and ticket: encrypted with the one customer key, TLS only, the email subscribed to both', () => {
    const t = single();
    t.resourceCountIs('AWS::SNS::Topic', 2);
    t.resourceCountIs('AWS::KMS::Key', 1);
    for (const topic of Object.values(t.findResources('AWS::SNS::Topic')))
      expect(topic.Properties.KmsMasterKeyId).toEqual({ 'Fn::GetAtt': [expect.stringMatching(/AlarmTopicKey/), 'Arn'] });
    t.hasResourceProperties('AWS::SNS::TopicPolicy', {
      PolicyDocument: { Statement: Match.arrayWith([Match.objectLike({ Effect: 'Deny', Condition: { Bool: { 'aws:SecureTransport': 'false' } } })]) },
    });
    const subscriptions = Object.values(t.findResources('AWS::SNS::Subscription')).map((x) => x.Properties);
    expect(subscriptions.map((x) => [x.Protocol, x.Endpoint, x.TopicArn.Ref.replace(/[0-9A-F]{8}$/, '')]).sort()).toEqual([
      ['email', 'sre-oncall@example.com', 'ProbePageTopic'],
      ['email', 'sre-oncall@example.com', 'ProbeTicketTopic'],
    ]);
  });

  it('a dashboard for the upgrade meeting: cross-location row, A/B now and over a day, holds against the devices timers, IdleTimeout, p50/p99, latest verdicts', () => {
    const t = single();
    const body = JSON.parse(
      Object.values(t.findResources('AWS::CloudWatch::Dashboard'))[0]!
        .Properties.DashboardBody['Fn::Join'][1].map((x: unknown) => (typeof x === 'string' ? x : 'TOKEN'))
        .join(''),
    );
    const titles = body.widgets.map((w: any) => w.properties.title);
    for (const title of [
      'kubectl works (1 = yes, incl. via fallback): every location in this account and region',
      'prod-eu: now (1 = upgraded and echoed; kubectl works)',
      'prod-eu: upgrade success over the last day (share of runs)',
      'prod-eu: holds survived (0/1)',
      "prod-eu: disconnect time (s since the 101) against the devices' timers",
      'prod-eu: measured idle timeout (s, holds without pings)',
      'prod-eu: handshake latency p50 / p99 (ms, dial start to 101)',
      'prod-eu: latest verdicts and diagnoses',
    ])
      expect(titles).toContain(title);
    const disconnect = body.widgets.find((w: any) => w.properties.title?.startsWith('prod-eu: disconnect time'));
    expect(disconnect.properties.annotations.horizontal.map((a: any) => a.value)).toEqual([...IDLE_MARK_SECONDS]);
    expect(IDLE_MARK_SECONDS).toEqual([30, 60, 100, 240, 350, 600, 1200]);
    const latency = body.widgets.find((w: any) => w.properties.title?.startsWith('prod-eu: handshake latency'));
    expect(new Set(latency.properties.metrics.map((m: any) => m[m.length - 1].stat))).toEqual(new Set(['p50', 'p99']));
    const logs = body.widgets.find((w: any) => w.type === 'log');
    expect(logs.properties.query).toContain('filter msg = "verdict"');
    expect(logs.properties.view).toBe('table');
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
  it('counts the alarms the construct really creates, composites included', () => {
    for (const path of EXAMPLES) {
      const config = loadProbeConfig(path);
      for (const [i, stack] of stacksOf(path).entries()) {
        const t = Template.fromStack(stack);
        const alarms = Object.keys(t.findResources('AWS::CloudWatch::Alarm')).length + Object.keys(t.findResources('AWS::CloudWatch::CompositeAlarm')).length;
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
    const runtimeConfig = {
      project: 'p',
      location: 'l',
      region: 'eu-west-1',
      clusters: [
        {
          name: 'c',
          endpoint: 'https://127.0.0.1:1',
          auth: { type: 'eks', clusterName: 'c' },
          caData: caData(),
          target: { namespace: 'n', pod: 'p', port: 8080 },
        },
      ],
    };
    const notifyConfig = { location: 'l', region: 'eu-west-1', logGroup: 'g', routes: {} };
    const env = { ...process.env, KSP_LOCATION_CONFIG: JSON.stringify(runtimeConfig), KSP_NOTIFY_CONFIG: JSON.stringify(notifyConfig) };
    // Its second entry, the notifier, refuses an event that is not an alarm's state change, naming the field.
    const script = `const m = await import(${JSON.stringify(join(dir, 'index.mjs'))}); const n = await m.notify({ 'detail-type': 'x' }).catch((e) => e.message); process.stderr.write('NOTIFY ' + n + '\\n'); const out = await m.handler({ holds: ['never'] }, { getRemainingTimeInMillis: () => 60000 }); process.stdout.write(JSON.stringify(out));`;
    const r = spawnSync(process.execPath, ['--input-type=module', '-e', script], { env, encoding: 'utf8', timeout: 30_000 });
    rmSync(dir, { recursive: true, force: true });
    expect(r.status, r.stderr).toBe(0);
    const out = JSON.parse(r.stdout.trim().split('\n').pop()!);
    expect(out).toMatchObject({ ok: false, error: { code: 'CONFIG_INVALID' } });
    expect(out.error.message).toContain('event.holds[0]');
    expect(r.stderr).toContain('NOTIFY event.detail-type is "x", not "CloudWatch Alarm State Change"');
  });

  it('carries no server half of any protocol: nothing of the lab, no SPDY server role, no exec status writer, no unmasked frame writer', () => {
    const { app } = apps.get(EXAMPLES[0]!)!;
    const assembly = app.synth();
    const assetDir = readdirSync(assembly.directory).find((d) => d.startsWith('asset.') && existsSync(join(assembly.directory, d, 'index.mjs')))!;
    const code = readFileSync(join(assembly.directory, assetDir, 'index.mjs'), 'utf8');
    const sources: string[] = JSON.parse(readFileSync(join(assembly.directory, assetDir, 'index.mjs.map'), 'utf8')).sources;
    const ours = sources.filter((f) => !f.includes('node_modules')).map((f) => relative(process.cwd(), resolve(assembly.directory, assetDir, f)));
    // The client's own layers are there (the check reads the right map)...
    expect(ours).toEqual(expect.arrayContaining(['src/streaming/spdy/session.ts', 'src/streaming/ws-frame.ts', 'src/streaming/channel/exec-status.ts']));
    // ...and nothing the emulator alone needs.
    expect(ours.filter((f) => f.startsWith('lab/'))).toEqual([]);
    expect(code).toContain('NonZeroExitCode'); // the client reads exec's status
    // What minification keeps: the option's property name and the writer's message (class names are mangled).
    for (const serverOnly of ['command terminated with non-zero exit code', 'readBackpressure']) expect(code).not.toContain(serverOnly);
  });
});

describe('fails when…', () => {
  const base = () => readConfigDocument(EXAMPLES[1]!) as any;
  const parse = async (raw: unknown) => parseProbeConfig(raw, 'test.yaml');
  const cases: Array<[string, (c: any) => void, RegExp]> = [
    ['a location has a bad account id', (c) => (c.locations[0].account = '1234'), /locations\[0\]\.account "1234" must be a 12-digit AWS account id/],
    ['a region is not a region', (c) => (c.locations[0].region = 'moon-1'), /locations\[0\]\.region "moon-1" is not an AWS region/],
    ['a VPC has no subnets', (c) => (c.locations[0].vpc.subnetIds = []), /locations\[0\]\.vpc\.subnetIds must have at least 1 item/],
    ['a subnet id is malformed', (c) => (c.locations[0].vpc.subnetIds = ['subnet-xyz']), /locations\[0\]\.vpc\.subnetIds\[0\] "subnet-xyz" is not a subnet id/],
    ['a VPC has no security group', (c) => (c.locations[0].vpc.securityGroupIds = []), /securityGroupIds must have at least 1 item/],
    [
      'a location names an unknown cluster',
      (c) => (c.locations[1].clusters = ['nope']),
      /locations\[1\]\.clusters\[0\] "nope" is not a cluster in clusters\[\]/,
    ],
    ['two locations share a name', (c) => (c.locations[1].name = c.locations[0].name), /locations\[1\]\.name "corp-vpc-a" is used twice/],
    ['an endpoint is not https', (c) => (c.clusters[0].endpoint = 'http://k8s:8080'), /clusters\[0\]\.endpoint "http:\/\/k8s:8080" must be an https:\/\/ URL/],
    ['an auth type is unknown', (c) => (c.clusters[0].auth = { type: 'password' }), /clusters\[0\]\.auth\.type must be "eks" or "secret"/],
    [
      'a secret ARN is not one',
      (c) => (c.clusters[1].auth.secretArn = 'my-secret'),
      /clusters\[1\]\.auth\.secretArn "my-secret" is not a Secrets Manager secret ARN/,
    ],
    ['a target port is out of range', (c) => (c.clusters[0].target.port = 70000), /clusters\[0\]\.target\.port 70000 is not a TCP port \(1-65535\)/],
    [
      'a hold longer than the task runner takes',
      (c) => (c.schedules[1].holds = ['3h']),
      /schedules\[1\]\.holds\[0\] 10800 s is longer than the task runner's 7200 s \(taskMaxHold\); holds up to 820 s run in Lambda, longer ones as an ECS task/,
    ],
    ['a hold is not a duration', (c) => (c.schedules[0].holds = ['soon']), /schedules\[0\]\.holds\[0\] "soon" is not a duration/],
    ['a schedule expression is not one', (c) => (c.schedules[0].expression = 'every 5 minutes'), /schedules\[0\]\.expression "every 5 minutes" must be rate/],
    ['a keepalive is unknown', (c) => (c.schedules[0].keepalives = ['tcp']), /schedules\[0\]\.keepalives\[0\] "tcp" is not one of kubectl, none, sdk/],
    [
      'datapointsToAlarm exceeds evaluationPeriods',
      (c) => (c.alarms = { evaluationPeriods: 2, datapointsToAlarm: 3 }),
      /alarms\.datapointsToAlarm 3 must be a whole number from 1 to evaluationPeriods \(2\)/,
    ],
    ['a log retention CloudWatch does not offer', (c) => (c.logRetentionDays = 45), /logRetentionDays 45 is not one CloudWatch Logs accepts/],
    ['there are no clusters', (c) => (c.clusters = []), /config\.clusters must have at least 1 item/],
    [
      'ticketHoldsWithoutPings is not a boolean',
      (c) => (c.alarms = { ticketHoldsWithoutPings: 'yes' }),
      /alarms\.ticketHoldsWithoutPings must be true or false/,
    ],
    ['a ticket e-mail is not one', (c) => (c.ticketEmail = 'backlog'), /ticketEmail "backlog" is not an email address/],
    [
      'a weekday-only cron (its weekend gap exceeds the one-day alarm period)',
      (c) => (c.schedules[0].expression = 'cron(0/10 * ? * MON-FRI *)'),
      /schedules\[0\]\.expression "cron\(0\/10 \* \? \* MON-FRI \*\)" needs an alarm period of 346800 s; CloudWatch allows at most one day/,
    ],
    [
      'a cron with a field out of range',
      (c) => (c.schedules[0].expression = 'cron(0 25 * * ? *)'),
      /schedules\[0\]\.expression: "cron\(0 25 \* \* \? \*\)": hours: "25" is not in 0-23/,
    ],
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

  it('memory: the smallest of 512 / 1024 / 1769 MB whose CPU paces the largest Lambda run, or what memoryMb says', async () => {
    const c = base();
    const withClusters = (n: number) => {
      const x = structuredClone(c);
      x.clusters = Array.from({ length: n }, (_, i) => ({ ...c.clusters[0], name: `c${i}` }));
      delete x.locations[1].clusters;
      return x;
    };
    const memory = async (n: number) => {
      const config = await parse(withClusters(n));
      return { mb: functionMemoryMb(config, config.locations[0]!), starts: locationSessionStarts(config, config.locations[0]!) };
    };
    // The base config's Lambda schedule: exec and port-forward × both transports × its holds and keepalives.
    const one = (await memory(1)).starts;
    expect(one).toBeGreaterThan(0);
    expect(await memory(1)).toEqual({ mb: 512, starts: one });
    const at = (starts: number) => Math.ceil(starts / one);
    expect((await memory(Math.floor(289 / one))).mb).toBe(512); // 512 MB paces 289 starts in the 20 s window
    expect((await memory(at(290))).mb).toBe(1024);
    expect((await memory(at(579))).mb).toBe(1769);
    const config = await parse(withClusters(4));
    expect(functionMemoryMb(await parse({ ...withClusters(1), memoryMb: 128 }), config.locations[0]!)).toBe(128);
    await expect(parse({ ...c, memoryMb: 64 })).rejects.toThrow(/memoryMb 64 must be 128-10240 MB/);
  });

  it('a location whose clusters do not fit in the Lambda environment', async () => {
    const c = base();
    // A CA's key and signature do not compress, and 30 CA certificates do not fit even compressed.
    c.clusters = Array.from({ length: 30 }, (_, i) => ({ ...c.clusters[0], name: `cluster-${i}`, caData: caData(`ca-${i}`) }));
    delete c.locations[1].clusters;
    const config = await parse(c);
    const stack = new Stack(new App(), 'S');
    expect(() => new StreamProbe(stack, 'P', probePropsFromConfig(stack, config, config.locations[0]!))).toThrow(
      /compressed\); Lambda allows about 3500 of environment\. Drop caData/,
    );
  });

  it("the largest location one stack holds: 20 clusters (compressed config, memory that paces them), 21 refused by CloudFormation's limit; with transfers 12, 13 refused by the composite limit", async () => {
    const many = (example: string, n: number) => {
      const c = readConfigDocument(example) as any;
      c.clusters = Array.from({ length: n }, (_, i) => ({
        ...c.clusters[0],
        name: `prod-${i}`,
        endpoint: `https://${randomBytes(16).toString('hex').toUpperCase()}.gr7.eu-west-1.eks.amazonaws.com`,
      }));
      for (const l of c.locations) delete l.clusters;
      return c;
    };
    const synth = async (c: any) => {
      const config = await parse(c);
      const stack = new Stack(new App(), 'S', { env: { account: '111111111111', region: 'eu-west-1' } });
      new StreamProbe(stack, 'P', probePropsFromConfig(stack, config, config.locations[0]!));
      return { config, template: Template.fromStack(stack) };
    };
    const c = many('infra/examples/single-location.yaml', 20);
    const { config, template } = await synth(c);
    expect(Object.keys(template.toJSON().Resources).length).toBeLessThanOrEqual(480);
    const [fn] = Object.values(template.findResources('AWS::Lambda::Function', { Properties: { Handler: 'index.handler' } })) as any[];
    const env = fn.Properties.Environment.Variables;
    expect(Buffer.byteLength(JSON.stringify(env))).toBeLessThan(4096); // Lambda's limit on all variables together
    expect(env).toMatchObject(PROBE_PROCESS_ENV); // glibc's trimming (test/unit/process-env.test.ts), within that limit
    expect(env.KSP_LOCATION_CONFIG.startsWith(COMPRESSED_PREFIX)).toBe(true);
    const read = parseRuntimeConfig(env.KSP_LOCATION_CONFIG);
    expect(read.clusters.map((x) => [x.name, x.endpoint])).toEqual(c.clusters.map((x: any) => [x.name, x.endpoint]));
    expect(fn.Properties.MemorySize).toBe(functionMemoryMb(config, config.locations[0]!));
    expect(fn.Properties.MemorySize).toBe(512); // 20 × 12 = 240 session starts: 512 MB paces 289
    // Every composite names at most 100 alarms (CloudWatch's limit).
    for (const a of Object.values(template.findResources('AWS::CloudWatch::CompositeAlarm')) as any[])
      expect(JSON.stringify(a.Properties.AlarmRule).match(/ALARM\(/g)!.length).toBeLessThanOrEqual(100);
    await expect(synth(many('infra/examples/single-location.yaml', 21))).rejects.toThrow(
      /clusters are 21: this location's stack would hold \d+ resources .*CloudFormation allows 500 per stack .*split the clusters across locations/,
    );
    await synth(many('infra/examples/multi-location.yaml', 12));
    await expect(synth(many('infra/examples/multi-location.yaml', 13))).rejects.toThrow(
      /clusters are 13: the transfers ticket composite alarm would name 104 alarms \(8 per cluster\), and CloudWatch allows 100 .*at most 12 such clusters per location/,
    );
    expect(() => parseRuntimeConfig(`${COMPRESSED_PREFIX}bm90IGJyb3RsaQ==`)).toThrow(
      /KSP_LOCATION_CONFIG starts with br64: but is not brotli-compressed base64/,
    );
  });
});
