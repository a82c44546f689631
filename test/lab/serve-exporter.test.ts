/**
 * `kube-stream-probe serve`, blackbox-style, scraped by a real Prometheus with the job its help prints
 * (probeScrapeConfig): each kubeconfig context is a target; what Prometheus stores is the same verdict as `run` on
 * the same path. The query is checked before anything is dialled (a hold that cannot fit the scrape is refused with
 * the scrape_timeout it needs), a run that outlives the scrape answers 503, scrapes of one target share one run,
 * and the kubeconfig's token appears nowhere.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import YAML from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { emulatorKubeconfig } from '../../lab/emulator/kubeconfig.js';
import { Emulator } from '../../lab/emulator/server.js';
import { instantQuery, promtool, startPrometheus } from '../../lab/prometheus.js';
import type { RealHop } from '../../lab/real-hops/process-hop.js';
import type { CommandIO } from '../../src/cli/io.js';
import { probeScrapeConfig } from '../../src/cli/probe-endpoint.js';
import { serveCommand } from '../../src/cli/serve-command.js';
import { PROMETHEUS_METRICS } from '../../src/metrics/prometheus.js';
import { cli } from '../helpers/cli.js';
import { VERSION } from '../../src/version.js';
import { requireHop } from '../helpers/hops.js';

const TOKEN = 'serve-Token-5c2e9a';
let dir: string;
let kubeconfig: string;
let emulators: Emulator[] = [];
let base: string;
let logs = '';
let stopServe: AbortController;
let served: Promise<number>;

/** One kubeconfig with a context per emulator, as a team's would list its clusters. */
function kubeconfigFor(named: Record<string, Emulator>): string {
  const docs = Object.entries(named).map(([name, e]) => YAML.parse(emulatorKubeconfig(e, { contextName: name })));
  return YAML.stringify({
    apiVersion: 'v1',
    kind: 'Config',
    'current-context': Object.keys(named)[0],
    clusters: docs.flatMap((d) => d.clusters),
    users: docs.flatMap((d) => d.users),
    contexts: docs.flatMap((d) => d.contexts),
  });
}

const get = async (path: string, timeout = 10) => {
  const r = await fetch(`${base}${path}`, { headers: { 'x-prometheus-scrape-timeout-seconds': String(timeout) } });
  return { status: r.status, body: await r.text() };
};

beforeAll(async () => {
  const clean = await Emulator.start({ tls: true, token: TOKEN });
  const refused = await Emulator.start({ tls: true, token: TOKEN, faults: { rejectWebSocket: 400 } });
  const hangs = await Emulator.start({ tls: true, token: TOKEN, faults: { noUpgradeAnswer: true } });
  emulators = [clean, refused, hangs];
  dir = mkdtempSync(join(tmpdir(), 'ksp-serve-'));
  kubeconfig = join(dir, 'kubeconfig');
  writeFileSync(kubeconfig, kubeconfigFor({ 'prod-eu': clean, 'prod-us': refused, stuck: hangs }), { mode: 0o600 });
  stopServe = new AbortController();
  const io: CommandIO = {
    out: (t) => void (logs += t),
    err: (t) => void (logs += t),
    interactive: false,
    env: { PATH: process.env.PATH, HOME: '/nonexistent' },
    signal: stopServe.signal,
  };
  const listening = new Promise<AddressInfo>((resolve) => {
    served = serveCommand(['--listen', '127.0.0.1:0', '--kubeconfig', kubeconfig, '--location', 'ops-pod', '--no-preflight'], io, resolve);
  });
  base = `http://127.0.0.1:${(await listening).port}`;
}, 30_000);

afterAll(async () => {
  stopServe?.abort('SIGTERM');
  expect(await served).toBe(143);
  await Promise.all(emulators.map((e) => e.stop()));
  rmSync(dir, { recursive: true, force: true });
  expect(logs).not.toContain(TOKEN);
});

