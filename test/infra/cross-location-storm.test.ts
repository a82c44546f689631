/**
 * Where it broke, across locations: probe histories seen from two locations of one cluster, replayed through the
 * alarms CDK synthesizes for each location (test/helpers/cloudwatch-alarms.ts, as the alarm-storm test), the
 * notifiers' EventBridge routes (a page of a cluster both probe is forwarded to the page bus, not published), and
 * the real notifier (src/lambda/notify.ts, as deployed: it reads each run's evidence lines and puts the finished page
 * on the bus, real SDK clients against the local AWS stand-in) and the real aggregator (src/lambda/cross-location.ts)
 * with the configuration the cross-location stack deploys; its delayed decisions come due on the replay's clock as
 * SQS delivers them. Every page the aggregator publishes is then
 * delivered as its role through the deployed topic and key policies (AWS's policy evaluation, test/helpers/local-sns.ts).
 *
 * The config: the single-location example probed from a second region too, whose schedules run two minutes later.
 */
import { CloudWatchLogsClient } from '@aws-sdk/client-cloudwatch-logs';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { EventBridgeClient } from '@aws-sdk/client-eventbridge';
import { SNSClient } from '@aws-sdk/client-sns';
import { SQSClient } from '@aws-sdk/client-sqs';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { App, type Stack } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CrossLocationStack } from '../../infra/cross-location.js';
import { LocationStack } from '../../infra/location-stack.js';
import { crossLocationPlan } from '../../src/config/cross-location.js';
import { readConfigDocument } from '../../src/config/load.js';
import { parseProbeConfig, type ProbeConfig } from '../../src/config/probe-config.js';
import {
  aggregate,
  dynamoRecordStore,
  parseCrossLocationConfig,
  type CrossLocationConfig,
  type CrossLocationDeps,
  type Published,
} from '../../src/lambda/cross-location.js';
import { evidenceLogLines } from '../../src/lambda/evidence-log.js';
import { notify, parseNotifyConfig, type NotifyConfig, type NotifyDeps } from '../../src/lambda/notify.js';
import { METRIC_NAMESPACE } from '../../src/metrics/contract.js';
import { AlarmSimulator } from '../helpers/cloudwatch-alarms.js';
import { deployedTemplate } from '../helpers/deployed-template.js';
import { roleByArn, rolePolicies } from '../helpers/iam-authority.js';
import { startLocalAws, type LocalAws } from '../helpers/local-aws.js';
import { LocalSns } from '../helpers/local-sns.js';
import { CLUSTER, LOCATION, WARM_UP, healthy, historyRuns, historySchedules, refusedByHop, unreachable, type Path } from '../helpers/probe-histories.js';

const SECOND = 'us-east-1-public';
const ACCOUNT = '111111111111';
const OFFSET = 120;

let config: ProbeConfig;
const templates = new Map<string, unknown>();
let crossTemplate: unknown;
let crossConfig: CrossLocationConfig;
const outdirs: string[] = [];

let aws: LocalAws;
const notifyConfigs = new Map<string, NotifyConfig>();
beforeAll(async () => {
  aws = await startLocalAws();
  const doc = readConfigDocument('infra/examples/single-location.yaml') as { locations: unknown[] };
  doc.locations.push({ name: SECOND, account: ACCOUNT, region: 'us-east-1' });
  config = parseProbeConfig(doc, 'two-locations');
  const outdir = mkdtempSync(join(tmpdir(), 'ksp-cross-storm-'));
  outdirs.push(outdir);
  const app = new App({ outdir });
  const stacks = config.locations.map((location) => [location.name, new LocationStack(app, `S-${location.name}`, { config, location })] as const);
  const cross = new CrossLocationStack(app, 'X', { config, plan: crossLocationPlan(config)! });
  const json = (s: Stack) => Template.fromStack(s).toJSON();
  for (const [name, stack] of stacks) templates.set(name, json(stack));
  crossTemplate = json(cross);
  const deployed = deployedTemplate(crossTemplate, { account: ACCOUNT, region: 'eu-west-1', stackName: 'X' });
  const fn = deployed.ofType('AWS::Lambda::Function').find((f) => f.props.Environment?.Variables?.KSP_CROSS_LOCATION_CONFIG)!;
  crossConfig = parseCrossLocationConfig(String(deployed.resolve(fn.props.Environment.Variables.KSP_CROSS_LOCATION_CONFIG)));
  aws.buses.add(deployed.ofType('AWS::Events::EventBus')[0]!.arn!);
  for (const l of config.locations) {
    const t = deployedTemplate(templates.get(l.name), { account: ACCOUNT, region: l.region, stackName: `S-${l.name}` });
    const notifier = t.ofType('AWS::Lambda::Function').find((f) => f.props.Handler === 'index.notify')!;
    notifyConfigs.set(l.name, parseNotifyConfig(String(t.resolve(notifier.props.Environment.Variables.KSP_NOTIFY_CONFIG))));
  }
}, 120_000);
afterAll(async () => {
  for (const d of outdirs) rmSync(d, { recursive: true, force: true });
  await aws?.close();
});

