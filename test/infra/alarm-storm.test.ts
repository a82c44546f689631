/**
 * The alarm-storm test: probe histories replayed through the alarms CDK
 * synthesizes for the single-location example, counting the notifications
 * each topic gets. Each run's sessions go through the real verdicts() and
 * reportDatums() (the kubectl model and the metric contract), and the alarms
 * are evaluated with CloudWatch's documented M-of-N and missing-data rules
 * (test/helpers/cloudwatch-alarms.ts). Six healthy hours come first; their
 * notifications (the INSUFFICIENT_DATA → OK of a new alarm) are not counted.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { App } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { LocationStack } from '../../infra/location-stack.js';
import { loadProbeConfig } from '../../src/config/load.js';
import type { ProbeConfig } from '../../src/config/probe-config.js';
import { METRIC_NAMESPACE } from '../../src/metrics/contract.js';
import { perNodeDatums, reportDatums } from '../../src/metrics/datums.js';
import type { PerNodeReport } from '../../src/probe/per-node.js';
import type { SessionResult, UpgradeOutcome } from '../../src/probe/types.js';
import { OPERATIONS, TRANSPORTS, parseDurationSeconds, type KeepaliveMode, type Operation, type Transport } from '../../src/vocabulary.js';
import { AlarmSimulator } from '../helpers/cloudwatch-alarms.js';
import { deployedTemplate } from '../helpers/deployed-template.js';
import { LocalSns } from '../helpers/local-sns.js';
import { OK_UPGRADE as SHARED_OK_UPGRADE, probeReport, session as sessionResult } from '../helpers/sessions.js';

const HOUR = 3600;
const WARM_UP = 6 * HOUR;
const LOCATION = 'eu-west-1-public';
const CLUSTER = 'prod-eu';

interface Spec {
  readonly operation: Operation;
  readonly transport: Transport;
  readonly keepalive: KeepaliveMode;
  readonly holdSeconds: number;
}
/** How the path treats one session of the run `run` (numbered per schedule) starting at `t`; undefined: the probe did not run at all. */
type Path = (s: Spec, t: number, run: number) => Partial<SessionResult> | 'no-run';

const OK_UPGRADE: UpgradeOutcome = { ...SHARED_OK_UPGRADE, handshakeMs: 40 };
const healthy: Path = () => ({});
const unreachable: Partial<SessionResult> = {
  ok: false,
  firstEchoMs: null,
  echoMs: null,
  hold: { survived: null, disconnectSeconds: null, cause: null },
  upgrade: { ...OK_UPGRADE, ok: false, status: null, handshakeMs: null, error: 'connect ETIMEDOUT', errorCode: 'DIAL_TIMEOUT' },
};
const refusedByHop: Partial<SessionResult> = {
  ok: false,
  firstEchoMs: null,
  echoMs: null,
  hold: { survived: null, disconnectSeconds: null, cause: null },
  upgrade: { ...OK_UPGRADE, ok: false, status: 403, handshakeMs: null, error: 'HTTP 403', errorCode: 'UPGRADE_REJECTED', kubernetesStatus: false },
};
const unauthorized: Partial<SessionResult> = {
  ok: false,
  firstEchoMs: null,
  echoMs: null,
  hold: { survived: null, disconnectSeconds: null, cause: null },
  upgrade: { ...OK_UPGRADE, ok: false, status: 401, handshakeMs: null, error: 'HTTP 401', errorCode: 'UPGRADE_REJECTED', kubernetesStatus: true },
};
const cutIdleAt = (seconds: number): Partial<SessionResult> => ({
  ok: false,
  echoMs: null,
  error: 'lost',
  errorCode: 'SESSION_LOST',
  hold: { survived: false, disconnectSeconds: seconds + 0.3, cause: 'fin', idleSeconds: seconds, sinceDataSeconds: seconds },
});

function session(s: Spec, over: Partial<SessionResult>): SessionResult {
  return sessionResult(s.transport, { ...s, upgrade: OK_UPGRADE, firstEchoMs: 2, echoMs: 2, ...over });
}

