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
import { AlarmSimulator } from '../helpers/cloudwatch-alarms.js';
import { parseJsurl } from '../../src/aws/logs-insights-url.js';
import { evidenceLogLines, recentEvidenceQuery } from '../../src/lambda/evidence-log.js';
import { probeReport, session } from '../helpers/sessions.js';
import { deployedTemplate } from '../helpers/deployed-template.js';
import { LocalSns } from '../helpers/local-sns.js';
import { roleByArn, rolePolicies } from '../helpers/iam-authority.js';
import {
  HOUR,
  LOCATION,
  WARM_UP,
  cutIdleAt,
  flapped,
  healthy,
  historyRuns,
  historySchedules,
  refusedByHop,
  unauthorized,
  unreachable,
  type NodesPath,
  type Path,
} from '../helpers/probe-histories.js';

interface Counts {
  pages: number;
  pageOks: number;
  tickets: number;
  ticketAlarms: string[];
}

/** Replays `hours` of `path` after the healthy warm-up, then `recoverHours` healthy, through the template's alarms. */
function replay(config: ProbeConfig, template: unknown, phases: [Path, number][], nodes?: NodesPath): Counts & { sim: AlarmSimulator; idleTimeouts: number[] } {
  const sim = new AlarmSimulator(template);
  replayed.push({ template, sim });
  const idleTimeouts: number[] = [];
  const { runs, end } = historyRuns(historySchedules(config), phases, nodes);
  let next = 0;
  for (let t = 0; t < end; t += 60) {
    for (; next < runs.length && runs[next]!.t === t; next++) {
      const r = runs[next]!;
      for (const d of [...r.datums, ...(r.perNode ?? [])]) {
        sim.put(METRIC_NAMESPACE, d.name, d.dimensions as Record<string, string>, d.value, r.publishedAt);
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
    const topicArn = deployed.get(n.topic).arn!;
    if (n.via) {
      // The notifier publishes as its function's role (infra/notifier.ts).
      const roleId = roleByArn(deployed, String(deployed.resolve(deployed.get(n.via).props.Role)));
      await sns
        .publishAsRole({ arn: deployed.get(roleId).arn!, policies: rolePolicies(deployed, roleId) }, topicArn, `${n.alarm} ${n.state}`)
        .catch((e: Error) => e);
    } else
      await sns.publishAs('cloudwatch.amazonaws.com', topicArn, `${n.alarm} ${n.state}`, { arn: alarmArn(n.alarm), account: ACCOUNT }).catch((e: Error) => e);
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

  it("one cluster unreachable for an hour: one page and its OK, not 40 e-mails; the page at the first failed run's data (the SLO's fast burn)", () => {
    const r = replay(config, template, [
      [() => unreachable, 1],
      [healthy, 3],
    ]);
    expect(r).toMatchObject({ pages: 1, pageOks: 1, tickets: 0 });
    const page = r.sim.notifications.find((n) => n.at >= WARM_UP && n.state === 'ALARM')!;
    expect(page.alarm).toBe('kube-stream-probe-eu-west-1-public-prod-eu-PAGE');
    // The first run of the outage publishes after its 65 s hold; the next minute's evaluation finds its four kubectl
    // upgrades failed: 8 % of the hour's ~50, 80x the 99.9 % budget's rate, over the 1 h and the 5 min window.
    expect(page.at - WARM_UP).toBe(120);
    const slo = r.sim.notifications.filter((n) => n.at >= WARM_UP && /-slo-/.test(n.alarm));
    expect(slo).toEqual([]);
  });

  it("the page reaches the page topic's subscribers, published by the notifier's role; a notifier that may not use the topics' key pages through its own alarm, which CloudWatch delivers only with the topic policy's CloudWatch statement", async () => {
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
        publisher: expect.stringMatching(/^arn:aws:iam::111111111111:role\/.*NotifierRole/),
      }),
    ]);
    // The notifier's role without its key statement: KMS refuses it, nobody is paged by the notifier ...
    const withoutKey = structuredClone(template) as { Resources: Record<string, any> };
    for (const res of Object.values(withoutKey.Resources))
      if (res.Type === 'AWS::IAM::Policy' && JSON.stringify(res.Properties.Roles).includes('NotifierRole'))
        res.Properties.PolicyDocument.Statement = res.Properties.PolicyDocument.Statement.filter((st: any) => !JSON.stringify(st.Action).includes('kms:'));
    const refused = await deliver(withoutKey, page);
    expect(refused.deliveries).toEqual([]);
    expect(refused.refusals).toEqual([
      expect.stringMatching(/kms:GenerateDataKey on .* by arn:aws:iam::111111111111:role\/.*NotifierRole.*: ImplicitlyDenied/),
    ]);
    // ... so its invocation fails and its Errors alarm pages directly, as CloudWatch's alarm action.
    const failed = [{ at: WARM_UP, topic: page[0]!.topic, alarm: 'kube-stream-probe-eu-west-1-public-notifier-failed', state: 'ALARM' as const }];
    const direct = await deliver(withoutKey, failed);
    expect(direct.deliveries).toEqual([
      expect.objectContaining({ publisher: 'cloudwatch.amazonaws.com', message: 'kube-stream-probe-eu-west-1-public-notifier-failed ALARM' }),
    ]);
    // Which needs the topic policy's CloudWatch statement: without it (the policy CDK writes for enforceSSL alone), nobody is paged.
    const withoutStatement = structuredClone(withoutKey);
    for (const res of Object.values(withoutStatement.Resources)) {
      if (res.Type === 'AWS::SNS::TopicPolicy')
        res.Properties.PolicyDocument.Statement = res.Properties.PolicyDocument.Statement.filter(
          (st: any) => st.Principal?.Service !== 'cloudwatch.amazonaws.com',
        );
    }
    const none = await deliver(withoutStatement, failed);
    expect(none.deliveries).toEqual([]);
    expect(none.refusals).toEqual([expect.stringMatching(/sns:Publish on .*PageTopic.* by cloudwatch\.amazonaws\.com: ImplicitlyDenied/)]);
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

  it("a path failing one run in four: the KubectlWorks alarms flap (CloudWatch has no hysteresis), the SLO's slow burn holds the page: one page, one OK", () => {
    const sparse: Path = (_s, _t, run) => (run % 4 === 0 ? unreachable : {});
    const r = replay(config, template, [
      [sparse, 3],
      [healthy, 3],
    ]);
    expect(r).toMatchObject({ pages: 1, pageOks: 1, tickets: 0 });
    // Without the SLO's rules the page would follow the KubectlWorks alarms alone, whose 2-of-3 is met and lost again
    // every 20 minutes: the slow window (6 h at 6x, still burning over 30 min) is what keeps one page.
    const entered = (re: RegExp) => r.sim.transitions.filter((n) => n.at >= WARM_UP && n.state === 'ALARM' && re.test(n.alarm)).length;
    expect(entered(/exec-kubectl-broken$/)).toBeGreaterThanOrEqual(8);
    expect(entered(/slo-slow-6h$/)).toBe(1);
    expect(entered(/-PAGE$/)).toBe(1);
  });
});