/** A location's notifier as deployed, its clients on the stand-in, its clock at `t` (s). */
function notifierAt(location: string, t: number) {
  const config = notifyConfigs.get(location)!;
  const client = (region: string) => ({ region, endpoint: aws.url, credentials: { accessKeyId: 'AKIDLOCAL', secretAccessKey: 'local' } });
  const deps: NotifyDeps = {
    logs: new CloudWatchLogsClient(client(config.region)),
    sns: new SNSClient(client(config.region)),
    events: (region) => new EventBridgeClient(client(region)),
    log: () => {},
    now: () => new Date(t * 1000),
  };
  return (alarmName: string, state: 'ALARM' | 'OK') =>
    notify(
      {
        'detail-type': 'CloudWatch Alarm State Change',
        source: 'aws.cloudwatch',
        time: new Date(t * 1000).toISOString(),
        detail: {
          alarmName,
          state: { value: state, reason: 'replayed', timestamp: new Date(t * 1000).toISOString() },
          previousState: { value: state === 'ALARM' ? 'OK' : 'ALARM' },
        },
      },
      config,
      deps,
    );
}

interface Replayed {
  /** What the aggregator published, with the replay time (s). */
  readonly published: (Published & { at: number })[];
  /** Notifications published directly (not forwarded), after the warm-up: tickets, and pages of unshared clusters. */
  readonly direct: { at: number; alarm: string; state: string }[];
  /** Page state changes the notifiers forwarded after the warm-up. */
  readonly forwarded: number;
}