interface Counts {
  pages: number;
  pageOks: number;
  tickets: number;
  ticketAlarms: string[];
}

/** Per-node probing of three nodes at time `t`: how many fail this operation × transport, or why none was probed. */
type NodesPath = (operation: Operation, transport: Transport, t: number) => number | 'no-targets' | 'unreachable';

function perNodeReport(nodes: NodesPath, t: number): PerNodeReport {
  const base = { probeVersion: 'test', location: LOCATION, cluster: CLUSTER, selector: 'x', nodes: [], operations: OPERATIONS, transports: TRANSPORTS };
  const first = nodes(OPERATIONS[0], TRANSPORTS[0], t);
  if (first === 'no-targets') return { ...base, summary: [], error: 'no Running pod labelled x' };
  if (first === 'unreachable') return { ...base, summary: [], error: 'could not be listed', errorCode: 'DIAL_TIMEOUT' };
  const summary = OPERATIONS.flatMap((operation) =>
    TRANSPORTS.map((transport) => {
      const n = nodes(operation, transport, t) as number;
      return {
        operation,
        transport,
        probed: 3,
        failing: Array.from({ length: n }, (_, i) => ({
          node: `node-${i}`,
          class: 'stream-error-after-upgrade',
          kubeletVersion: 'v1.36.0',
          extendWebSockets: true,
        })),
        text: '',
      };
    }),
  );
  return { ...base, summary };
}

/** Replays `hours` of `path` after the healthy warm-up, then `recoverHours` healthy, through the template's alarms. */
function replay(config: ProbeConfig, template: unknown, phases: [Path, number][], nodes?: NodesPath): Counts & { sim: AlarmSimulator; idleTimeouts: number[] } {
  const sim = new AlarmSimulator(template);
  replayed.push({ template, sim });
  const idleTimeouts: number[] = [];
  const schedules = config.schedules.map((s) => ({
    every: s.expression === 'rate(5 minutes)' ? 300 : s.expression === 'rate(1 hour)' ? HOUR : NaN,
    holds: s.holds.map((h) => parseDurationSeconds('hold', h)),
    keepalives: s.keepalives,
  }));
  expect(schedules.every((s) => Number.isFinite(s.every))).toBe(true);
  const timeline: [number, Path][] = [];
  let t0 = 0;
  for (const [path, hours] of [[healthy, WARM_UP / HOUR], ...phases] as [Path, number][]) {
    timeline.push([t0, path]);
    t0 += hours * HOUR;
  }
  const end = t0;
  const pathAt = (t: number) => [...timeline].reverse().find(([from]) => t >= from)![1];
  for (let t = 0; t < end; t += 60) {
    for (const s of schedules) {
      if (t % s.every !== 0) continue;
      const run = t / s.every;
      const path = pathAt(t);
      const results: SessionResult[] = [];
      let ran = true;
      for (const operation of OPERATIONS)
        for (const keepalive of s.keepalives)
          for (const holdSeconds of s.holds)
            for (const transport of TRANSPORTS) {
              const spec = { operation, transport, keepalive, holdSeconds };
              const over = path(spec, t, run);
              if (over === 'no-run') ran = false;
              else results.push(session(spec, over));
            }
      if (!ran) continue;
      const report = probeReport(results, LOCATION, CLUSTER);
      // Published when the run ends: after its longest hold.
      const publishedAt = t + Math.max(...s.holds) + 5;
      const perNode = nodes ? perNodeDatums(perNodeReport(nodes, t), new Date(publishedAt * 1000)) : [];
      for (const d of [...reportDatums(report, new Date(publishedAt * 1000)), ...perNode]) {
        sim.put(METRIC_NAMESPACE, d.name, d.dimensions as Record<string, string>, d.value, publishedAt);
        if (d.name === 'IdleTimeout') idleTimeouts.push(d.value);
      }
    }
    sim.evaluate(t);
  }
  const counted = sim.notifications.filter((n) => n.at >= WARM_UP);
  const page = counted.filter((n) => /PageTopic/.test(n.topic));
  const ticket = counted.filter((n) => /TicketTopic/.test(n.topic));
  expect(counted.length).toBe(page.length + ticket.length);
  return {
    sim,
    idleTimeouts,
    pages: page.filter((n) => n.state === 'ALARM').length,
    pageOks: page.filter((n) => n.state === 'OK').length,
    tickets: ticket.filter((n) => n.state === 'ALARM').length,
    ticketAlarms: [...new Set(ticket.map((n) => n.alarm))],
  };
}