describe('serve: /probe', () => {
  it('answers a scrape with the run’s metrics, which promtool accepts and which say what `run` says', async () => {
    const r = await get('/probe?target=prod-us&hold=0s');
    expect(r.status).toBe(200);
    const lint = await promtool(['check', 'metrics'], r.body);
    expect(lint.stderr + lint.stdout).toBe('');
    expect(r.body).not.toContain(TOKEN);
    const cliRun = await cli(['run', '--kubeconfig', kubeconfig, '--context', 'prod-us', '--hold', '0s', '--no-preflight', '-o', 'json']);
    const doc = JSON.parse(cliRun.stdout);
    for (const v of doc.verdicts) {
      const today = v.kubectl.find((k: { client: string }) => k.client === '1.31-1.37');
      const line = `${PROMETHEUS_METRICS.SilentFallback.name}{location="ops-pod",cluster="prod-us",operation="${v.operation}"} ${today.outcome === 'works-via-fallback' ? 1 : 0}`;
      expect(r.body).toContain(line);
    }
    expect(r.body).toContain(`${PROMETHEUS_METRICS.SilentFallback.name}{location="ops-pod",cluster="prod-us",operation="exec"} 1`);
    // blackbox_exporter's gauges: the run's exit under --fail-on kubectl (1 here: a finding), and its duration.
    expect(cliRun.code).toBe(1);
    expect(r.body).toMatch(/^probe_success 0$/m);
    expect(Number(/^probe_duration_seconds (\S+)$/m.exec(r.body)![1])).toBeGreaterThan(0);
    const clean = await get('/probe?target=prod-eu&hold=0s');
    expect(clean.body).toMatch(/^probe_success 1$/m);
    expect((await promtool(['check', 'metrics'], clean.body)).stdout).toBe('');
  }, 30_000);

  it("debug=true answers blackbox_exporter's debug page: the run's table, then the metrics a scrape would store", async () => {
    const r = await get('/probe?target=prod-us&hold=0s&debug=true');
    expect(r.status).toBe(200);
    expect(r.body).toMatch(/^Logs for the probe:\n/);
    expect(r.body).toMatch(/^exec +kubectl +0s +ok +fail +websocket-broken/m);
    expect(r.body).toMatch(/\n\nMetrics that would have been returned:\n(.|\n)*^probe_success 0$/m);
    expect(r.body).not.toContain(TOKEN);
    expect((await get('/probe?target=prod-us&debug=yes')).body).toMatch(/^debug "yes" is not true or false/);
  }, 30_000);

  it('refuses what it cannot do before dialling anything, saying why', async () => {
    const before = emulators.map((e) => e.upgrades.length);
    const cases: [string, number, RegExp][] = [
      ['/probe?target=nowhere', 10, /contexts has no entry named "nowhere"/],
      ['/probe?target=prod-eu&hold=65s', 10, /a 65 s hold needs about 70 s and the scrape allows 10 s.*scrape_timeout \(and scrape_interval\) to at least 71s/],
      ['/probe?target=prod-eu&hold=soon', 10, /^hold "soon" is not a duration/],
      ['/probe?target=prod-eu&hold=20m', 1800, /longer than this server allows \(--max-hold 600 s\)/],
      ['/probe?target=prod-eu&module=http_2xx', 10, /^module is not a known parameter/],
      ['/probe?target=prod-eu&ops=exec&ops=portforward', 10, /^ops is given 2 times; give it once \(a list is comma-separated\)/],
      ['/probe?target=prod-eu&transports=http3', 10, /^transports "http3" is not one of websocket, spdy/],
    ];
    for (const [path, timeout, message] of cases) {
      const r = await get(path, timeout);
      expect([path, r.status]).toEqual([path, 400]);
      expect(r.body).toMatch(message);
    }
    expect(emulators.map((e) => e.upgrades.length)).toEqual(before);
    expect((await get('/nothing-here')).status).toBe(404);
    expect((await get('/-/healthy')).status).toBe(200);
  }, 30_000);

  it('a run that outlives the scrape is stopped and answered 503 with the timeout it had', async () => {
    const t0 = Date.now();
    const r = await get('/probe?target=stuck&hold=0s', 7);
    expect(r.status).toBe(503);
    expect(r.body).toMatch(/did not finish inside the scrape's 7 s: raise scrape_timeout/);
    expect(Date.now() - t0).toBeLessThan(7_000 + 3_000);
  }, 30_000);

  it('scrapes of one target and plan that overlap share one run', async () => {
    const e = emulators[0]!;
    const from = e.upgrades.length;
    await get('/probe?target=prod-eu&hold=0s&ops=exec');
    const one = e.upgrades.length - from;
    expect(one).toBeGreaterThan(0);
    const mid = e.upgrades.length;
    const [a, b] = await Promise.all([get('/probe?target=prod-eu&hold=0s&ops=exec'), get('/probe?target=prod-eu&hold=0s&ops=exec')]);
    expect([a.status, b.status]).toEqual([200, 200]);
    expect(a.body).toBe(b.body);
    expect(e.upgrades.length - mid).toBe(one);
  }, 30_000);

  it("/metrics is the exporter's own: its probes by outcome", async () => {
    const r = await get('/metrics');
    expect(r.status).toBe(200);
    expect(r.body).toMatch(/kube_stream_probe_exporter_probes_total\{outcome="refused"\} [1-9]/);
    expect(r.body).toMatch(/kube_stream_probe_exporter_probes_total\{outcome="timeout"\} 1/);
    expect(r.body).toContain('kube_stream_probe_exporter_process_resident_memory_bytes');
    expect(r.body).toMatch(new RegExp(`^kube_stream_probe_info\\{version="${VERSION.replace(/\./g, '\\.')}",todays_kubectl="[^"]+"\\} 1$`, 'm'));
    const last = Number(/^kube_stream_probe_last_run_timestamp_seconds\{target="prod-us"\} (\S+)$/m.exec(r.body)![1]);
    expect(Math.abs(last - Date.now() / 1000)).toBeLessThan(120);
    // promtool parses it; its only lint findings are prom-client's own default gauges named *_total
    // (nodejs_active_handles_total …), which Node dashboards expect under those names.
    const lint = await promtool(['check', 'metrics'], r.body);
    const findings = (lint.stdout + lint.stderr).split('\n').filter(Boolean);
    expect(findings.length).toBeGreaterThan(0);
    for (const f of findings) expect(f).toMatch(/^kube_stream_probe_exporter_nodejs_active_\w+_total non-counter metrics should not have "_total" suffix$/);
  }, 30_000);
});

describe('serve scraped by a real Prometheus with the job its help prints', () => {
  let prometheus: RealHop | undefined;
  afterAll(async () => prometheus?.stop());

  it('stores each context’s A/B under its own instance: the refused WebSocket reads as a silent fallback', async () => {
    const job = probeScrapeConfig({ exporter: new URL(base).host, targets: ['prod-eu', 'prod-us'], hold: '0s', interval: '7s', timeout: '7s' });
    prometheus = await requireHop(() => startPrometheus([], [], job));
    if (!prometheus) return;
    const q = (query: string) => instantQuery(prometheus!.port, query);
    const t0 = Date.now();
    let fallback: Awaited<ReturnType<typeof q>> = [];
    while (Date.now() - t0 < 30_000) {
      fallback = await q(`${PROMETHEUS_METRICS.SilentFallback.name}{job="kube-stream-probe"}`);
      if (fallback.length === 4) break;
      await new Promise((r) => setTimeout(r, 500));
    }
    const by = (instance: string) =>
      fallback
        .filter((s) => s.labels.instance === instance)
        .map((s) => [s.labels.cluster, s.labels.operation, s.value])
        .sort();
    expect(by('prod-eu')).toEqual([
      ['prod-eu', 'exec', 0],
      ['prod-eu', 'portforward', 0],
    ]);
    expect(by('prod-us')).toEqual([
      ['prod-us', 'exec', 1],
      ['prod-us', 'portforward', 1],
    ]);
    const up = await q('up{job="kube-stream-probe"}');
    expect(up.map((s) => s.value)).toEqual([1, 1]);
  }, 60_000);
});