describe("the page's evidence link", () => {
  it("opens Logs Insights on the function's own log group, over the last 6 h, with a query whose fields the evidence lines have", () => {
    const deployed = deployedTemplate(template, { account: ACCOUNT, region: 'eu-west-1', stackName: 'S' });
    const page = deployed.ofType('AWS::CloudWatch::CompositeAlarm').find((a) => a.name.endsWith('-prod-eu-PAGE'))!;
    const description = String(deployed.resolve((template as any).Resources[page.logicalId].Properties.AlarmDescription));
    expect(description.length).toBeLessThanOrEqual(1024);
    const url = /https:\/\/\S+/.exec(description)![0];
    expect(url.startsWith('https://eu-west-1.console.aws.amazon.com/cloudwatch/home?region=eu-west-1#logs-insights:queryDetail=')).toBe(true);
    const detail = parseJsurl(url.split('queryDetail=')[1]!) as { source: string[]; editorString: string; start: number; timeType: string };
    const fn = deployed.ofType('AWS::Lambda::Function').find((f) => f.name === 'kube-stream-probe-eu-west-1-public')!;
    const fnLogGroup = deployed.resolve((template as any).Resources[fn.logicalId].Properties.LoggingConfig.LogGroup);
    expect(detail).toMatchObject({ source: [fnLogGroup], editorString: recentEvidenceQuery('prod-eu'), start: -6 * HOUR, timeType: 'RELATIVE' });
    // The fields it shows are the evidence lines' own (an empty column would hide the diagnosis).
    const line = evidenceLogLines(probeReport([session('websocket', { ...refusedByHop })], LOCATION, 'prod-eu'), {
      id: 'r',
      location: LOCATION,
      schedule: 's',
    })[0]!;
    const fields = /^fields (.*)$/m
      .exec(detail.editorString)![1]!
      .split(', ')
      .filter((f) => !f.startsWith('@'));
    for (const f of fields) expect(line).toHaveProperty(f);
    expect(line.diagnosis).toMatch(/^hop-refused-upgrade: /);
  });
});

