/**
 * The Prometheus alert rules (src/metrics/prometheus-rules.ts) checked by Prometheus' own tools: `promtool check
 * rules`, and `promtool test rules` replaying the CloudWatch alarm-storm test's histories (test/helpers/
 * probe-histories.ts: the real verdicts and data points of every run). Each run's data points go through the real
 * prom-client registry (the names and units a push sends) and are scraped as a Pushgateway serves them: every
 * minute, each group's last push (PUT replaces the group), plus the Pushgateway's push_time_seconds. The
 * expectations are the storm test's counts: one page per outage, continuously firing until it clears, never
 * before; tickets by location; nothing on a healthy day.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import YAML from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { promtool } from '../../lab/prometheus.js';
import { loadProbeConfig } from '../../src/config/load.js';
import type { ProbeConfig } from '../../src/config/probe-config.js';
import { prometheusRegistry } from '../../src/metrics/prometheus.js';
import { holdsGroup, prometheusRules, type PrometheusRule } from '../../src/metrics/prometheus-rules.js';
import { PUSH_JOBS } from '../../src/metrics/pushgateway.js';
import {
  CLUSTER,
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
  type HistorySchedule,
  type NodesPath,
  type Path,
} from '../helpers/probe-histories.js';
import { requireHop } from '../helpers/hops.js';

const MIN = 60;
const ALERTS = [
  'KubeStreamProbeKubectlBroken',
  'KubeStreamProbeGAReadiness',
  'KubeStreamProbeTransfersBroken',
  'KubeStreamProbeNodesFailing',
  'KubeStreamProbeHealth',
  'KubeStreamProbeUpgradeBudgetFastBurn',
  'KubeStreamProbeUpgradeBudgetSlowBurn',
  'KubeStreamProbeFlapping',
] as const;
/** Alerts per location × cluster (the others are per location). */
const PER_CLUSTER: readonly AlertName[] = ['KubeStreamProbeKubectlBroken', 'KubeStreamProbeUpgradeBudgetFastBurn', 'KubeStreamProbeUpgradeBudgetSlowBurn'];
type AlertName = (typeof ALERTS)[number];

/** The series a Prometheus scraping the Pushgateway every minute stores for these runs: `values` per minute. */
async function scrapedSeries(runs: ReturnType<typeof historyRuns>['runs'], end: number): Promise<{ series: string; values: string }[]> {
  type Push = { at: number; samples: Map<string, number> };
  const pushes = new Map<string, Push[]>();
  for (const r of runs) {
    for (const [job, datums] of [
      [PUSH_JOBS.sessions, r.datums],
      [PUSH_JOBS.perNode, r.perNode],
    ] as const) {
      // A per-node run that probed nothing still pushes (an empty PUT clears the group and renews push_time_seconds).
      if (datums === null) continue;
      const grouping = { job, location: LOCATION, cluster: CLUSTER, holds: holdsGroup(r.schedule.holds) };
      const group = JSON.stringify(grouping);
      const samples = new Map<string, number>();
      for (const family of await prometheusRegistry(datums).getMetricsAsJSON()) {
        for (const v of family.values) samples.set(selector(family.name, { ...v.labels, ...grouping }), v.value);
      }
      // The Pushgateway's own freshness series for the group.
      samples.set(selector('push_time_seconds', grouping), r.publishedAt);
      pushes.set(group, [...(pushes.get(group) ?? []), { at: r.publishedAt, samples }]);
    }
  }
  const values = new Map<string, string[]>();
  const minutes = Math.floor(end / MIN);
  for (const list of pushes.values()) {
    const names = new Set(list.flatMap((p) => [...p.samples.keys()]));
    for (const name of names) {
      const out: string[] = [];
      let i = 0;
      for (let m = 0; m < minutes; m++) {
        while (i < list.length && list[i]!.at <= m * MIN) i++;
        const last = list[i - 1];
        const v = last?.samples.get(name);
        out.push(v === undefined ? '_' : String(v));
      }
      values.set(name, out);
    }
  }
  return [...values].map(([series, v]) => ({ series, values: v.join(' ') }));
}

function selector(name: string, labels: Record<string, string | number>): string {
  return `${name}{${Object.entries(labels)
    .map(([k, v]) => `${k}=${JSON.stringify(String(v))}`)
    .join(',')}}`;
}

/** From `from` to `to` (seconds), checked every two minutes: these alerts fire (each by its labels), or none. */
interface Expect {
  readonly from: number;
  readonly to: number;
  readonly firing: Partial<Record<AlertName, 'one'>>;
  /** Alerts not checked in this range (a short window that comes and goes with sparse failures). */
  readonly unchecked?: readonly AlertName[];
}