/** Replays each location's phases side by side; the aggregator sees their forwarded pages and its queue's decisions. */
async function replay(phases: Record<string, [Path, number][]>): Promise<Replayed> {
  const sims = config.locations.map((l, i) => ({
    location: l.name,
    sim: new AlarmSimulator(templates.get(l.name)),
    ...historyRuns(historySchedules(config), phases[l.name]!, undefined, { location: l.name, offset: i * OFFSET }),
    next: 0,
    seen: 0,
  }));
  const end = Math.max(...sims.map((s) => s.end));
  const queue: { due: number; body: string }[] = [];
  const published: Replayed['published'] = [];
  let now = 0;
  // The aggregator as deployed, its real SDK clients on the stand-in: its table, its queue (each message comes due
  // on the replay's clock after its DelaySeconds), its topic.
  const client = { region: 'eu-west-1', endpoint: aws.url, credentials: { accessKeyId: 'AKIDLOCAL', secretAccessKey: 'local' } };
  aws.tables.set(crossConfig.table, new Map());
  aws.sent.length = 0;
  aws.published.length = 0;
  let sentSeen = 0;
  const deps: CrossLocationDeps = {
    store: dynamoRecordStore(new DynamoDBClient(client), crossConfig.table),
    sqs: new SQSClient({ ...client, useQueueUrlAsEndpoint: false }),
    sns: new SNSClient(client),
    log: () => {},
    now: () => new Date(now * 1000),
  };
  const decide = async (event: unknown) => {
    const out = await aggregate(event, crossConfig, deps);
    published.push(...out.map((p) => ({ ...p, at: now })));
    for (const m of aws.sent.slice(sentSeen)) queue.push({ due: now + m.delaySeconds, body: m.body });
    sentSeen = aws.sent.length;
  };
  const direct: Replayed['direct'] = [];
  let forwarded = 0;
  aws.logGroups.clear();
  aws.events.length = 0;
  for (let t = 0; t < end; t += 60) {
    now = t;
    for (const s of sims) {
      for (; s.next < s.runs.length && s.runs[s.next]!.t === t; s.next++) {
        const r = s.runs[s.next]!;
        for (const d of r.datums) s.sim.put(METRIC_NAMESPACE, d.name, d.dimensions as Record<string, string>, d.value, r.publishedAt);
        // Its evidence lines, as the Lambda logs them when the run publishes.
        const group = notifyConfigs.get(s.location)!.logGroup;
        const lines = evidenceLogLines(r.report, { id: `run-${s.location}-${r.t}`, location: s.location, schedule: 'replayed' });
        aws.logGroups.set(group, [
          ...(aws.logGroups.get(group) ?? []),
          ...lines.map((l, i) => ({ timestamp: r.publishedAt * 1000 + i, message: JSON.stringify(l) })),
        ]);
      }
      s.sim.evaluate(t);
      for (const n of s.sim.notifications.slice(s.seen)) {
        if (!n.forward) {
          if (n.at >= WARM_UP) direct.push({ at: n.at, alarm: n.alarm, state: n.state });
          continue;
        }
        expect(n.forward).toBe(`arn:aws:events:eu-west-1:${ACCOUNT}:event-bus/kube-stream-probe-pages`);
        if (n.at >= WARM_UP) forwarded++;
        const told = await notifierAt(s.location, t)(n.alarm, n.state as 'ALARM' | 'OK');
        expect(told.forwarded).toBe(true);
        const e = aws.events.at(-1)!;
        await decide({ source: e.source, 'detail-type': e.detailType, detail: e.detail });
      }
      s.seen = s.sim.notifications.length;
    }
    for (const m of queue.filter((q) => q.due <= t)) {
      queue.splice(queue.indexOf(m), 1);
      await decide({ Records: [{ body: m.body }] });
    }
  }
  // SNS got each of them (subject rules included), and nothing else: no location published on its own.
  expect(aws.published.map((p) => [p.topicArn, p.subject])).toEqual(published.map((p) => [crossConfig.topicArn, p.subject]));
  // Every page the aggregator published reaches its topic's subscribers, published as its role.
  const deployed = deployedTemplate(crossTemplate, { account: ACCOUNT, region: 'eu-west-1', stackName: 'X' });
  const sns = new LocalSns(deployed);
  const fn = deployed.ofType('AWS::Lambda::Function').find((f) => f.props.Environment?.Variables?.KSP_CROSS_LOCATION_CONFIG)!;
  const roleId = roleByArn(deployed, String(deployed.resolve(fn.props.Role)));
  for (const p of published)
    await sns.publishAsRole({ arn: deployed.get(roleId).arn!, policies: rolePolicies(deployed, roleId) }, crossConfig.topicArn, p.subject);
  expect(sns.refusals).toEqual([]);
  expect(sns.deliveries).toHaveLength(published.length);
  return { published: published.filter((p) => p.at >= WARM_UP), direct, forwarded };
}

const both = (one: [Path, number][], other: [Path, number][] = one) => ({ [LOCATION]: one, [SECOND]: other });
const pages = (r: Replayed) => r.published.map((p) => `${p.state} ${p.kind}${p.location ? ` ${p.location}` : ''}`);

