/**
 * The real handler with the function configuration CDK synthesizes (its
 * environment, memory and timeout, read from the template), for a location
 * whose clusters' credentials live in two other regions: a secret in
 * eu-central-1 and an EKS cluster in us-east-1, probed from eu-west-1. The
 * loopback AWS stand-in answers only calls signed for the region the resource
 * lives in, so asking the function's own region (the bug this replaces) finds
 * nothing.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { App } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LocationStack } from '../../infra/location-stack.js';
import { startEmulatorWithKubeconfig, type EmulatorWithKubeconfig } from '../../lab/emulator/kubeconfig.js';
import { parseProbeConfig } from '../../src/config/probe-config.js';
import type { LocationSummary } from '../../src/lambda/run-location.js';
import { startLocalAws, type LocalAws } from '../helpers/local-aws.js';

const SECRET_ARN = 'arn:aws:secretsmanager:eu-central-1:123456789012:secret:gitops-AbCdEf';
const TOKEN = 'cross-region-token-0123456789';
let aws: LocalAws;
let secretLab: EmulatorWithKubeconfig;
let eksLab: EmulatorWithKubeconfig;
let fn: { Environment: { Variables: Record<string, string> }; Timeout: number; MemorySize: number };
let handler: (event: unknown, ctx: { getRemainingTimeInMillis(): number }) => Promise<LocationSummary>;

beforeAll(async () => {
  aws = await startLocalAws();
  secretLab = await startEmulatorWithKubeconfig({ tls: true, token: TOKEN });
  eksLab = await startEmulatorWithKubeconfig({ tls: true });
  aws.secrets.set(SECRET_ARN, JSON.stringify({ token: TOKEN, caData: Buffer.from(secretLab.emulator.tls!.caPem).toString('base64') }));
  aws.clusters.set('prod-us', { caData: Buffer.from(eksLab.emulator.tls!.caPem).toString('base64'), region: 'us-east-1' });
  const endpoint = (e: EmulatorWithKubeconfig) => e.emulator.url.toString().replace(/\/$/, '');
  const config = parseProbeConfig({
    project: 'ksp',
    locations: [{ name: 'eu-west-1-lab', account: '123456789012', region: 'eu-west-1' }],
    clusters: [
      {
        name: 'gitops',
        endpoint: endpoint(secretLab),
        auth: { type: 'secret', secretArn: SECRET_ARN },
        target: { namespace: 'default', pod: 'probe-target', port: 8080 },
      },
      {
        name: 'prod-us',
        endpoint: endpoint(eksLab),
        auth: { type: 'eks', clusterName: 'prod-us', region: 'us-east-1' },
        target: { namespace: 'default', pod: 'probe-target', port: 8080 },
      },
    ],
    schedules: [{ name: 'short', expression: 'rate(5 minutes)', holds: ['0s'] }],
  });
  const app = new App({ outdir: mkdtempSync(join(tmpdir(), 'ksp-cdk-xr-')) });
  const stack = new LocationStack(app, 'xr', { config, location: config.locations[0]! });
  fn = Object.values(Template.fromStack(stack).findResources('AWS::Lambda::Function'))[0]!.Properties;
  // What Lambda gives the function: the template's environment, its own region, credentials.
  Object.assign(process.env, fn.Environment.Variables, {
    AWS_REGION: 'eu-west-1',
    AWS_ENDPOINT_URL: aws.url,
    AWS_ACCESS_KEY_ID: 'AKIDLOCALTEST0000000',
    AWS_SECRET_ACCESS_KEY: 'local-test-secret-key-not-real',
  });
  ({ handler } = await import('../../functions/probe.js'));
}, 60_000);
afterAll(async () => {
  await aws.close();
  await secretLab.stop();
  await eksLab.stop();
});

describe('credentials from two other regions', () => {
  it('asks Secrets Manager in the secret region, EKS and STS in the cluster region, CloudWatch in its own; both clusters are measured', async () => {
    const out = await handler({ holds: ['0s'], operations: ['exec'] }, { getRemainingTimeInMillis: () => fn.Timeout * 1000 });
    expect(out.reports.map((r) => [r.cluster, r.verdicts.map((v) => v.verdict)])).toEqual([
      ['gitops', ['clean']],
      ['prod-us', ['clean']],
    ]);
    expect(aws.calls.filter((c) => !c.startsWith('PutMetricData')).sort()).toEqual(['DescribeCluster us-east-1', 'GetSecretValue eu-central-1']);
    expect(aws.calls.filter((c) => c.startsWith('PutMetricData'))).toEqual(['PutMetricData eu-west-1']);
    // The EKS token is presigned for STS in the cluster's region, as aws eks get-token --region would.
    const eksUpgrades = eksLab.emulator.upgrades;
    expect(eksUpgrades.length).toBeGreaterThan(0);
    for (const u of eksUpgrades) expect(u.credential).toMatchObject({ kind: 'eks-token', stsHost: 'sts.us-east-1.amazonaws.com', region: 'us-east-1' });
  });

  it('the stand-in is honest: a secret asked for in the function region is not found, as in AWS', async () => {
    const { SecretsManagerClient, GetSecretValueCommand } = await import('@aws-sdk/client-secrets-manager');
    const wrong = new SecretsManagerClient({ region: 'eu-west-1' });
    await expect(wrong.send(new GetSecretValueCommand({ SecretId: SECRET_ARN }))).rejects.toMatchObject({ name: 'ResourceNotFoundException' });
  });
});
