/**
 * The Grafana dashboard against the two things it must agree with: the CloudWatch dashboard CDK synthesizes (the
 * same cluster rows: titles, order, widths) and a real Prometheus holding a real run's metrics (every panel's query
 * is PromQL Prometheus accepts, every legend's labels exist on its series, and the values are the run's JSON
 * results). Its fields are typed by Grafana's published schema (@grafana/schema), checked by `tsc`.
 */
import { App, Duration, Stack } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import * as logs from 'aws-cdk-lib/aws-logs';
import type { Panel, RowPanel } from '@grafana/schema';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ProbeDashboard } from '../../infra/dashboard.js';
import { startEmulatorWithKubeconfig, type EmulatorWithKubeconfig } from '../../lab/emulator/kubeconfig.js';
import { instantQuery, startPrometheus, startPushgateway } from '../../lab/prometheus.js';
import type { RealHop } from '../../lab/real-hops/process-hop.js';
import { alertsQuery, grafanaDashboard } from '../../src/metrics/grafana-dashboard.js';
import { PROMETHEUS_METRICS } from '../../src/metrics/prometheus.js';
import { cli } from '../helpers/cli.js';
import { requireHop } from '../helpers/hops.js';

type Target = { expr: string; legendFormat?: string; instant?: boolean };
const isRow = (p: Panel | RowPanel): p is RowPanel => p.type === 'row';

/** The CloudWatch dashboard's widgets, as CDK renders them (tokens replaced), for one cluster with every row. */
function cloudWatchWidgets(): { type: string; width: number; properties: { title?: string } }[] {
  const stack = new Stack(new App(), 'Dash', { env: { account: '123456789012', region: 'eu-west-1' } });
  new ProbeDashboard(stack, 'D', {
    dashboardName: 'd',
    locationName: 'eu',
    clusterNames: ['prod'],
    holds: [{ operation: 'exec', keepalive: 'kubectl', holdSeconds: 65 }],
    period: Duration.minutes(5),
    logGroup: new logs.LogGroup(stack, 'L'),
    alarms: [],
    transfers: true,
    perNodeClusters: ['prod'],
    sloObjective: 0.999,
  });
  const body = Object.values(Template.fromStack(stack).findResources('AWS::CloudWatch::Dashboard'))[0]!.Properties.DashboardBody;
  const text = body['Fn::Join'][1].map((x: unknown) => (typeof x === 'string' ? x : 'TOKEN')).join('');
  return JSON.parse(text).widgets;
}

describe('the Grafana dashboard', () => {
  it('has the CloudWatch dashboard’s cluster rows: the same titles, in the same order, of the same widths', () => {
    const cw = cloudWatchWidgets()
      .filter((w) => w.properties.title?.startsWith('prod: '))
      .map((w) => [w.properties.title, w.width]);
    const panels = grafanaDashboard({ perNode: true, transfers: true }).panels!;
    const grafana = panels
      .filter((p): p is Panel => !isRow(p) && (p.title ?? '').startsWith('$cluster: '))
      .map((p) => [p.title!.replace('$cluster', 'prod'), p.gridPos!.w]);
    expect(cw.length).toBe(12);
    expect(grafana).toEqual(cw);
    // Without transfers or per-node probing, those rows are absent from both.
    const plain = grafanaDashboard().panels!.map((p) => p.title ?? '');
    expect(plain.some((t) => /transfers complete|nodes failing/.test(t))).toBe(false);
    // One row per cluster: Grafana repeats it for each value of $cluster.
    const rows = panels.filter(isRow);
    expect(rows.map((r) => r.repeat)).toEqual(['cluster']);
    expect(new Set(panels.map((p) => p.id)).size).toBe(panels.length);
  });
});

