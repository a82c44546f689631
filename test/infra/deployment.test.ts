/**
 * The rules a real AWS account enforces on a first deployment, checked on the
 * synthesized templates by following their references the way AWS does: an
 * alarm's action reaches a topic whose key admits CloudWatch; a function in a
 * VPC has a role that may create network interfaces; a private VPC without
 * NAT gets the interface endpoints the function calls and egress to nothing
 * else; Lambda never retries a run; names fit Lambda's limits. No credentials.
 */
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { App } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../infra/app.js';
import type { LocationStack } from '../../infra/location-stack.js';
import { loadProbeConfig, readConfigDocument } from '../../src/config/load.js';
import { parseProbeConfig } from '../../src/config/probe-config.js';

type Resources = Record<string, { Type: string; Properties: any; DeletionPolicy?: string }>;

const synth = (path: string) => {
  const app = new App({ outdir: mkdtempSync(join(tmpdir(), 'ksp-cdk-deploy-')) });
  const stacks = buildApp(app, path).locations;
  const assembly = app.synth();
  return { app, stacks, assembly };
};

let single: LocationStack;
let multi: LocationStack[];
let priv: LocationStack;
let privMissingContext: unknown;
beforeAll(() => {
  single = synth('infra/examples/single-location.yaml').stacks[0]!;
  multi = synth('infra/examples/multi-location.yaml').stacks;
  const p = synth('infra/examples/private-vpc.yaml');
  priv = p.stacks[0]!;
  privMissingContext = p.assembly.manifest.missing;
}, 120_000);

const resources = (s: LocationStack): Resources => Template.fromStack(s).toJSON().Resources;
const ofType = (r: Resources, type: string) => Object.entries(r).filter(([, v]) => v.Type === type);
const ref = (v: any): string | undefined => v?.Ref ?? v?.['Fn::GetAtt']?.[0];
/** A group's egress rules, inline or as separate resources (CDK writes rules to other groups separately). */
const egressOf = (r: Resources, sgId: string): any[] => [
  ...(r[sgId]!.Properties.SecurityGroupEgress ?? []),
  ...ofType(r, 'AWS::EC2::SecurityGroupEgress')
    .filter(([, e]) => ref(e.Properties.GroupId) === sgId)
    .map(([, e]) => e.Properties),
];

describe('alarms can notify: alarm → topic → key → key policy admits CloudWatch', () => {
  it.each([
    ['single-location', () => single],
    ['private-vpc', () => priv],
  ])('%s: the page and the ticket topic both', (_n, stack) => {
    const r = resources(stack());
    const alarms = [...ofType(r, 'AWS::CloudWatch::Alarm'), ...ofType(r, 'AWS::CloudWatch::CompositeAlarm')];
    const topics = new Set<string>();
    for (const [, alarm] of alarms) {
      for (const action of [...(alarm.Properties.AlarmActions ?? []), ...(alarm.Properties.OKActions ?? [])]) {
        const topic = r[ref(action)!]!;
        topics.add(ref(action)!);
        expect(topic.Type).toBe('AWS::SNS::Topic');
        // Not alias/aws/sns: the AWS-managed key's policy admits no service, so CloudWatch could not publish.
        const keyId = topic.Properties.KmsMasterKeyId;
        expect(JSON.stringify(keyId)).not.toContain('alias/aws/sns');
        const key = r[ref(keyId)!]!;
        expect(key.Type).toBe('AWS::KMS::Key');
        expect(key.Properties.EnableKeyRotation).toBe(true);
        const forCloudWatch = key.Properties.KeyPolicy.Statement.find((st: any) => st.Principal?.Service === 'cloudwatch.amazonaws.com');
        expect(forCloudWatch).toMatchObject({ Effect: 'Allow', Action: ['kms:Decrypt', 'kms:GenerateDataKey*'] });
      }
    }
    expect([...topics].sort()).toEqual([expect.stringMatching(/PageTopic/), expect.stringMatching(/TicketTopic/)]);
  });
});