/**
 * Delivery: every notification a replay counted is published the way CloudWatch publishes an alarm action (as
 * cloudwatch.amazonaws.com, for that alarm's ARN, in this account) to the SNS stand-in, which delivers only what
 * the deployed topic and key policies admit (AWS's rules: test/helpers/local-sns.ts).
 */
const ACCOUNT = '111111111111';
const replayed: { template: unknown; sim: AlarmSimulator }[] = [];
async function deliver(template: unknown, notifications: AlarmSimulator['notifications']): Promise<LocalSns> {
  const deployed = deployedTemplate(template, { account: ACCOUNT, region: 'eu-west-1', stackName: 'S' });
  const sns = new LocalSns(deployed);
  const alarmArn = (name: string) =>
    [...deployed.ofType('AWS::CloudWatch::Alarm'), ...deployed.ofType('AWS::CloudWatch::CompositeAlarm')].find((a) => a.name === name)!.arn!;
  for (const n of notifications) {
    await sns
      .publishAs('cloudwatch.amazonaws.com', deployed.get(n.topic).arn!, `${n.alarm} ${n.state}`, { arn: alarmArn(n.alarm), account: ACCOUNT })
      .catch((e: Error) => e);
  }
  return sns;
}
afterEach(async () => {
  for (const { template, sim } of replayed.splice(0)) {
    const counted = sim.notifications.filter((n) => n.at >= WARM_UP);
    const sns = await deliver(template, counted);
    expect(sns.refusals).toEqual([]);
    expect(sns.deliveries).toHaveLength(counted.length);
  }
});

let config: ProbeConfig;
let template: unknown;
let templateTicketingHolds: unknown;
const outdirs: string[] = [];
const synth = (c: ProbeConfig) => {
  const outdir = mkdtempSync(join(tmpdir(), 'ksp-storm-'));
  outdirs.push(outdir);
  return Template.fromStack(new LocationStack(new App({ outdir }), 'S', { config: c, location: c.locations[0]! })).toJSON();
};
afterAll(() => {
  for (const d of outdirs) rmSync(d, { recursive: true, force: true });
});
beforeAll(() => {
  config = loadProbeConfig('infra/examples/single-location.yaml');
  template = synth(config);
  templateTicketingHolds = synth({ ...config, alarms: { ...config.alarms, ticketHoldsWithoutPings: true } });
}, 120_000);