describe('its queries against a real Prometheus holding a real run', () => {
  let gateway: RealHop | undefined;
  let prometheus: RealHop | undefined;
  let lab: EmulatorWithKubeconfig;
  let doc: {
    results: {
      operation: string;
      transport: string;
      keepalive: string;
      holdSeconds: number;
      upgrade: { ok: boolean; handshakeMs: number | null; ownCpu?: { distorted: boolean } };
      transfer?: { mibPerSecond: number };
      hold?: { survived: boolean };
    }[];
  };

  beforeAll(async () => {
    gateway = await requireHop(startPushgateway);
    if (gateway) prometheus = await requireHop(() => startPrometheus([`127.0.0.1:${gateway!.port}`]));
    // Sessions without pings are cut after 1 s idle: holds lost, disconnect times and idle timeouts to draw.
    lab = await startEmulatorWithKubeconfig({ faults: { idleCutSeconds: 1 } });
    if (!gateway) return;
    const r = await cli([
      'run',
      ...['--kubeconfig', lab.kubeconfig, '--no-preflight', '-o', 'json'],
      ...['--hold', '0s,2s', '--keepalive', 'kubectl,none', '--transfer', '256KiB'],
      ...['--location', 'grafana-loc', '--cluster-name', 'prod', '--publish', 'prometheus', '--pushgateway', `http://127.0.0.1:${gateway.port}`],
    ]);
    expect(r.stderr).toMatch(/pushed \d+ samples/);
    doc = JSON.parse(r.stdout);
  }, 90_000);
  afterAll(async () => {
    await Promise.all([prometheus?.stop(), gateway?.stop(), lab?.stop()]);
  });

  it('every panel’s PromQL runs, its legend’s labels exist, and the values are the run’s', async () => {
    if (!prometheus) return;
    const q = (expr: string) => instantQuery(prometheus!.port, expr.replaceAll('$location', 'grafana-loc').replaceAll('$cluster', 'prod'));
    // Wait for the scrape of the push.
    for (let t0 = Date.now(); (await q(`${PROMETHEUS_METRICS.KubectlWorks.name}{location="$location"}`)).length < 2; ) {
      if (Date.now() - t0 > 20_000) throw new Error('the push was not scraped');
      await new Promise((r) => setTimeout(r, 250));
    }
    const dashboard = grafanaDashboard({ transfers: true, perNode: true });
    const seen = new Map<string, number>();
    // Per-node series need a per-node run; alerts need a failing history: the rest all have data. On a loaded machine
    // the first scrape may hold only part of the push: asked again (up to 20 s) until every panel has its series.
    let empty: string[] = [];
    for (let t0 = Date.now(); ; ) {
      for (const panel of dashboard.panels!.filter((p): p is Panel => !isRow(p))) {
        for (const target of (panel.targets ?? []) as Target[]) {
          const series = await q(target.expr); // throws on PromQL Prometheus rejects
          seen.set(`${panel.title} ${target.expr}`, series.length);
          for (const label of [...(target.legendFormat ?? '').matchAll(/\{\{(\w+)\}\}/g)].map((m) => m[1]!))
            for (const s of series) expect([target.expr, label, s.labels[label] !== undefined]).toEqual([target.expr, label, true]);
        }
      }
      // A handshake the probe's own CPU distorted is not published (src/metrics/datums.ts): on a loaded machine every
      // one may be, and then the latency panels are rightly empty - the run's values are none.
      const published = doc.results.some((r) => r.upgrade.handshakeMs !== null && !r.upgrade.ownCpu?.distorted);
      empty = [...seen].filter(([k, n]) => n === 0 && !/nodes_(probed|failing)|ALERTS/.test(k) && (published || !/handshake_latency/.test(k))).map(([k]) => k);
      if (!empty.length || Date.now() - t0 > 20_000) break;
      await new Promise((r) => setTimeout(r, 1000));
    }
    expect(empty).toEqual([]);

    const now = await q(`min by (operation, transport) (${PROMETHEUS_METRICS.UpgradeSuccess.name}{location="$location",cluster="$cluster"})`);
    expect(now).toHaveLength(4);
    for (const s of now) {
      const ok = doc.results.filter((r) => r.operation === s.labels.operation && r.transport === s.labels.transport).every((r) => r.upgrade.ok);
      expect(s.value).toBe(ok ? 1 : 0);
    }
    // Throughput: bytes per second in Prometheus, MiB/s in the JSON; the panel's unit (binBps) shows MiB/s.
    const throughput = dashboard
      .panels!.filter((p): p is Panel => !isRow(p))
      .flatMap((p) => (p.targets ?? []) as Target[])
      .find((t) => t.expr.includes(PROMETHEUS_METRICS.TransferThroughput.name))!;
    for (const s of await q(throughput.expr)) {
      const r = doc.results.find((x) => x.operation === s.labels.operation && x.transport === s.labels.transport && x.transfer)!;
      expect(s.value).toBeCloseTo(r.transfer!.mibPerSecond * 2 ** 20, 3);
    }
    // Holds without pings were cut: the holds panel shows them lost.
    const survived = await q(
      `min by (operation, transport, keepalive, hold_seconds) (${PROMETHEUS_METRICS.HoldSurvived.name}{location="$location",cluster="$cluster"})`,
    );
    expect(survived.filter((s) => s.labels.keepalive === 'none').map((s) => s.value)).toEqual([0, 0, 0, 0]);
    // Every kubectl upgrade of the run got its stream: the SLO row shows the whole budget left, and no burn.
    const slo = dashboard.panels!.filter((p): p is Panel => !isRow(p) && /upgrade SLO|burn rate/.test(p.title ?? ''));
    expect(slo).toHaveLength(2);
    const [budgetLeft] = await q((slo[0]!.targets as Target[])[0]!.expr);
    expect(budgetLeft!.value).toBe(100);
    for (const t of slo[1]!.targets as Target[]) expect((await q(t.expr)).map((s) => s.value)).toEqual([0]);
    // The alerts panel's query is PromQL Prometheus accepts; the variables' label_values resolve.
    await q(alertsQuery('grafana-loc'));
    const locations = (await (
      await fetch(`http://127.0.0.1:${prometheus.port}/api/v1/label/location/values?match[]=${PROMETHEUS_METRICS.KubectlWorks.name}`)
    ).json()) as { data: string[] };
    expect(locations.data).toContain('grafana-loc');
  }, 60_000);
});
