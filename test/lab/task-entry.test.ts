/**
 * The container task's entry point (functions/task.ts), tested like the
 * handler: its configuration and event from the environment, real AWS SDK
 * clients against the loopback AWS stand-in, the emulator behind a real
 * haproxy whose idle timeout (7 s) is shorter than the hold (9 s): kubectl's
 * pings keep their exec sessions, sessions without pings are cut and publish
 * IdleTimeout, and the summary is the last log line. The 18-minute version of
 * this path is scripts/long-hold-proof.ts (docs/long-hold.md).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmulatorWithKubeconfig, type EmulatorWithKubeconfig } from '../../lab/emulator/kubeconfig.js';
import type { RealHop } from '../../lab/real-hops/process-hop.js';
import { startHaproxy } from '../../lab/real-hops/reverse-proxies.js';
import { runTask } from '../../functions/task.js';
import { awsDeps } from '../../src/lambda/aws-deps.js';
import { startLocalAws, type LocalAws } from '../helpers/local-aws.js';

const TOKEN = 'task-entry-token-000001';
const SECRET = 'arn:aws:secretsmanager:eu-west-1:123456789012:secret:task-entry-AbCdEf';
let aws: LocalAws;
let lab: EmulatorWithKubeconfig;
let hop: RealHop;
const saved = { ...process.env };
beforeAll(async () => {
  aws = await startLocalAws();
  lab = await startEmulatorWithKubeconfig({ tls: true, token: TOKEN });
  hop = await startHaproxy({ kind: 'tcp', timeoutSeconds: 7 }, Number(lab.emulator.url.port));
  aws.secrets.set(SECRET, JSON.stringify({ token: TOKEN, caData: Buffer.from(lab.emulator.tls!.caPem).toString('base64') }));
  Object.assign(process.env, {
    AWS_ENDPOINT_URL: aws.url,
    AWS_REGION: 'eu-west-1',
    AWS_ACCESS_KEY_ID: 'AKIDLOCALTEST0000000',
    AWS_SECRET_ACCESS_KEY: 'local-test-secret-key-not-real',
  });
});
afterAll(async () => {
  process.env = saved;
  await hop?.stop();
  await lab?.stop();
  await aws?.close();
});

describe('functions/task.ts', () => {
  it('runs the event from KSP_EVENT through a real hop, publishes with the real SDK, and ends with the result line', async () => {
    const lines: string[] = [];
    const log = (l: string) => void lines.push(l);
    const env = {
      KSP_LOCATION_CONFIG: JSON.stringify({
        project: 'ksp',
        location: 'corp',
        region: 'eu-west-1',
        clusters: [
          {
            name: 'lab',
            endpoint: `https://127.0.0.1:${hop.port}`,
            auth: { type: 'secret', secretArn: SECRET },
            target: { namespace: 'default', pod: 'probe-target', port: 8080 },
          },
        ],
      }),
      KSP_EVENT: JSON.stringify({ schedule: 'hour', holds: ['9s'], keepalives: ['kubectl', 'none'], operations: ['exec'] }),
      KSP_TASK_SECONDS: '120',
    };
    const before = aws.puts.length;
    const summary = await runTask(env, log, awsDeps('eu-west-1', log));
    expect(summary.ok).toBe(true);
    const results = summary.reports[0]!.results;
    for (const r of results.filter((x) => x.keepalive === 'kubectl')) expect(r.hold.survived).toBe(true);
    for (const r of results.filter((x) => x.keepalive === 'none')) {
      expect(r.hold.survived).toBe(false);
      expect(r.hold.idleSeconds).toBeGreaterThan(6);
      expect(r.hold.idleSeconds).toBeLessThan(8.5);
    }
    const data = aws.puts.slice(before).flatMap((p) => p.metricData as { MetricName: string; Value: number }[]);
    const idle = data.filter((d) => d.MetricName === 'IdleTimeout').map((d) => d.Value);
    expect(idle).toHaveLength(2);
    for (const v of idle) expect(v).toBeGreaterThan(6);
    const last = JSON.parse(lines[lines.length - 1]!);
    expect(last).toMatchObject({ msg: 'result', summary: { ok: true, location: 'corp' } });
    expect(lines.join('')).not.toContain(TOKEN);
  }, 60_000);

  it('bad environment: a typed error in the result line, nothing run', async () => {
    const lines: string[] = [];
    const summary = await runTask({ KSP_EVENT: '{"holds":["9s"]}' }, (l) => void lines.push(l));
    expect(summary).toMatchObject({ ok: false, error: { code: 'CONFIG_INVALID' } });
    expect(summary.error!.message).toMatch(/KSP_LOCATION_CONFIG is not set/);
    expect(JSON.parse(lines.at(-1)!)).toMatchObject({ msg: 'result', level: 'error' });
  });
});