describe('alarm storms: notifications per replayed history (single-location example: every 5 min 0 s + 65 s holds, hourly 6 min holds, 2 of 3)', () => {
  it('a healthy day: nothing', () => {
    const r = replay(config, template, [[healthy, 24]]);
    expect(r).toMatchObject({ pages: 0, pageOks: 0, tickets: 0 });
    // Every alarm on our namespace watches a metric the probe really publishes (PublishFailures only when
    // PutMetricData fails, in an EMF line: src/metrics/cloudwatch.ts).
    expect(r.sim.unmatched(METRIC_NAMESPACE)).toEqual(['kube-stream-probe-eu-west-1-public-publish-failures']);
  });

  it('one cluster unreachable for an hour: one page and its OK, not 40 e-mails; the page within 20 minutes', () => {
    const r = replay(config, template, [
      [() => unreachable, 1],
      [healthy, 3],
    ]);
    expect(r).toMatchObject({ pages: 1, pageOks: 1, tickets: 0 });
    const page = r.sim.notifications.find((n) => n.at >= WARM_UP && n.state === 'ALARM')!;
    expect(page.alarm).toBe('kube-stream-probe-eu-west-1-public-prod-eu-PAGE');
    expect(page.at - WARM_UP).toBeGreaterThanOrEqual(10 * 60);
    expect(page.at - WARM_UP).toBeLessThanOrEqual(20 * 60);
  });

  it("the page reaches the page topic's subscribers; with the topic policy CDK writes for enforceSSL alone (no CloudWatch statement) SNS refuses it and nobody is paged", async () => {
    const r = replay(config, template, [
      [() => unreachable, 1],
      [healthy, 3],
    ]);
    const page = r.sim.notifications.filter((n) => n.at >= WARM_UP && n.state === 'ALARM');
    const sns = await deliver(template, page);
    expect(sns.deliveries).toEqual([
      expect.objectContaining({
        topicArn: expect.stringMatching(/^arn:aws:sns:eu-west-1:111111111111:.*PageTopic/),
        message: 'kube-stream-probe-eu-west-1-public-prod-eu-PAGE ALARM',
      }),
    ]);
    const withoutStatement = structuredClone(template) as { Resources: Record<string, any> };
    for (const res of Object.values(withoutStatement.Resources)) {
      if (res.Type === 'AWS::SNS::TopicPolicy')
        res.Properties.PolicyDocument.Statement = res.Properties.PolicyDocument.Statement.filter(
          (st: any) => st.Principal?.Service !== 'cloudwatch.amazonaws.com',
        );
    }
    const refused = await deliver(withoutStatement, page);
    expect(refused.deliveries).toEqual([]);
    expect(refused.refusals).toEqual([expect.stringMatching(/sns:Publish on .*PageTopic.* by cloudwatch\.amazonaws\.com: ImplicitlyDenied/)]);
  });

  it('a hop that refuses WebSocket upgrades for a day: no page (kubectl works through its fallback), one GA-readiness ticket', () => {
    const r = replay(config, template, [
      [(s) => (s.transport === 'websocket' ? refusedByHop : {}), 24],
      [healthy, 3],
    ]);
    expect(r).toMatchObject({ pages: 0, pageOks: 0, tickets: 1 });
    expect(r.ticketAlarms).toEqual(['kube-stream-probe-eu-west-1-public-ga-readiness']);
  });

  it("a NAT gateway cutting idle flows at 350 s, for a day: holds without pings die, kubectl's survive: no alarm at all, IdleTimeout 350 s published", () => {
    const nat: Path = (s) => (s.keepalive === 'none' && s.holdSeconds > 350 ? cutIdleAt(350) : {});
    const r = replay(config, template, [[nat, 24]]);
    expect(r).toMatchObject({ pages: 0, pageOks: 0, tickets: 0 });
    expect(new Set(r.idleTimeouts)).toEqual(new Set([350]));
    // With ticketHoldsWithoutPings, each cut hold (2 operations × 2 transports) is a ticket, once.
    const asked = replay(config, templateTicketingHolds, [[nat, 24]]);
    expect(asked).toMatchObject({ pages: 0, tickets: 4 });
  });

  it('credentials rejected for two hours: not-measured is a probe-health ticket, never a page', () => {
    const r = replay(config, template, [
      [() => unauthorized, 2],
      [healthy, 3],
    ]);
    expect(r).toMatchObject({ pages: 0, pageOks: 0, tickets: 1 });
    expect(r.ticketAlarms).toEqual(['kube-stream-probe-eu-west-1-public-probe-health']);
  });

  it('the probe stops running for two hours: a probe-health ticket (its ProbeError goes missing), no page', () => {
    const r = replay(config, template, [
      [() => 'no-run', 2],
      [healthy, 3],
    ]);
    expect(r).toMatchObject({ pages: 0, pageOks: 0, tickets: 1 });
    expect(r.ticketAlarms).toEqual(['kube-stream-probe-eu-west-1-public-probe-health']);
  });

  it('a path failing every other run for three hours: it stays in ALARM (each 10-minute period holds a failure): one page, one OK', () => {
    const flapping: Path = (_s, _t, run) => (run % 2 === 0 ? unreachable : {});
    const r = replay(config, template, [
      [flapping, 3],
      [healthy, 3],
    ]);
    expect(r).toMatchObject({ pages: 1, pageOks: 1, tickets: 0 });
  });

  it('documented limit: a path failing one run in four flaps (CloudWatch has no hysteresis): counted here, and in the README', () => {
    const sparse: Path = (_s, _t, run) => (run % 4 === 0 ? unreachable : {});
    const r = replay(config, template, [
      [sparse, 3],
      [healthy, 3],
    ]);
    // Its 10-minute periods alternate failing / clean, so 2 of 3 is met every other period: a page and an OK
    // every 20 minutes, 8 of each in three hours.
    expect(r.pages).toBe(8);
    expect(r.pageOks).toBe(8);
    expect(r.tickets).toBe(0);
    // The README's remedy: 3 of 6 periods holds it in ALARM.
    const wider = { ...config, alarms: { ...config.alarms, evaluationPeriods: 6, datapointsToAlarm: 3 } };
    const w = replay(wider, synth(wider), [
      [sparse, 3],
      [healthy, 3],
    ]);
    expect(w).toMatchObject({ pages: 1, pageOks: 1, tickets: 0 });
  });
});

