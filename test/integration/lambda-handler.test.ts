/**
 * The real Lambda handler (functions/probe.ts) end to end: the emulator as
 * the cluster, and the real @aws-sdk clients sending to a loopback endpoint
 * that decodes and records PutMetricData and serves Secrets Manager. No AWS.
 */
import net from 'node:net';
import { LATEST_VERDICTS_QUERY } from '../../src/lambda/verdict-log.js';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import type { LocationSummary } from '../../src/lambda/run-location.js';
import { METRICS } from '../../src/metrics/contract.js';
import { startEmulatorWithKubeconfig, type EmulatorWithKubeconfig } from '../../lab/emulator/kubeconfig.js';
import { startLocalAws, type LocalAws } from '../helpers/local-aws.js';
import { parseRuntimeConfig } from '../../src/config/probe-config.js';
import { awsDeps } from '../../src/lambda/aws-deps.js';
import { AccessCache, connectionForCluster } from '../../src/lambda/cluster-access.js';
import { errorCodeOf } from '../../src/errors.js';
import { SecretRedactor } from '../../src/kube/secrets.js';
import { runLocation } from '../../src/lambda/run-location.js';

/** The real engine, except that probing the cluster named here throws (as a bug would): the module, not a hook in the function's API. */
const failing = vi.hoisted(() => ({ cluster: undefined as string | undefined }));
vi.mock('../../src/probe/runner.js', async (importOriginal) => {
  const real = await importOriginal<typeof import('../../src/probe/runner.js')>();
  return {
    ...real,
    runPlan: ((plan, o) =>
      plan.cluster.name === failing.cluster
        ? Promise.reject(new TypeError("Cannot read properties of undefined (reading 'pod')"))
        : real.runPlan(plan, o)) as typeof real.runPlan,
  };
});

const TOKEN = 'lambda-secret-token-5e6f7a8b9c';
const SECRET_ARN = 'arn:aws:secretsmanager:eu-west-1:123456789012:secret:lab-cluster-AbCdEf';
const MISSING_ARN = 'arn:aws:secretsmanager:eu-west-1:123456789012:secret:missing-XyZ';
const NODES_ARN = 'arn:aws:secretsmanager:eu-west-1:123456789012:secret:node-cluster-QwErTy';
const ROTATED_ARN = 'arn:aws:secretsmanager:eu-west-1:123456789012:secret:rotated-QwErTy';
let aws: LocalAws;
let lab: EmulatorWithKubeconfig;
let eksLab: EmulatorWithKubeconfig;
let handler: (event: unknown, ctx: { getRemainingTimeInMillis(): number }) => Promise<LocationSummary>;
let logged: string[] = [];
let nodeLab: EmulatorWithKubeconfig;
let closedPort: number;
const realWrite = process.stdout.write.bind(process.stdout);