describe('where it broke, across locations (the single-location example probed from eu-west-1 and us-east-1)', () => {
  it('the plan: both locations forward their page of prod-eu; a page waits one run of the fastest schedule and two minutes', () => {
    expect(crossConfig.clusters).toEqual({ [CLUSTER]: [LOCATION, SECOND] });
    expect(crossConfig.waitSeconds).toBe(300 + 120);
  });

  it('a healthy day: nothing', async () => {
    const r = await replay(both([[healthy, 24]]));
    expect(r.published).toEqual([]);
    expect(r.direct).toEqual([]);
  });

  it('a hop on one location’s path breaks kubectl there for an hour: one page naming that location, and its RESOLVED; the other location says nothing', async () => {
    const r = await replay(
      both(
        [
          [() => unreachable, 1],
          [healthy, 3],
        ],
        [[healthy, 4]],
      ),
    );
    expect(pages(r)).toEqual([`ALARM location ${LOCATION}`, `OK location ${LOCATION}`]);
    const page = r.published[0]!;
    expect(page.message).toMatch(new RegExp(`^Seen from ${LOCATION} only: ${SECOND}, which also probes ${CLUSTER}, has not paged`));
    // The location's own page, as its notifier wrote it from the newest failed run's evidence lines.
    expect(page.subject).toBe(`PAGE: ${LOCATION} -> ${CLUSTER} - unreachable`);
    expect(page.message).toMatch(/\nDiagnosis: unreachable: /);
    expect(page.message).toMatch(new RegExp(`Failed in run run-${LOCATION}-\\d+ at `));
    expect(page.message).toMatch(
      /That run's evidence \(what the wire showed\): https:\/\/eu-west-1\.console\.aws\.amazon\.com\/cloudwatch\/home\?region=eu-west-1#logs-insights:queryDetail=/,
    );
    // It went out after its wait: the first failed run is at the warm-up's end, the location's alarm fires at its first evaluation after.
    expect(page.at - WARM_UP).toBeGreaterThanOrEqual(crossConfig.waitSeconds);
    expect(page.at - WARM_UP).toBeLessThanOrEqual(crossConfig.waitSeconds + 5 * 60);
    expect(r.direct).toEqual([]);
  });

  it('the cluster fails from every location for an hour (the second sees it two minutes later): one page for the cluster, its RESOLVED, no page per location', async () => {
    const r = await replay(
      both([
        [() => unreachable, 1],
        [healthy, 3],
      ]),
    );
    expect(pages(r)).toEqual(['ALARM cluster', 'OK cluster']);
    expect(r.published[0]!.message).toMatch(
      new RegExp(`^PAGE: ${CLUSTER} fails from every location that probes it \\(${LOCATION}, ${SECOND}\\): the cluster's side`),
    );
    expect(r.published[0]!.subject).toBe(`PAGE: every location -> ${CLUSTER} - unreachable`);
    // Each location's diagnosis and the link to its own run's evidence, in its own region.
    for (const [location, region] of [
      [LOCATION, 'eu-west-1'],
      [SECOND, 'us-east-1'],
    ] as const) {
      expect(r.published[0]!.message).toMatch(new RegExp(`--- ${location} \\(in ALARM since [^)]+\\) ---\\n[^\\n]+\\nDiagnosis: unreachable: `));
      expect(r.published[0]!.message).toContain(`Failed in run run-${location}-`);
      expect(r.published[0]!.message).toContain(`https://${region}.console.aws.amazon.com/cloudwatch/home?region=${region}#logs-insights:queryDetail=`);
    }
    // Paged as soon as the second location agreed: well before a single location's wait would have ended.
    expect(r.published[0]!.at - WARM_UP).toBeLessThan(crossConfig.waitSeconds);
    expect(r.forwarded).toBe(4);
    expect(r.direct).toEqual([]);
  });

  it('one location fails for an hour, the other for ten minutes in the middle of it: the location is paged first, then the cluster once both fail; one RESOLVED each', async () => {
    const r = await replay(
      both(
        [
          [() => unreachable, 1],
          [healthy, 3],
        ],
        [
          [healthy, 0.5],
          [() => unreachable, 1 / 6],
          [healthy, 3.5],
        ],
      ),
    );
    expect(pages(r)).toEqual([`ALARM location ${LOCATION}`, 'ALARM cluster', 'OK cluster']);
  });

  it('a hop refusing WebSocket from one location for a day: kubectl works through its fallback, so no page from anywhere (the GA-readiness ticket is the location’s own)', async () => {
    const r = await replay(both([[(s) => (s.transport === 'websocket' ? refusedByHop : {}), 24]], [[healthy, 24]]));
    expect(r.published).toEqual([]);
    expect([...new Set(r.direct.map((d) => d.alarm))]).toEqual([`kube-stream-probe-${LOCATION}-ga-readiness`]);
  });
});