describe('a function in a VPC can be created', () => {
  it.each([
    ['multi-location corp-vpc-a', () => multi[0]!],
    ['private-vpc', () => priv],
  ])('%s: its role carries AWSLambdaVPCAccessExecutionRole (CDK adds it only to roles it makes)', (_n, stack) => {
    const r = resources(stack());
    const [, fn] = ofType(r, 'AWS::Lambda::Function')[0]!;
    expect(fn.Properties.VpcConfig).toBeDefined();
    const role = r[ref(fn.Properties.Role)!]!;
    expect(JSON.stringify(role.Properties.ManagedPolicyArns)).toContain(':iam::aws:policy/service-role/AWSLambdaVPCAccessExecutionRole');
  });

  it('a VPC without availabilityZones synthesizes with no context lookup (no credentials needed)', () => {
    expect(loadProbeConfig('infra/examples/private-vpc.yaml').locations[0]!.vpc!.availabilityZones).toBeUndefined();
    expect(privMissingContext).toBeUndefined();
  });
});

describe('private subnets without NAT: endpoints and nothing but the egress the probe needs', () => {
  it('interface endpoints for monitoring and eks (DescribeCluster), none for secretsmanager (no secret here), private DNS on, in the location subnets', () => {
    const r = resources(priv);
    const endpoints = ofType(r, 'AWS::EC2::VPCEndpoint').map(([, e]) => e.Properties);
    expect(
      endpoints
        .map((e) => JSON.stringify(e.ServiceName))
        .map((s) => /\.(monitoring|eks|secretsmanager|logs|sts)"/.exec(s)?.[1])
        .sort(),
    ).toEqual(['eks', 'monitoring']);
    for (const e of endpoints) {
      expect(e).toMatchObject({
        VpcEndpointType: 'Interface',
        PrivateDnsEnabled: true,
        VpcId: 'vpc-0c1d2e3f4a5b60718',
        SubnetIds: ['subnet-0c1d2e3f4a5b60718', 'subnet-1c2d3e4f5a6b70819'],
      });
    }
  });

  it("the function's own security group: no allow-all egress; HTTPS only to the endpoints' group, the API port only to the cluster CIDR; the endpoints admit only the probe", () => {
    const r = resources(priv);
    const [, fn] = ofType(r, 'AWS::Lambda::Function')[0]!;
    const sgId = ref(fn.Properties.VpcConfig.SecurityGroupIds[0])!;
    const egress = egressOf(r, sgId);
    expect(egress.every((e: any) => e.IpProtocol === 'tcp')).toBe(true); // no "-1" (all traffic)
    expect(egress.filter((e: any) => e.CidrIp).map((e: any) => `${e.CidrIp}:${e.FromPort}`)).toEqual(['10.40.0.0/16:443']);
    const toGroups = egress.filter((e: any) => e.DestinationSecurityGroupId);
    expect(toGroups).toHaveLength(1);
    expect(toGroups[0].FromPort).toBe(443);
    const endpointGroup = ref(toGroups[0].DestinationSecurityGroupId)!;
    for (const [, e] of ofType(r, 'AWS::EC2::VPCEndpoint')) expect(e.Properties.SecurityGroupIds.map(ref)).toEqual([endpointGroup]);
    const ingress = ofType(r, 'AWS::EC2::SecurityGroupIngress')
      .map(([, i]) => i.Properties)
      .filter((i) => ref(i.GroupId) === endpointGroup);
    expect(ingress.map((i) => [ref(i.SourceSecurityGroupId), i.FromPort])).toEqual([[sgId, 443]]);
  });

  it('behind NAT (endpoints mode none): HTTPS anywhere for the AWS APIs, the API port to the configured CIDRs', () => {
    const r = resources(multi[0]!);
    const [, fn] = ofType(r, 'AWS::Lambda::Function')[0]!;
    const sg = r[ref(fn.Properties.VpcConfig.SecurityGroupIds[0])!]!.Properties;
    expect(sg.SecurityGroupEgress.map((e: any) => `${e.CidrIp}:${e.FromPort}`).sort()).toEqual(
      ['0.0.0.0/0:443', '10.20.0.0/16:443', '10.20.0.0/16:6443', '203.0.113.0/24:443', '203.0.113.0/24:6443'].sort(),
    );
  });

  it('existing endpoints: egress only to their security groups', () => {
    const c = readConfigDocument('infra/examples/private-vpc.yaml') as any;
    c.locations[0].vpc.endpoints = { mode: 'existing', securityGroupIds: ['sg-0e1d2c3b4a5968778'] };
    const app = new App();
    const { LocationStack: LS } = { LocationStack: single.constructor as typeof LocationStack };
    const stack = new LS(app, 'existing', { config: parseProbeConfig(c), location: parseProbeConfig(c).locations[0]! });
    const r = resources(stack);
    expect(ofType(r, 'AWS::EC2::VPCEndpoint')).toHaveLength(0);
    const [, fn] = ofType(r, 'AWS::Lambda::Function')[0]!;
    const sgId = ref(fn.Properties.VpcConfig.SecurityGroupIds[0])!;
    expect(
      egressOf(r, sgId)
        .map((e: any) => `${e.DestinationSecurityGroupId ?? e.CidrIp}:${e.FromPort}`)
        .sort(),
    ).toEqual(['10.40.0.0/16:443', 'sg-0e1d2c3b4a5968778:443']);
  });
});

describe('Lambda never retries a run; a failed one is a ticket', () => {
  it('EventInvokeConfig: MaximumRetryAttempts 0, on failure the ticket topic', () => {
    const r = resources(single);
    const [[, cfg]] = ofType(r, 'AWS::Lambda::EventInvokeConfig') as [[string, any]];
    expect(cfg.Properties.MaximumRetryAttempts).toBe(0);
    const topic = ref(cfg.Properties.DestinationConfig.OnFailure.Destination);
    expect(r[topic!]!.Type).toBe('AWS::SNS::Topic');
    expect(topic).toMatch(/TicketTopic/);
  });
});

describe('what the account needs next', () => {
  it('outputs the role ARN (for the access entry or aws-auth), the function name and the topics', () => {
    const outputs = Template.fromStack(single).toJSON().Outputs;
    expect(Object.keys(outputs).map((k) => k.replace(/[0-9A-F]{8}$/, ''))).toEqual(
      expect.arrayContaining(['ProbeRoleArn', 'ProbeFunctionName', 'ProbePageTopicArn', 'ProbeTicketTopicArn']),
    );
  });

  it('an EKS access entry for the probe role, in the configured Kubernetes group, when asked', () => {
    const r = resources(priv);
    const [[, entry]] = ofType(r, 'AWS::EKS::AccessEntry') as [[string, any]];
    expect(entry.Properties).toMatchObject({ ClusterName: 'prod-private', KubernetesGroups: ['kube-stream-probe'], Type: 'STANDARD' });
    const [, fn] = ofType(r, 'AWS::Lambda::Function')[0]!;
    expect(ref(entry.Properties.PrincipalArn)).toBe(ref(fn.Properties.Role));
    expect(ofType(resources(single), 'AWS::EKS::AccessEntry')).toHaveLength(0);
  });

  it('a secret under a customer-managed key: kms:Decrypt on that key, only through Secrets Manager in the secret region', () => {
    const c = readConfigDocument('infra/examples/multi-location.yaml') as any;
    c.clusters[1].auth.kmsKeyArn = 'arn:aws:kms:eu-central-1:222222222222:key/0f1e2d3c-4b5a-6978-8a9b-0c1d2e3f4a5b';
    const config = parseProbeConfig(c);
    const stack = new (single.constructor as typeof LocationStack)(new App(), 'kms', { config, location: config.locations[1]! });
    const statements = ofType(resources(stack), 'AWS::IAM::Policy').flatMap(([, p]) => p.Properties.PolicyDocument.Statement);
    expect(statements.find((s: any) => s.Action === 'kms:Decrypt')).toMatchObject({
      Resource: 'arn:aws:kms:eu-central-1:222222222222:key/0f1e2d3c-4b5a-6978-8a9b-0c1d2e3f4a5b',
      Condition: { StringEquals: { 'kms:ViaService': 'secretsmanager.eu-central-1.amazonaws.com' } },
    });
  });
});

describe('the config refuses what AWS would', () => {
  const base = () => readConfigDocument('infra/examples/private-vpc.yaml') as any;
  it.each([
    [
      'a function name over 64 characters',
      (c: any) => ((c.project = 'a-rather-long-project-name-for-probes'), (c.locations[0].name = 'private-eu-west-1-for-the-team')),
      /function name .* 64/,
    ],
    [
      'an access entry for a cluster in another region',
      (c: any) => (c.clusters[0].auth.region = 'us-east-2'),
      /accessEntryGroup needs the cluster in the location's region/,
    ],
    [
      'an endpoints mode that does not exist',
      (c: any) => (c.locations[0].vpc.endpoints = { mode: 'sometimes' }),
      /endpoints\.mode must be "create", "existing" or "none"/,
    ],
    ['a CIDR that is not one', (c: any) => (c.locations[0].vpc.apiServerCidrs = ['10.0.0.0']), /apiServerCidrs\[0\] "10\.0\.0\.0" is not an IPv4 CIDR/],
    [
      'a KMS key that is not an ARN',
      (c: any) =>
        (c.clusters[0].auth = { type: 'secret', secretArn: 'arn:aws:secretsmanager:eu-west-1:333333333333:secret:x-AbCdEf', kmsKeyArn: 'alias/mine' }),
      /kmsKeyArn "alias\/mine" is not a KMS key ARN/,
    ],
  ])('%s', (_n, mutate, message) => {
    const c = base();
    mutate(c);
    expect(() => parseProbeConfig(c)).toThrow(message);
  });
});

describe('a misspelt key is refused at every level of the deployment config, naming it and the nearest known one', () => {
  const base = () => readConfigDocument('infra/examples/private-vpc.yaml') as any;
  it.each([
    ['the document', (c: any) => (c.schedule = c.schedules), /config: schedule is not a known field: did you mean "schedules"\?/],
    ['a cluster', (c: any) => (c.clusters[0].cadata = 'QQ=='), /clusters\[0\]\.cadata is not a known field: did you mean "caData"\?/],
    [
      'a cluster auth',
      (c: any) => (c.clusters[0].auth.clustername = 'x'),
      /clusters\[0\]\.auth\.clustername is not a known field: did you mean "clusterName"\?/,
    ],
    ['a target', (c: any) => (c.clusters[0].target.prot = 8080), /clusters\[0\]\.target\.prot is not a known field: did you mean "port"\?/],
    [
      'a cluster misspelling target',
      (c: any) => ((c.clusters[0].taget = c.clusters[0].target), delete c.clusters[0].target),
      /clusters\[0\]\.taget is not a known field: did you mean "target"\?/,
    ],
    ['a location', (c: any) => (c.locations[0].regoin = 'eu-west-1'), /locations\[0\]\.regoin is not a known field: did you mean "region"\?/],
    [
      'a vpc',
      (c: any) => (c.locations[0].vpc.subnetId = 'subnet-0c1d2e3f4a5b60718'),
      /locations\[0\]\.vpc\.subnetId is not a known field: did you mean "subnetIds"\?/,
    ],
    [
      'endpoints',
      (c: any) => (c.locations[0].vpc.endpoints.routeTables = ['rtb-0a1b2c3d4e5f60718']),
      /locations\[0\]\.vpc\.endpoints\.routeTables is not a known field: did you mean "routeTableIds"\?/,
    ],
    ['a schedule', (c: any) => (c.schedules[0].hold = ['0s']), /schedules\[0\]\.hold is not a known field: did you mean "holds"\?/],
    ['alarms', (c: any) => (c.alarms = { evaluationPeriod: 3 }), /alarms\.evaluationPeriod is not a known field: did you mean "evaluationPeriods"\?/],
  ])('%s', (_n, mutate, message) => {
    const c = base();
    mutate(c);
    expect(() => parseProbeConfig(c)).toThrow(message);
  });

  it('cdk synth of a YAML file with a misspelt key fails, naming the file and the key', () => {
    const dir = mkdtempSync(join(tmpdir(), 'ksp-typo-'));
    const file = join(dir, 'typo.yaml');
    writeFileSync(file, readFileSync('infra/examples/single-location.yaml', 'utf8').replace('target: { namespace', 'taget: { namespace'));
    expect(() => buildApp(new App(), file)).toThrow(/typo\.yaml: clusters\[0\]\.taget is not a known field: did you mean "target"\?/);
  });
});