beforeAll(async () => {
  closedPort = await new Promise<number>((resolve) => {
    const srv = net.createServer().listen(0, '127.0.0.1', () => {
      const port = (srv.address() as net.AddressInfo).port;
      srv.close(() => resolve(port));
    });
  });
  aws = await startLocalAws();
  lab = await startEmulatorWithKubeconfig({ tls: true, token: TOKEN, faults: { rejectWebSocket: 400 } });
  aws.secrets.set(SECRET_ARN, JSON.stringify({ token: TOKEN, caData: Buffer.from(lab.emulator.tls!.caPem).toString('base64') }));
  const cluster = (name: string, arn: string) => ({
    name,
    endpoint: lab.emulator.url.toString().replace(/\/$/, ''),
    auth: { type: 'secret', secretArn: arn },
    target: { namespace: 'default', pod: 'probe-target', container: 'main', port: 8080 },
  });
  eksLab = await startEmulatorWithKubeconfig({ tls: true });
  nodeLab = await startEmulatorWithKubeconfig({
    tls: true,
    token: TOKEN,
    serverVersion: 'v1.36.0',
    nodes: [{ name: 'node-a' }, { name: 'node-b', declaredFeatures: ['ExtendWebSocketsToKubelet'], fault: { kind: 'stream-error' } }],
  });
  aws.secrets.set(NODES_ARN, JSON.stringify({ token: TOKEN, caData: Buffer.from(nodeLab.emulator.tls!.caPem).toString('base64') }));
  aws.clusters.set('prod-eu', { caData: Buffer.from(eksLab.emulator.tls!.caPem).toString('base64') });
  Object.assign(process.env, {
    AWS_ENDPOINT_URL: aws.url,
    AWS_REGION: 'eu-west-1',
    AWS_ACCESS_KEY_ID: 'AKIDLOCALTEST0000000',
    AWS_SECRET_ACCESS_KEY: 'local-test-secret-key-not-real',
    AWS_MAX_ATTEMPTS: '2',
    KSP_LOCATION_CONFIG: JSON.stringify({
      project: 'ksp',
      location: 'eu-west-1-vpc-a',
      region: 'eu-west-1',
      clusters: [
        cluster('lab', SECRET_ARN),
        cluster('lost', MISSING_ARN),
        cluster('rotated', ROTATED_ARN),
        {
          name: 'eks',
          endpoint: eksLab.emulator.url.toString().replace(/\/$/, ''),
          auth: { type: 'eks', clusterName: 'prod-eu' },
          target: { namespace: 'default', pod: 'probe-target', port: 8080 },
        },
        {
          name: 'nodes',
          endpoint: nodeLab.emulator.url.toString().replace(/\/$/, ''),
          auth: { type: 'secret', secretArn: NODES_ARN },
          target: { namespace: 'default', port: 8080, perNode: true },
        },
        // Per-node probing of a cluster that does not answer, and of one without per-node targets.
        {
          name: 'nodes-down',
          endpoint: `https://127.0.0.1:${closedPort}`,
          auth: { type: 'secret', secretArn: NODES_ARN },
          target: { namespace: 'default', pod: 'probe-target', port: 8080, perNode: true },
        },
        { ...cluster('nodes-none', SECRET_ARN), target: { namespace: 'default', pod: 'probe-target', container: 'main', port: 8080, perNode: true } },
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
  await aws.close();
  await lab.stop();
  await eksLab.stop();
  await nodeLab.stop();
});
afterEach(() => {
  logged = [];
  aws.failAlways(undefined);
});

const ctx = (ms: number) => ({ getRemainingTimeInMillis: () => ms });

describe('the probe Lambda', () => {
  it("with target.perNode: every node's target too, NodesProbed/NodesFailing published, the failing node named in the log", async () => {
    const before = aws.puts.length;
    const out = await handler({ clusters: ['nodes'], holds: ['0s'], keepalives: ['kubectl'] }, ctx(120_000));
    expect(out.ok).toBe(true);
    expect(out.perNode?.[0]?.nodes.map((n) => n.node)).toEqual(['node-a', 'node-b']);
    const failing = out.perNode![0]!.summary.find((s) => s.operation === 'exec' && s.transport === 'websocket')!.failing;
    expect(failing).toEqual([{ node: 'node-b', class: 'stream-error-after-upgrade', kubeletVersion: 'v1.36.0', extendWebSockets: true }]);
    const data = aws.puts.slice(before).flatMap((p) => p.metricData) as any[];
    const value = (name: string, transport: string) =>
      data.find(
        (d) =>
          d.MetricName === name &&
          d.Dimensions.some((x: { Name: string; Value: string }) => x.Name === 'Transport' && x.Value === transport) &&
          d.Dimensions.some((x: { Name: string; Value: string }) => x.Value === 'exec'),
      )?.Value;
    expect([value('NodesProbed', 'websocket'), value('NodesFailing', 'websocket'), value('NodesFailing', 'spdy')]).toEqual([2, 1, 0]);
    const line = logged.map((l) => JSON.parse(l)).find((l) => l.msg === 'per-node');
    expect(line).toMatchObject({ level: 'warn', cluster: 'nodes', nodes: 2 });
    expect(JSON.stringify(line.failing)).toContain('node-b: stream-error-after-upgrade');
  });

  it('per-node probing of a cluster that does not answer: the run still ends and publishes the main results, no NodesProbed (the outage is told once)', async () => {
    const before = aws.puts.length;
    const out = await handler({ clusters: ['nodes-down', 'lab'], holds: ['0s'], keepalives: ['kubectl'] }, ctx(120_000));
    expect(out.reports.map((r) => r.cluster).sort()).toEqual(['lab', 'nodes-down']);
    expect(out.reports.find((r) => r.cluster === 'nodes-down')!.results.every((r) => !r.ok && r.upgrade.errorCode === 'DIAL_REFUSED')).toBe(true);
    expect(out.perNode?.[0]).toMatchObject({ cluster: 'nodes-down', nodes: [], errorCode: 'DIAL_REFUSED' });
    expect(out.perNode?.[0]?.error).toMatch(/^the per-node targets could not be listed: /);
    const data = aws.puts.slice(before).flatMap((p) => p.metricData) as any[];
    const of = (cluster: string, name: string) =>
      data.filter((d) => d.MetricName === name && d.Dimensions.some((x: { Name: string; Value: string }) => x.Name === 'Cluster' && x.Value === cluster));
    expect(of('nodes-down', 'UpgradeSuccess').map((d) => d.Value)).toEqual([0, 0, 0, 0]);
    expect(of('nodes-down', 'NodesProbed')).toEqual([]);
    expect(of('lab', 'UpgradeSuccess')).toHaveLength(4);
  });

  it('per-node probing that finds no target: NodesProbed 0 for every operation × transport, the log says what to deploy', async () => {
    const before = aws.puts.length;
    const out = await handler({ clusters: ['nodes-none'], holds: ['0s'], keepalives: ['kubectl'] }, ctx(120_000));
    expect(out.perNode?.[0]?.error).toMatch(/no Running pod labelled app\.kubernetes\.io\/name=kube-stream-probe-node .*manifest --per-node/);
    expect(out.perNode?.[0]?.errorCode).toBeUndefined();
    const data = aws.puts.slice(before).flatMap((p) => p.metricData) as any[];
    expect(data.filter((d) => d.MetricName === 'NodesProbed').map((d) => d.Value)).toEqual([0, 0, 0, 0]);
    expect(data.filter((d) => d.MetricName === 'NodesFailing')).toEqual([]);
    expect(logged.map((l) => JSON.parse(l)).find((l) => l.msg === 'per-node')).toMatchObject({ level: 'warn', cluster: 'nodes-none' });
  });

  it('a cluster whose config names no container: exec runs in the one kubectl picks (the annotation), every session clean', async () => {
    const from = eksLab.emulator.upgrades.length;
    const out = await handler({ clusters: ['eks'], holds: ['0s'], keepalives: ['kubectl'] }, ctx(120_000));
    const report = out.reports[0]!;
    expect(report.target).toMatchObject({ container: 'main', containerSource: 'annotation' });
    const execs = eksLab.emulator.upgrades.slice(from).filter((u) => u.operation === 'exec');
    expect(execs.length).toBeGreaterThan(0);
    for (const u of execs) expect([new URLSearchParams(u.query).get('container'), u.status]).toEqual(['main', 101]);
    expect(report.verdicts.map((v) => v.verdict)).toEqual(['clean', 'clean']);
  });

  it('runs the plan, publishes metrics that match the results, and returns the CLI JSON', async () => {
    const before = aws.puts.length;
    const out = await handler({ schedule: 'short', clusters: ['lab'], holds: ['0s', '1s'], keepalives: ['kubectl'] }, ctx(120_000));
    expect(out.ok).toBe(true);
    const report = out.reports[0]!;
    expect(report.cluster).toBe('lab');
    // The emulator refuses WebSocket: SPDY works, so kubectl would silently fall back.
    expect(report.verdicts.map((v) => v.verdict)).toEqual(Array(4).fill('websocket-broken'));
    const sent = aws.puts.slice(before).flatMap((p) => p.metricData);
    expect(aws.puts.slice(before).every((p) => p.namespace === 'KubeStreamProbe')).toBe(true);
    const named = (n: string) => sent.filter((d) => d.MetricName === n);
    expect(named('UpgradeSuccess')).toHaveLength(report.results.length);
    for (const r of report.results) {
      const dims = { Location: 'eu-west-1-vpc-a', Cluster: 'lab', Operation: r.operation, Transport: r.transport };
      const match = (d: (typeof sent)[number]) =>
        d.Dimensions?.length === 4 && Object.entries(dims).every(([k, v]) => d.Dimensions!.some((x) => x.Name === k && x.Value === v));
      expect(
        named('UpgradeSuccess')
          .filter(match)
          .map((d) => d.Value),
      ).toContain(r.ok ? 1 : 0);
      // A handshake our own CPU distorted is not published (src/probe/own-cpu.ts); the emulator shares this process.
      if (r.upgrade.handshakeMs !== null && !r.upgrade.ownCpu?.distorted)
        expect(
          named('HandshakeLatency')
            .filter(match)
            .map((d) => d.Value),
        ).toContain(r.upgrade.handshakeMs);
    }
    for (const d of sent) {
      const spec = METRICS[d.MetricName as keyof typeof METRICS];
      expect(d.Unit).toBe(spec.unit);
      expect(d.Dimensions!.map((x) => x.Name).sort()).toEqual([...spec.dimensions].sort());
    }
    expect(named('HoldSurvived').map((d) => d.Value)).toEqual([1, 1]); // SPDY exec and port-forward survived the 1 s hold
    expect(named('SilentFallback').map((d) => d.Value)).toEqual([1, 1, 1, 1]);
    expect(out.publish).toMatchObject({ published: sent.length, emfFallback: 0 });
  });

  it('throttling is retried and then published', async () => {
    const before = aws.puts.length;
    aws.failNext('throttle', 'throttle');
    const out = await handler({ clusters: ['lab'], operations: ['exec'] }, ctx(80_000));
    expect(out.publish?.emfFallback).toBe(0);
    expect(aws.puts.length).toBeGreaterThan(before);
  });

  it('throttling then 500s until the deadline: the metrics go to EMF log lines, nothing lost, the failure counted', async () => {
    aws.failNext('throttle');
    aws.failAlways('error');
    const out = await handler({ clusters: ['lab'] }, ctx(80_000));
    const emf = logged.filter((l) => l.includes('"_aws"')).map((l) => JSON.parse(l));
    const values = (name: string) => emf.flatMap((d) => (d[name] === undefined ? [] : Array.isArray(d[name]) ? d[name] : [d[name]]));
    const datums = out.reports.flatMap((r) => r.results).length; // UpgradeSuccess per result
    expect(values('UpgradeSuccess')).toHaveLength(datums);
    expect(values('PublishFailures')).toEqual([1]);
    expect(out.publish!.emfFallback).toBeGreaterThanOrEqual(datums);
    expect(out.publish!.error).toMatch(/InternalServiceError|HTTP 500/);
    for (const d of emf) expect(d._aws.CloudWatchMetrics[0].Namespace).toBe('KubeStreamProbe');
  });

  it('a deadline shorter than the plan: long holds are refused up front with a clear reason, the rest runs', async () => {
    const out = await handler({ clusters: ['lab'], holds: ['0s', '65s'] }, ctx(80_000));
    expect(out.refused).toEqual([{ holdSeconds: 65, reason: expect.stringMatching(/a 65s hold needs up to \d+s .* only \d+s are left/) }]);
    expect(out.reports[0]!.results.every((r) => r.holdSeconds === 0)).toBe(true);
    const nothing = await handler({ holds: ['10m'] }, ctx(30_000));
    expect(nothing).toMatchObject({ ok: true, reports: [], refused: [{ holdSeconds: 600 }] });
  });

  it('returns before its deadline with the safety margin', async () => {
    const t0 = performance.now();
    await handler({ clusters: ['lab'], holds: ['0s'] }, ctx(25_000));
    expect(performance.now() - t0).toBeLessThan(25_000 - 5_000);
  });

  it('a cluster whose credentials fail is not measured, said why, and published as ProbeError (not UpgradeSuccess 0)', async () => {
    const before = aws.puts.length;
    const out = await handler({ clusters: ['lost'], operations: ['exec'] }, ctx(80_000));
    const r = out.reports[0]!;
    expect(r.verdicts.map((v) => v.verdict)).toEqual(['not-measured']);
    expect(r.verdicts[0]!.diagnosis[0]).toMatchObject({ code: 'credentials', summary: expect.stringContaining('ResourceNotFoundException') });
    const sent = aws.puts.slice(before).flatMap((p) => p.metricData);
    expect(sent.map((d) => [d.MetricName, d.Value])).toEqual([['ProbeError', 1]]);
  });

  it("a cluster whose probing throws: that cluster is not measured (probe-failed, ProbeError 1) and the other cluster's metrics are still published", async () => {
    const before = aws.puts.length;
    const lines: string[] = [];
    const config = parseRuntimeConfig(process.env.KSP_LOCATION_CONFIG);
    const deps = awsDeps('eu-west-1', (l: string) => lines.push(l));
    failing.cluster = 'lab';
    const out = await runLocation(
      { clusters: ['lab', 'nodes-none'], holds: ['0s'], operations: ['exec'] },
      () => 80_000,
      config,
      deps,
      new AccessCache(),
    ).finally(() => (failing.cluster = undefined));
    expect(out.ok).toBe(true);
    const boom = out.reports.find((r) => r.cluster === 'lab');
    const lab2 = out.reports.find((r) => r.cluster === 'nodes-none');
    expect(boom!.verdicts.map((v) => v.verdict)).toEqual(['not-measured']);
    expect(boom!.verdicts[0]!.diagnosis[0]).toMatchObject({
      code: 'probe-failed',
      summary: expect.stringContaining("(INTERNAL): TypeError: Cannot read properties of undefined (reading 'pod')"),
    });
    expect(lab2!.results.length).toBeGreaterThan(0);
    const sent = aws.puts.slice(before).flatMap((p) => p.metricData);
    const of = (cluster: string) =>
      sent.filter((d) => d.Dimensions?.some((x) => x.Name === 'Cluster' && x.Value === cluster)).map((d) => `${d.MetricName}=${d.Value}`);
    expect(of('lab')).toEqual(['ProbeError=1']);
    expect(of('nodes-none')).toEqual(expect.arrayContaining(['ProbeError=0', 'UpgradeSuccess=1']));
    expect(lines.some((l) => /"msg":"cluster probe failed".*"cluster":"lab".*"code":"INTERNAL"/.test(l))).toBe(true);
  });

  it('a rotated token: the cached secret is used until the API server says 401, then read again on the next run', async () => {
    const secret = (token: string) => JSON.stringify({ token, caData: Buffer.from(lab.emulator.tls!.caPem).toString('base64') });
    aws.secrets.set(ROTATED_ARN, secret('the-token-before-rotation-000'));
    const reads = () => aws.calls.filter((c) => c === 'GetSecretValue eu-west-1').length;
    const before = reads();
    const first = await handler({ clusters: ['rotated'], operations: ['exec'] }, ctx(80_000));
    expect(first.reports[0]!.verdicts[0]!.diagnosis[0]!.code).toBe('credentials-rejected');
    aws.secrets.set(ROTATED_ARN, secret(TOKEN)); // the rotation reaches Secrets Manager
    const second = await handler({ clusters: ['rotated'], operations: ['exec'] }, ctx(80_000));
    expect(second.reports[0]!.verdicts.map((v) => v.verdict)).toEqual(['websocket-broken']); // measured again (this emulator refuses WebSocket)
    expect(reads() - before).toBe(2); // read once per run: the 401 evicted the cached value
  });

  it("a secret whose caData is no certificate: CONFIG_INVALID naming the secret's caData, as the plan's caData is refused when read", async () => {
    const arn = 'arn:aws:secretsmanager:eu-west-1:123456789012:secret:bad-ca-XyZ123';
    aws.secrets.set(arn, JSON.stringify({ token: TOKEN, caData: Buffer.from('not a certificate').toString('base64') }));
    const config = parseRuntimeConfig(process.env.KSP_LOCATION_CONFIG);
    const cluster = { ...config.clusters.find((c) => c.name === 'rotated')!, auth: { type: 'secret' as const, secretArn: arn } };
    const err = await connectionForCluster(
      cluster,
      'eu-west-1',
      { ...awsDeps('eu-west-1', () => {}), redactor: new SecretRedactor() },
      new AccessCache(),
    ).catch((e: unknown) => e);
    expect(errorCodeOf(err)).toBe('CONFIG_INVALID');
    expect((err as Error).message).toBe(
      `secret ${arn}: caData holds no PEM certificate that parses (kubectl: "unable to load root certificates: unable to parse bytes as PEM block")`,
    );
  });

  it('a bad event gets a typed error naming the field, and runs nothing', async () => {
    for (const [event, field] of [
      [{ holds: ['forever'] }, 'event.holds[0]'],
      [{ transports: ['http3'] }, 'event.transports[0]'],
      [{ clusters: ['nope'] }, 'event.clusters'],
      [{ clusters: [] }, 'event.clusters is empty'],
      [{ surprise: true }, 'event.surprise'],
      ['just a string', 'event must be an object'],
    ] as const) {
      const out = await handler(event, ctx(80_000));
      expect(out.ok).toBe(false);
      expect(out.error!.code).toBe('CONFIG_INVALID');
      expect(out.error!.message).toContain(field);
    }
  });

  it('EKS auth: the CA from eks:DescribeCluster (once per cold start), a fresh IAM token per invocation, never logged', async () => {
    const before = eksLab.emulator.upgrades.length;
    const out = await handler({ clusters: ['eks'], operations: ['exec'] }, ctx(80_000));
    expect(out.reports[0]!.verdicts[0]!.verdict).toBe('clean');
    // SigV4 is deterministic within one second (X-Amz-Date): let the clock move so a fresh mint differs.
    await new Promise((r) => setTimeout(r, 1100));
    await handler({ clusters: ['eks'], operations: ['exec'], transports: ['spdy'] }, ctx(80_000));
    expect(aws.calls.filter((c) => c === 'DescribeCluster eu-west-1')).toHaveLength(1);
    const ups = eksLab.emulator.upgrades.slice(before);
    expect(ups.length).toBe(3);
    expect(ups.every((u) => u.credential.kind === 'eks-token')).toBe(true);
    // One token per invocation: the two sessions of the first run share one, the second run has its own.
    expect(new Set(ups.map((u) => u.credential.fingerprint)).size).toBe(2);
    expect(logged.join('')).not.toContain('k8s-aws-v1.');
    expect(JSON.stringify(out)).not.toMatch(/k8s-aws-v1\.[A-Za-z0-9_-]{20}/);
  });

  it('reads a secret once, then uses it from the cache for its TTL, and never logs or returns the token', async () => {
    const reads = () => aws.calls.filter((c) => c.startsWith('GetSecretValue')).length;
    await handler({ clusters: ['lab'], holds: ['0s'] }, ctx(80_000));
    const after = reads();
    const out = await handler({ clusters: ['lab'], holds: ['0s'] }, ctx(80_000));
    expect(reads()).toBe(after); // cached (SECRET_TTL_MS: 5 min)
    expect(logged.join('')).not.toContain(TOKEN);
    expect(JSON.stringify(out)).not.toContain(TOKEN);
    expect(logged.some((l) => l.includes('"msg":"probe run"'))).toBe(true);
  });

  it("logs one line per verdict, with the fields the dashboard's Logs Insights table reads (src/lambda/verdict-log.ts)", async () => {
    const before = logged.length;
    await handler({ clusters: ['lab'], holds: ['0s'], schedule: 'short' }, ctx(80_000));
    const lines = logged
      .slice(before)
      .map((l) => JSON.parse(l))
      .filter((l) => l.msg === 'verdict');
    expect(lines).toHaveLength(2); // exec and port-forward, hold 0 s, keepalive kubectl
    for (const l of lines) {
      // This emulator plays an API server that refuses WebSocket (400): kubectl works only through its fallback.
      expect(l).toMatchObject({
        level: 'info',
        cluster: 'lab',
        keepalive: 'kubectl',
        holdSeconds: 0,
        verdict: 'websocket-broken',
        spdy: 'ok',
        websocket: 'fail',
        kubectl: 'works-via-fallback',
        schedule: 'short',
      });
      // The codes are fields; the sentences are for people and carry no code to read back (issue 53).
      expect(l.codes).toEqual(['api-server-refused', 'silent-fallback']);
      expect(l.code).toBe('api-server-refused');
      expect(l.diagnosis).toMatch(/^The API server itself refused the WebSocket (exec|port-forward) upgrade: HTTP 400.* \| /);
      expect(l.diagnosis).not.toMatch(/api-server-refused|silent-fallback/);
      expect(l.check).toEqual(expect.any(String));
      // Every field LATEST_VERDICTS_QUERY names is there.
      for (const field of LATEST_VERDICTS_QUERY.join(' ').match(/\b(verdict|kubectl|code|diagnosis|check|cluster|operation|keepalive|holdSeconds)\b/g)!)
        expect(l).toHaveProperty(field);
    }
    expect(lines.map((l) => l.operation).sort()).toEqual(['exec', 'portforward']);
    expect(logged.join('')).not.toContain(TOKEN);
  });

  it('logs the evidence of every failed session, both attempts, under the run id its verdict and run lines carry; never the token', async () => {
    const before = logged.length;
    const summary = await handler({ clusters: ['lab'], holds: ['0s'], keepalives: ['kubectl'], schedule: 'short' }, ctx(80_000));
    const all = logged.slice(before).map((l) => JSON.parse(l));
    const run = all.find((l) => l.msg === 'probe run')!.run;
    expect(run).toMatch(/^[0-9a-f-]{36}$/);
    expect(summary.run).toBe(run);
    expect(all.filter((l) => l.msg === 'verdict').every((l) => l.run === run)).toBe(true);
    const evidence = all.filter((l) => l.msg === 'evidence');
    // WebSocket exec and port-forward refused by the API server (400), each tried twice: four lines.
    expect(evidence.map((l) => `${l.session} ${l.attempt}`).sort()).toEqual([
      'WebSocket exec first',
      'WebSocket exec retry',
      'WebSocket port-forward first',
      'WebSocket port-forward retry',
    ]);
    for (const l of evidence) {
      expect(l).toMatchObject({ level: 'warn', run, location: 'eu-west-1-vpc-a', cluster: 'lab', schedule: 'short', ok: false, verdict: 'websocket-broken' });
      expect(l.upgrade.status).toBe(400);
      expect(l.diagnosisCode).toBe('api-server-refused');
      expect(l.diagnosis).toMatch(/^api-server-refused: /);
      expect(l.wire.reply.status).toBe(400);
      expect(l.wire.request.headers).toContainEqual(['Authorization', 'Bearer <masked>']);
    }
    expect(logged.slice(before).join('')).not.toContain(TOKEN);
  });
});