function alertTests(rules: readonly PrometheusRule[], expects: readonly Expect[]) {
  const byName = new Map(rules.map((r) => [r.alert, r]));
  const out: unknown[] = [];
  for (const e of expects) {
    for (let t = e.from; t < e.to; t += 2 * MIN) {
      for (const alert of ALERTS) {
        if (e.unchecked?.includes(alert)) continue;
        const rule = byName.get(alert)!;
        const labels = PER_CLUSTER.includes(alert) ? { location: LOCATION, cluster: CLUSTER } : { location: LOCATION };
        const render = (text: string) => text.replaceAll('{{ $labels.location }}', LOCATION).replaceAll('{{ $labels.cluster }}', CLUSTER);
        out.push({
          eval_time: `${t / MIN}m`,
          alertname: alert,
          exp_alerts: e.firing[alert]
            ? [
                {
                  exp_labels: { severity: rule.labels.severity, ...labels },
                  exp_annotations: { summary: render(rule.annotations.summary), description: render(rule.annotations.description) },
                },
              ]
            : [],
        });
      }
    }
  }
  return out;
}

let dir: string;
let config: ProbeConfig;
let schedules: HistorySchedule[];
let rulesFile: string;
let rules: readonly PrometheusRule[];
let available = true;
beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'ksp-rules-'));
  config = loadProbeConfig('infra/examples/single-location.yaml');
  schedules = historySchedules(config);
  const file = prometheusRules(schedules.map((s) => ({ intervalSeconds: s.every, holdsSeconds: s.holds })));
  rules = file.groups[0]!.rules;
  rulesFile = join(dir, 'rules.yml');
  writeFileSync(rulesFile, YAML.stringify(file));
  available = (await requireHop(() => promtool(['--version']))) !== undefined;
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Replays a history through promtool; resolves with promtool's output when every expectation held. */
async function replay(
  name: string,
  phases: [Path, number][],
  expects: (o: { start: number }) => Expect[],
  nodes?: NodesPath,
  own?: { readonly schedules: HistorySchedule[]; readonly rulesFile: string; readonly rules: readonly PrometheusRule[] },
): Promise<void> {
  const { runs, end } = historyRuns(own?.schedules ?? schedules, phases, nodes);
  const test = {
    rule_files: [own?.rulesFile ?? rulesFile],
    evaluation_interval: '1m',
    tests: [
      { name, interval: '1m', input_series: await scrapedSeries(runs, end), alert_rule_test: alertTests(own?.rules ?? rules, expects({ start: WARM_UP })) },
    ],
  };
  const file = join(dir, `${name.replace(/\W+/g, '-')}.yml`);
  writeFileSync(file, YAML.stringify(test, { lineWidth: 0 }));
  const r = await promtool(['test', 'rules', file]);
  expect(r.stdout + r.stderr, `promtool test rules ${file}`).toMatch(/SUCCESS/);
  expect(r.code).toBe(0);
}

const none = {};
const page = { KubeStreamProbeKubectlBroken: 'one' } as const;
const burning = { KubeStreamProbeUpgradeBudgetFastBurn: 'one', KubeStreamProbeUpgradeBudgetSlowBurn: 'one' } as const;
/**
 * An hour unreachable, then healthy: the SLO's fast burn pages at the first failed run (its upgrades are more than the
 * hour's 1.44 %); kubectl's own page waits for a second failed run, the slow burn for the 6 h mean to pass 0.6 %.
 */
const unreachableHour = ({ start }: { start: number }): Expect[] => [
  { from: start - HOUR, to: start, firing: none },
  {
    from: start + 4 * MIN,
    to: start + 10 * MIN,
    firing: { KubeStreamProbeUpgradeBudgetFastBurn: 'one' },
    unchecked: ['KubeStreamProbeUpgradeBudgetSlowBurn'],
  },
  { from: start + 12 * MIN, to: start + HOUR, firing: { ...page, ...burning } },
  { from: start + HOUR + 45 * MIN, to: start + 4 * HOUR, firing: none },
];