describe('retries, flapping and the SLO in CloudWatch (the same example)', () => {
  const FLAPPING = 'kube-stream-probe-eu-west-1-public-flapping';

  it('a single reset that the retry absorbed: no page, no ticket; Flapping 1 for that run only', () => {
    const once: Path = (s, t) => (t === WARM_UP && s.transport === 'websocket' && s.operation === 'exec' && s.holdSeconds === 0 ? flapped : {});
    const r = replay(config, template, [
      [once, 1],
      [healthy, 5],
    ]);
    expect(r).toMatchObject({ pages: 0, pageOks: 0, tickets: 0 });
  });

  it('a path that flaps in every other run for three hours: one flapping ticket, never a page', () => {
    const flapping: Path = (s, _t, run) => (run % 2 === 0 && s.transport === 'websocket' && s.holdSeconds === 0 ? flapped : {});
    const r = replay(config, template, [
      [flapping, 3],
      [healthy, 3],
    ]);
    expect(r).toMatchObject({ pages: 0, pageOks: 0, tickets: 1 });
    expect(r.ticketAlarms).toEqual([FLAPPING]);
  });

  it('a slow burn only the 6 h window catches: runs every minute, two kubectl upgrades in 180 fail (1.1 %): no fast burn, no kubectl page; the slow burn pages once, hours in, and clears', () => {
    // Runs every minute with 0 s and 65 s holds: 6 kubectl upgrades a run (exec, port-forward, attach), 360 an hour.
    // Two failed rows every half hour are 1.1 % of them: 11x the 99.9 % budget's rate, under the fast window's 14.4x
    // over its hour, over the slow window's 6x (its 6 h mean, healthy hours included, passes 0.6 % after 3.3 h); the
    // 30 min window always holds the last two. KubectlWorks fails in one period in fifteen: never 2 of 3.
    const everyMinute: ProbeConfig = {
      ...config,
      schedules: [{ ...config.schedules[0]!, name: 'often', expression: 'rate(1 minute)', keepalives: ['kubectl'] }],
    };
    const slow: Path = (s, t) => (t % 1800 === 0 && s.operation !== 'exec' && s.holdSeconds === 0 ? unreachable : {});
    const r = replay(everyMinute, synth(everyMinute), [
      [slow, 8],
      [healthy, 2],
    ]);
    expect(r).toMatchObject({ pages: 1, pageOks: 1, tickets: 0 });
    const entered = (re: RegExp) => r.sim.transitions.filter((n) => n.at >= WARM_UP && n.state === 'ALARM' && re.test(n.alarm));
    expect(entered(/slo-fast-1h$/)).toEqual([]);
    expect(entered(/kubectl-broken$/)).toEqual([]);
    const page = r.sim.notifications.find((n) => n.at >= WARM_UP && n.state === 'ALARM')!;
    expect(entered(/slo-slow-6h$/).map((n) => n.at)).toEqual([page.at]);
    expect((page.at - WARM_UP) / HOUR).toBeGreaterThan(3);
    expect((page.at - WARM_UP) / HOUR).toBeLessThan(4);
    // It clears within the 30 min window after the burn stops.
    const ok = r.sim.notifications.find((n) => n.at > page.at && n.state === 'OK')!;
    expect(ok.at - (WARM_UP + 8 * HOUR)).toBeLessThanOrEqual(31 * 60);
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
