/**
 * `invoke --runner task` (and automatically for holds longer than a Lambda
 * run): the real @aws-sdk/client-ecs and client-cloudwatch-logs against the
 * loopback AWS stand-in, whose RunTask runs the real container entry point
 * (functions/task.ts) against the emulator: the task found by its family,
 * started in the subnets its KSP_NETWORK names with the event as an override,
 * waited for with progress, and its summary read from its last log line.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import YAML from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmulatorWithKubeconfig, type EmulatorWithKubeconfig } from '../../lab/emulator/kubeconfig.js';
import { runTask } from '../../functions/task.js';
import { invokeCommand } from '../../src/cli/invoke-command.js';
import type { CommandIO } from '../../src/cli/io.js';
import { startLocalAws, type LocalAws } from '../helpers/local-aws.js';

const TOKEN = 'invoke-task-token-000001';
const SECRET = 'arn:aws:secretsmanager:eu-west-1:123456789012:secret:invoke-task-AbCdEf';
let aws: LocalAws;
let lab: EmulatorWithKubeconfig;
let dir: string;
let configPath: string;
const started: Record<string, string>[] = [];
const saved = { ...process.env };

beforeAll(async () => {
  aws = await startLocalAws();
  lab = await startEmulatorWithKubeconfig({ tls: true, token: TOKEN });
  aws.secrets.set(SECRET, JSON.stringify({ token: TOKEN, caData: Buffer.from(lab.emulator.tls!.caPem).toString('base64') }));
  Object.assign(process.env, {
    AWS_ENDPOINT_URL: aws.url,
    AWS_REGION: 'eu-west-1',
    AWS_ACCESS_KEY_ID: 'AKIDLOCALTEST0000000',
    AWS_SECRET_ACCESS_KEY: 'local-test-secret-key-not-real',
  });
  const cluster = {
    name: 'lab',
    endpoint: lab.emulator.url.toString().replace(/\/$/, ''),
    auth: { type: 'secret', secretArn: SECRET },
    target: { namespace: 'default', pod: 'probe-target', port: 8080 },
  };
  dir = mkdtempSync(join(tmpdir(), 'ksp-invoke-task-'));
  configPath = join(dir, 'probe.yaml');
  writeFileSync(
    configPath,
    YAML.stringify({
      project: 'ksp',
      locations: [
        { name: 'corp', account: '123456789012', region: 'eu-west-1', vpc: { vpcId: 'vpc-0a1b2c3d4e5f60718', subnetIds: ['subnet-0a1b2c3d4e5f60718'] } },
      ],
      clusters: [cluster],
      schedules: [{ name: 'hour', expression: 'rate(2 hours)', holds: ['60m'] }],
    }),
  );
  // What the construct deploys for the location's long-hold schedule (infra/stream-probe.ts taskTarget).
  aws.taskDefinitions.set('ksp-corp-hour', {
    arn: 'arn:aws:ecs:eu-west-1:123456789012:task-definition/ksp-corp-hour:1',
    family: 'ksp-corp-hour',
    container: {
      name: 'probe',
      environment: [
        { name: 'KSP_LOCATION_CONFIG', value: JSON.stringify({ project: 'ksp', location: 'corp', region: 'eu-west-1', clusters: [cluster] }) },
        { name: 'KSP_EVENT', value: JSON.stringify({ schedule: 'hour', holds: ['3600s'] }) },
        { name: 'KSP_TASK_SECONDS', value: '3660' },
        { name: 'KSP_NETWORK', value: JSON.stringify({ subnets: ['subnet-0a1b2c3d4e5f60718'], securityGroups: ['sg-0a1b2c3d4e5f60718'] }) },
      ],
      logConfiguration: { logDriver: 'awslogs', options: { 'awslogs-group': 'ksp-corp-logs', 'awslogs-stream-prefix': 'task', 'awslogs-region': 'eu-west-1' } },
    },
  });
  aws.onRunTask = async (env) => {
    started.push(env);
    const lines: string[] = [];
    await runTask(env, (l) => void lines.push(l));
    return lines;
  };
});
afterAll(async () => {
  process.env = saved;
  await aws?.close();
  await lab?.stop();
  rmSync(dir, { recursive: true, force: true });
});

describe('invoke with the task runner', () => {
  it('starts the task with the requested event, waits with progress, and prints the verdicts from its result line', async () => {
    let stdout = '';
    let stderr = '';
    const io: CommandIO = { out: (t) => void (stdout += t), err: (t) => void (stderr += t), interactive: false, env: process.env };
    const code = await invokeCommand(['--config', configPath, '--runner', 'task', '--hold', '2s', '--ops', 'exec', '-o', 'json'], io, {
      lambdaFor: () => {
        throw new Error('Lambda must not be used for a task run');
      },
      taskPollMs: 200,
    });
    expect(code, stderr).toBe(0);
    expect(started).toHaveLength(1);
    expect(JSON.parse(started[0]!.KSP_EVENT!)).toEqual({ operations: ['exec'], transports: ['websocket', 'spdy'], keepalives: ['kubectl'], holds: ['2s'] });
    expect(Number(started[0]!.KSP_TASK_SECONDS)).toBeGreaterThan(2);
    expect(stderr).toMatch(/corp: task t1\d+ RUNNING, \d+ s of up to \d+ s/);
    const [outcome] = JSON.parse(stdout);
    expect(outcome.location).toBe('corp');
    expect(outcome.summary.reports[0].verdicts.map((v: { holdSeconds: number; verdict: string }) => `${v.holdSeconds}:${v.verdict}`)).toEqual(['2:clean']);
    expect(aws.calls.filter((c) => /^(ListTaskDefinitionFamilies|DescribeTaskDefinition|RunTask|GetLogEvents)/.test(c)).map((c) => c.split(' ')[0])).toEqual(
      expect.arrayContaining(['ListTaskDefinitionFamilies', 'DescribeTaskDefinition', 'RunTask', 'GetLogEvents']),
    );
  }, 60_000);

  it('a location without a probe task says what to deploy', async () => {
    aws.taskDefinitions.delete('ksp-corp-hour');
    let stdout = '';
    const io: CommandIO = { out: (t) => void (stdout += t), err: () => undefined, interactive: false, env: process.env };
    const code = await invokeCommand(['--config', configPath, '--hold', '20m', '-o', 'json'], io, {
      lambdaFor: () => {
        throw new Error('no Lambda');
      },
      taskPollMs: 200,
    });
    expect(code).toBe(1);
    expect(JSON.parse(stdout)[0].error).toMatch(
      /location corp has no probe task \(no task definition ksp-corp-\*\): give it a schedule with a hold longer than a Lambda run, in a VPC, and deploy/,
    );
  });
});