describe('Prometheus alert rules, checked and replayed by promtool', () => {
  it('promtool check rules accepts the rules; every alert has the page/ticket severity of its CloudWatch twin', async () => {
    if (!available) return;
    const r = await promtool(['check', 'rules', rulesFile]);
    expect(r.stdout).toMatch(/SUCCESS: 8 rules found/);
    expect(r.code).toBe(0);
    expect(Object.fromEntries(rules.map((x) => [x.alert, x.labels.severity]))).toEqual({
      KubeStreamProbeKubectlBroken: 'page',
      KubeStreamProbeGAReadiness: 'ticket',
      KubeStreamProbeTransfersBroken: 'ticket',
      KubeStreamProbeNodesFailing: 'ticket',
      KubeStreamProbeHealth: 'ticket',
      KubeStreamProbeUpgradeBudgetFastBurn: 'page',
      KubeStreamProbeUpgradeBudgetSlowBurn: 'page',
      KubeStreamProbeFlapping: 'ticket',
    });
  });

  it('a healthy day: nothing, at any time', async () => {
    if (!available) return;
    await replay('healthy', [[healthy, 24]], ({ start }) => [{ from: 10 * MIN, to: start + 24 * HOUR, firing: none }]);
  }, 60_000);

  it("one cluster unreachable for an hour: the fast burn pages at the first failed run, kubectl's page at the second, all firing until it clears, then nothing", async () => {
    if (!available) return;
    await replay(
      'unreachable',
      [
        [() => unreachable, 1],
        [healthy, 3],
      ],
      unreachableHour,
    );
  }, 60_000);

  it('a hop that refuses WebSocket for a day: no page, one GA-readiness ticket for the day', async () => {
    if (!available) return;
    await replay(
      'refused-websocket',
      [
        [(s) => (s.transport === 'websocket' ? refusedByHop : {}), 24],
        [healthy, 3],
      ],
      ({ start }) => [
        { from: start - HOUR, to: start, firing: none },
        { from: start + 20 * MIN, to: start + 24 * HOUR, firing: { KubeStreamProbeGAReadiness: 'one' } },
        // The hourly schedule failed too: it clears at its second passing run (1.5 h) and the keep (5 min).
        { from: start + 26 * HOUR, to: start + 27 * HOUR, firing: none },
      ],
    );
  }, 60_000);

  it('a NAT gateway cutting idle flows at 350 s: holds without pings die, nothing fires', async () => {
    if (!available) return;
    await replay('nat', [[(s) => (s.keepalive === 'none' && s.holdSeconds > 350 ? cutIdleAt(350) : {}), 24]], ({ start }) => [
      { from: start, to: start + 24 * HOUR, firing: none },
    ]);
  }, 60_000);

  it('credentials rejected for two hours: a probe-health ticket, never a page', async () => {
    if (!available) return;
    await replay(
      'unauthorized',
      [
        [() => unauthorized, 2],
        [healthy, 3],
      ],
      ({ start }) => [
        { from: start - HOUR, to: start, firing: none },
        { from: start + 20 * MIN, to: start + 2 * HOUR, firing: { KubeStreamProbeHealth: 'one' } },
        { from: start + 4 * HOUR, to: start + 5 * HOUR, firing: none },
      ],
    );
  }, 60_000);

  it('the probe stops running for two hours: a probe-health ticket (its pushes are stale), no page', async () => {
    if (!available) return;
    await replay(
      'stopped',
      [
        [() => 'no-run', 2],
        [healthy, 3],
      ],
      ({ start }) => [
        { from: start - HOUR, to: start + 10 * MIN, firing: none },
        { from: start + 40 * MIN, to: start + 2 * HOUR, firing: { KubeStreamProbeHealth: 'one' } },
        { from: start + 4 * HOUR, to: start + 5 * HOUR, firing: none },
      ],
    );
  }, 60_000);

  it('a path failing every other run for three hours: one page that never clears in between', async () => {
    if (!available) return;
    await replay(
      'every-other-run',
      [
        [(_s, _t, run) => (run % 2 === 0 ? unreachable : {}), 3],
        [healthy, 3],
      ],
      ({ start }) => [
        { from: start - HOUR, to: start, firing: none },
        {
          from: start + 20 * MIN,
          to: start + 3 * HOUR,
          firing: { ...page, KubeStreamProbeUpgradeBudgetSlowBurn: 'one' },
          unchecked: ['KubeStreamProbeUpgradeBudgetFastBurn'],
        },
        { from: start + 5 * HOUR, to: start + 6 * HOUR, firing: none },
      ],
    );
  }, 60_000);

  it("a path failing one run in four: kubectl's own alert never fires (its hysteresis); the SLO's slow burn pages, once, for the three hours", async () => {
    if (!available) return;
    await replay(
      'one-in-four',
      [
        [(_s, _t, run) => (run % 4 === 0 ? unreachable : {}), 3],
        [healthy, 3],
      ],
      ({ start }) => [
        { from: start - HOUR, to: start, firing: none },
        // The fast pair comes and goes with each failed run (its 5 min window); the slow pair holds.
        {
          from: start + 10 * MIN,
          to: start + 3 * HOUR,
          firing: { KubeStreamProbeUpgradeBudgetSlowBurn: 'one' },
          unchecked: ['KubeStreamProbeUpgradeBudgetFastBurn'],
        },
        { from: start + 3 * HOUR + 45 * MIN, to: start + 6 * HOUR, firing: none },
      ],
    );
  }, 60_000);

  it('a slow burn only the 6 h window catches (runs every minute, 1.1 % of upgrades failing): the slow burn pages, hours in; nothing else fires', async () => {
    if (!available) return;
    const often: HistorySchedule[] = [{ every: 60, holds: [0, 65], keepalives: ['kubectl'] }];
    const file = prometheusRules(often.map((x) => ({ intervalSeconds: x.every, holdsSeconds: x.holds })));
    const own = { schedules: often, rulesFile: join(dir, 'rules-often.yml'), rules: file.groups[0]!.rules };
    writeFileSync(own.rulesFile, YAML.stringify(file));
    // The CloudWatch replay's history (alarm-storm.test.ts: two rows of six fail every half hour), every 31 minutes:
    // this promtool's range selectors include both ends, so failures exactly 30 minutes apart put three in some hours.
    await replay(
      'slow-burn',
      [
        [(s, t) => (t % 1860 === 0 && s.operation !== 'exec' && s.holdSeconds === 0 ? unreachable : {}), 8],
        [healthy, 2],
      ],
      ({ start }) => [
        { from: start - HOUR, to: start + 2 * HOUR, firing: none },
        { from: start + 5 * HOUR, to: start + 8 * HOUR, firing: { KubeStreamProbeUpgradeBudgetSlowBurn: 'one' } },
        { from: start + 9 * HOUR, to: start + 10 * HOUR, firing: none },
      ],
      undefined,
      own,
    );
  }, 120_000);

  it('a single reset that the retry absorbed: nothing fires', async () => {
    if (!available) return;
    await replay(
      'one-flap',
      [
        [(s, t) => (t === WARM_UP && s.transport === 'websocket' && s.operation === 'exec' && s.holdSeconds === 0 ? flapped : {}), 1],
        [healthy, 5],
      ],
      ({ start }) => [{ from: start - HOUR, to: start + 6 * HOUR, firing: none }],
    );
  }, 60_000);

  it('a path that flaps in every other run for three hours: one flapping ticket, never a page', async () => {
    if (!available) return;
    await replay(
      'flapping',
      [
        [(s, _t, run) => (run % 2 === 0 && s.transport === 'websocket' && s.holdSeconds === 0 ? flapped : {}), 3],
        [healthy, 3],
      ],
      ({ start }) => [
        { from: start - HOUR, to: start, firing: none },
        { from: start + 30 * MIN, to: start + 3 * HOUR, firing: { KubeStreamProbeFlapping: 'one' } },
        { from: start + 4 * HOUR + 30 * MIN, to: start + 6 * HOUR, firing: none },
      ],
    );
  }, 60_000);

  describe('with per-node probing', () => {
    it('one node of three breaks WebSocket exec for a day: one nodes ticket, no page', async () => {
      if (!available) return;
      const oneBad: NodesPath = (op, transport, t) => (t >= WARM_UP && t < WARM_UP + 24 * HOUR && op === 'exec' && transport === 'websocket' ? 1 : 0);
      await replay(
        'one-bad-node',
        [
          [healthy, 24],
          [healthy, 3],
        ],
        ({ start }) => [
          { from: start - HOUR, to: start, firing: none },
          { from: start + 20 * MIN, to: start + 24 * HOUR, firing: { KubeStreamProbeNodesFailing: 'one' } },
          // The hourly schedule failed too: it clears at its second passing run (1.5 h) and the keep (5 min).
          { from: start + 26 * HOUR, to: start + 27 * HOUR, firing: none },
        ],
        oneBad,
      );
    }, 60_000);

    it('the per-node targets removed for two hours: a probe-health ticket (no nodes probed)', async () => {
      if (!available) return;
      const gone: NodesPath = (_op, _tr, t) => (t >= WARM_UP && t < WARM_UP + 2 * HOUR ? 'no-targets' : 0);
      await replay(
        'no-targets',
        [[healthy, 5]],
        ({ start }) => [
          { from: start - HOUR, to: start, firing: none },
          { from: start + 20 * MIN, to: start + 2 * HOUR, firing: { KubeStreamProbeHealth: 'one' } },
          { from: start + 4 * HOUR, to: start + 5 * HOUR, firing: none },
        ],
        gone,
      );
    }, 60_000);

    it('the cluster unreachable for an hour: one page, and no ticket (per-node probing does not tell the outage twice)', async () => {
      if (!available) return;
      const down: NodesPath = (_op, _tr, t) => (t >= WARM_UP && t < WARM_UP + HOUR ? 'unreachable' : 0);
      await replay(
        'unreachable-per-node',
        [
          [() => unreachable, 1],
          [healthy, 3],
        ],
        unreachableHour,
        down,
      );
    }, 60_000);
  });
});