describe('alarm storms with per-node probing (the same example, its cluster probed per node)', () => {
  let perNodeConfig: ProbeConfig;
  let perNodeTemplate: unknown;
  beforeAll(() => {
    perNodeConfig = { ...config, clusters: config.clusters.map((c) => ({ ...c, target: { ...c.target, perNode: true } })) };
    perNodeTemplate = synth(perNodeConfig);
  }, 120_000);
  const allWork: NodesPath = () => 0;
  const HEALTH = 'kube-stream-probe-eu-west-1-public-probe-health';

  it('a healthy day with three nodes: nothing', () => {
    expect(replay(perNodeConfig, perNodeTemplate, [[healthy, 24]], allWork)).toMatchObject({ pages: 0, pageOks: 0, tickets: 0 });
  });

  it('one node of three breaks WebSocket exec (a 1.36 kubelet passthrough) for a day: one nodes ticket, no page (the main target works)', () => {
    const oneBad: NodesPath = (op, transport, t) => (t >= WARM_UP && t < WARM_UP + 24 * HOUR && op === 'exec' && transport === 'websocket' ? 1 : 0);
    const r = replay(
      perNodeConfig,
      perNodeTemplate,
      [
        [healthy, 24],
        [healthy, 3],
      ],
      oneBad,
    );
    expect(r).toMatchObject({ pages: 0, pageOks: 0, tickets: 1 });
    expect(r.ticketAlarms).toEqual(['kube-stream-probe-eu-west-1-public-nodes']);
  });

  it('the per-node targets are removed for two hours: one probe-health ticket (no nodes probed)', () => {
    const gone: NodesPath = (_op, _tr, t) => (t >= WARM_UP && t < WARM_UP + 2 * HOUR ? 'no-targets' : 0);
    const r = replay(perNodeConfig, perNodeTemplate, [[healthy, 5]], gone);
    expect(r).toMatchObject({ pages: 0, tickets: 1 });
    expect(r.ticketAlarms).toEqual([HEALTH]);
  });

  it('the cluster unreachable for an hour: still one page and its OK, and no ticket (per-node probing does not tell the outage twice)', () => {
    const down: NodesPath = (_op, _tr, t) => (t >= WARM_UP && t < WARM_UP + HOUR ? 'unreachable' : 0);
    const r = replay(
      perNodeConfig,
      perNodeTemplate,
      [
        [() => unreachable, 1],
        [healthy, 3],
      ],
      down,
    );
    expect(r).toMatchObject({ pages: 1, pageOks: 1, tickets: 0 });
  });
});
