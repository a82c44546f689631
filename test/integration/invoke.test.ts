/**
 * `kube-stream-probe invoke` with the real @aws-sdk/client-lambda against a
 * loopback Lambda endpoint whose "function" is the real handler core probing
 * the emulator.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import YAML from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AccessCache } from '../../src/lambda/cluster-access.js';
import { runLocation } from '../../src/lambda/run-location.js';
import { cli } from '../helpers/cli.js';
import { startEmulatorWithKubeconfig, type EmulatorWithKubeconfig } from '../../lab/emulator/kubeconfig.js';
import { startLocalAws, type LocalAws } from '../helpers/local-aws.js';

let aws: LocalAws;
let lab: EmulatorWithKubeconfig;
let configPath: string;
const received: Array<{ name: string; payload: unknown }> = [];

beforeAll(async () => {
  aws = await startLocalAws();
  lab = await startEmulatorWithKubeconfig({ tls: true, token: 'invoke-test-token-abcdef', faults: { rejectWebSocket: 400 } });
  Object.assign(process.env, {
    AWS_ENDPOINT_URL: aws.url,
    AWS_ACCESS_KEY_ID: 'AKIDLOCALTEST0000000',
    AWS_SECRET_ACCESS_KEY: 'local-test-secret-key-not-real',
    AWS_REGION: 'eu-west-1',
  });
  const arn = 'arn:aws:secretsmanager:eu-west-1:123456789012:secret:lab-AbC';
  aws.secrets.set(arn, JSON.stringify({ token: 'invoke-test-token-abcdef', caData: Buffer.from(lab.emulator.tls!.caPem).toString('base64') }));
  const cluster = {
    name: 'lab',
    endpoint: lab.emulator.url.toString().replace(/\/$/, ''),
    auth: { type: 'secret', secretArn: arn },
    target: { namespace: 'default', pod: 'probe-target', port: 8080 },
  };
  configPath = join(mkdtempSync(join(tmpdir(), 'ksp-invoke-')), 'probe.yaml');
  writeFileSync(
    configPath,
    YAML.stringify({
      project: 'ksp',
      locations: [
        { name: 'lab-a', account: '123456789012', region: 'eu-west-1' },
        { name: 'lab-b', account: '123456789012', region: 'us-east-1' },
      ],
      clusters: [cluster],
      schedules: [{ name: 'short', expression: 'rate(5 minutes)', holds: ['0s'] }],
    }),
  );
  const { CloudWatchClient } = await import('@aws-sdk/client-cloudwatch');
  const { SecretsManagerClient } = await import('@aws-sdk/client-secrets-manager');
  const { EKSClient } = await import('@aws-sdk/client-eks');
  const deps = {
    cloudwatch: new CloudWatchClient({}),
    secretsIn: (region: string) => new SecretsManagerClient({ region }),
    eksIn: (region: string) => new EKSClient({ region }),
    credentials: async () => ({ accessKeyId: 'x', secretAccessKey: 'y' }),
    log: () => undefined,
  };
  const cache = new AccessCache();
  aws.onInvoke = async (name, payload) => {
    received.push({ name, payload });
    if (name === 'ksp-lab-b')
      return { payload: { errorType: 'Runtime.ExitError', errorMessage: 'RequestId: 1 Error: Runtime exited' }, functionError: 'Unhandled' };
    const summary = await runLocation(
      payload,
      () => 120_000,
      { project: 'ksp', location: 'lab-a', region: 'eu-west-1', clusters: [cluster as never] },
      deps,
      cache,
    );
    return { payload: summary };
  };
});
afterAll(async () => {
  await aws.close();
  await lab.stop();
});

describe('invoke', () => {
  it('invokes every location in parallel with the overrides, and prints one combined table', async () => {
    const r = await cli(['invoke', '--config', configPath, '--ops', 'exec', '--hold', '0s'], process.env);
    expect(received.map((x) => x.name).sort()).toEqual(['ksp-lab-a', 'ksp-lab-b']);
    expect(received[0]!.payload).toEqual({ operations: ['exec'], transports: ['websocket', 'spdy'], keepalives: ['kubectl'], holds: ['0s'] });
    expect(r.stdout).toMatch(/^LOCATION\s+CLUSTER\s+OPERATION/m);
    expect(r.stdout).toMatch(/^lab-a\s+lab\s+exec\s+kubectl\s+0s\s+ok\s+fail\s+ok\s+fallback\s+fallback\s+fallback\s+BREAKS\s+websocket-broken$/m);
    expect(r.stdout).toMatch(/^lab-b\s+.*ERROR ksp-lab-b failed \(Unhandled\)/m);
    expect(r.code).toBe(1);
  });

  it('-o json and --locations', async () => {
    const r = await cli(['invoke', '--config', configPath, '--locations', 'lab-a', '--ops', 'exec', '-o', 'json'], process.env);
    const doc = JSON.parse(r.stdout);
    expect(doc).toHaveLength(1);
    expect(doc[0].summary.reports[0].verdicts[0].verdict).toBe('websocket-broken');
  });

  it('an unknown location is a usage error, exit 2', async () => {
    const r = await cli(['invoke', '--config', configPath, '--locations', 'nowhere']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('--locations "nowhere" is not one of lab-a, lab-b');
  });
});
