/**
 * A location whose AWS endpoints are black-holed (a missing VPC endpoint, a
 * route to nowhere): the endpoint accepts TCP and never answers. The run must
 * end well inside its timeout, every metric must still reach the log as EMF,
 * and the cluster whose credentials could not be read must say so.
 */
import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmulatorWithKubeconfig, type EmulatorWithKubeconfig } from '../../lab/emulator/kubeconfig.js';
import { ACCESS_BUDGET_MS, PUBLISH_BUDGET_MS, lambdaRunSeconds } from '../../src/config/lambda-limits.js';
import type { LocationSummary } from '../../src/lambda/run-location.js';
import { reportDatums } from '../../src/metrics/datums.js';

let hole: net.Server;
const held: net.Socket[] = [];
let lab: EmulatorWithKubeconfig;
let handler: (event: unknown, ctx: { getRemainingTimeInMillis(): number }) => Promise<LocationSummary>;
let logged: string[] = [];
const realWrite = process.stdout.write.bind(process.stdout);

beforeAll(async () => {
  hole = net.createServer((s) => {
    held.push(s); // accepted, read, never answered
    s.on('error', () => undefined);
  });
  await new Promise<void>((r) => hole.listen(0, '127.0.0.1', r));
  lab = await startEmulatorWithKubeconfig({ tls: true });
  const endpoint = lab.emulator.url.toString().replace(/\/$/, '');
  const caData = Buffer.from(lab.emulator.tls!.caPem).toString('base64');
  Object.assign(process.env, {
    AWS_ENDPOINT_URL: `http://127.0.0.1:${(hole.address() as net.AddressInfo).port}`,
    AWS_REGION: 'eu-west-1',
    AWS_ACCESS_KEY_ID: 'AKIDLOCALTEST0000000',
    AWS_SECRET_ACCESS_KEY: 'local-test-secret-key-not-real',
    KSP_LOCATION_CONFIG: JSON.stringify({
      project: 'ksp',
      location: 'dark-vpc',
      region: 'eu-west-1',
      clusters: [
        // An EKS cluster with its CA configured needs no AWS call: its token is presigned locally.
        { name: 'eks', endpoint, caData, auth: { type: 'eks', clusterName: 'eks' }, target: { namespace: 'default', pod: 'probe-target', port: 8080 } },
        {
          name: 'vaulted',
          endpoint,
          auth: { type: 'secret', secretArn: 'arn:aws:secretsmanager:eu-west-1:123456789012:secret:v-AbCdEf' },
          target: { namespace: 'default', pod: 'probe-target', port: 8080 },
        },
      ],
    }),
  });
  ({ handler } = await import('../../functions/probe.js'));
  process.stdout.write = ((chunk: string | Uint8Array, ...rest: unknown[]) => {
    logged.push(String(chunk));
    return (realWrite as (...a: unknown[]) => boolean)(chunk, ...rest);
  }) as typeof process.stdout.write;
});
afterAll(async () => {
  process.stdout.write = realWrite;
  for (const s of held) s.destroy();
  hole.close();
  await lab.stop();
});

describe('AWS endpoints that never answer', () => {
  it('the run ends inside its budgets, the unreachable secret is not-measured, and EMF carries every metric', async () => {
    const timeoutMs = lambdaRunSeconds(0) * 1000;
    const t0 = performance.now();
    const out = await handler({ holds: ['0s'], operations: ['exec'] }, { getRemainingTimeInMillis: () => timeoutMs });
    const elapsed = performance.now() - t0;
    // Credentials (5 s) and publishing (8 s) are bounded; the sessions themselves take well under a second here.
    expect(elapsed).toBeLessThan(ACCESS_BUDGET_MS + PUBLISH_BUDGET_MS + 5_000);
    expect(elapsed).toBeLessThan(timeoutMs - 5_000);
    const [eks, vaulted] = out.reports;
    expect(eks!.verdicts.map((v) => v.verdict)).toEqual(['clean']);
    expect(vaulted!.verdicts.map((v) => v.verdict)).toEqual(['not-measured']);
    expect(vaulted!.verdicts[0]!.diagnosis[0]!.summary).toMatch(/budget|reachable/);
    // Nothing lost: every datum the reports make is in an EMF line, and the failure is counted.
    const emf = logged.filter((l) => l.includes('"_aws"')).map((l) => JSON.parse(l) as Record<string, unknown>);
    const count = (name: string) => emf.reduce((n, d) => n + (d[name] === undefined ? 0 : Array.isArray(d[name]) ? (d[name] as unknown[]).length : 1), 0);
    const expected = out.reports.flatMap((r) => reportDatums(r));
    for (const name of new Set(expected.map((d) => d.name))) expect(count(name), name).toBe(expected.filter((d) => d.name === name).length);
    expect(count('PublishFailures')).toBe(1);
    expect(out.publish).toMatchObject({ published: 0, emfFallback: expected.length });
  }, 40_000);
});
