/**
 * `run --publish prometheus --pushgateway URL` end to end with real software: the CLI probes the emulator, pushes
 * to a real Pushgateway (Debian's prometheus-pushgateway), promtool (Prometheus' own parser and linter) checks what
 * the Pushgateway exposes, and a real Prometheus server scrapes it: the values it stores are the run's JSON
 * results, in the contract's names and base units. A refused WebSocket gives the same verdict in both.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmulatorWithKubeconfig, type EmulatorWithKubeconfig } from '../../lab/emulator/kubeconfig.js';
import { instantQuery, promtool, startPrometheus, startPushgateway } from '../../lab/prometheus.js';
import type { RealHop } from '../../lab/real-hops/process-hop.js';
import { METRIC_KEEPALIVES } from '../../src/metrics/contract.js';
import { PROMETHEUS_METRICS } from '../../src/metrics/prometheus.js';
import type { KeepaliveMode } from '../../src/vocabulary.js';
import { cli } from '../helpers/cli.js';
import { requireHop } from '../helpers/hops.js';

const SECRET = 'pg-Secret-7d1f';
const run = (lab: EmulatorWithKubeconfig, pushgateway: string, location: string) =>
  cli([
    'run',
    '--kubeconfig',
    lab.kubeconfig,
    '--hold',
    '0s',
    '--no-preflight',
    '-o',
    'json',
    '--location',
    location,
    '--publish',
    'prometheus',
    '--pushgateway',
    pushgateway,
  ]);

async function until<T>(what: string, f: () => Promise<T | undefined>, ms = 20_000): Promise<T> {
  const t0 = Date.now();
  for (;;) {
    const v = await f();
    if (v !== undefined) return v;
    if (Date.now() - t0 > ms) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

describe('--publish prometheus through a real Pushgateway and Prometheus', () => {
  let gateway: RealHop | undefined;
  let prometheus: RealHop | undefined;
  let clean: EmulatorWithKubeconfig;
  let refused: EmulatorWithKubeconfig;

  beforeAll(async () => {
    gateway = await requireHop(startPushgateway);
    if (gateway) prometheus = await requireHop(() => startPrometheus([`127.0.0.1:${gateway!.port}`]));
    clean = await startEmulatorWithKubeconfig({});
    refused = await startEmulatorWithKubeconfig({ faults: { rejectWebSocket: 400 } });
  }, 60_000);
  afterAll(async () => {
    await Promise.all([prometheus?.stop(), gateway?.stop(), clean?.stop(), refused?.stop()]);
  });

  it('pushes the run; promtool accepts the exposition; Prometheus stores the JSON results in base units', async () => {
    if (!gateway || !prometheus) return;
    // Basic auth in the URL: sent as a header, never printed.
    const r = await run(clean, `http://probe:${SECRET}@127.0.0.1:${gateway.port}`, 'ops-pod');
    expect(r.code).toBe(0);
    expect(r.stderr).toMatch(/pushed \d+ samples \(\d+ metrics\) to the Pushgateway, job kube_stream_probe\n/);
    expect(r.stdout + r.stderr).not.toContain(SECRET);
    const doc = JSON.parse(r.stdout);

    const exposition = await (await fetch(`http://127.0.0.1:${gateway.port}/metrics`)).text();
    const lint = await promtool(['check', 'metrics'], exposition);
    expect(lint.stderr + lint.stdout).toBe('');
    expect(lint.code).toBe(0);
    expect(exposition).toContain(`# TYPE ${PROMETHEUS_METRICS.UpgradeSuccess.name} gauge`);

    const q = (query: string) => instantQuery(prometheus!.port, `${query}{location="ops-pod"}`);
    const upgrades = await until('the scrape', async () => {
      const v = await q(PROMETHEUS_METRICS.UpgradeSuccess.name);
      return v.length === 4 ? v : undefined;
    });
    for (const s of upgrades) {
      expect(s.labels).toMatchObject({ job: 'kube_stream_probe', location: 'ops-pod', cluster: doc.cluster });
      expect(s.value).toBe(1);
    }
    const latencies = await q(PROMETHEUS_METRICS.HandshakeLatency.name);
    // A handshake our own CPU distorted (a busy CI machine) is not published, as in CloudWatch (datums.ts):
    // exactly the others are, each with the JSON's figure.
    // An SDK client's sessions (run's default keepalive list has sdk) publish nothing (METRIC_KEEPALIVES).
    type Res = { operation: string; transport: string; keepalive: string; upgrade: { handshakeMs: number; ownCpu?: { distorted: boolean } } };
    expect((doc.results as Res[]).some((res) => res.keepalive === 'sdk')).toBe(true);
    const timed = (doc.results as Res[]).filter((res) => METRIC_KEEPALIVES.includes(res.keepalive as KeepaliveMode) && !res.upgrade.ownCpu?.distorted);
    expect(latencies).toHaveLength(timed.length);
    for (const res of timed) {
      const s = latencies.find((l) => l.labels.operation === res.operation && l.labels.transport === res.transport)!;
      // Prometheus stores seconds; the JSON says milliseconds.
      expect(s.value).toBeCloseTo(res.upgrade.handshakeMs / 1000, 9);
    }
    const works = await q(PROMETHEUS_METRICS.KubectlWorks.name);
    expect(works.map((s) => s.value)).toEqual([1, 1]);
    // The Pushgateway's own freshness series, which the "probe stopped" rule reads.
    expect(await q('push_time_seconds')).toHaveLength(1);
  }, 60_000);

  it('a refused WebSocket: the same verdict as the CLI, and the push replaces the group', async () => {
    if (!gateway || !prometheus) return;
    const first = await run(clean, `http://127.0.0.1:${gateway.port}`, 'same-path');
    expect(first.code).toBe(0);
    const r = await run(refused, `http://127.0.0.1:${gateway.port}/`, 'same-path');
    const doc = JSON.parse(r.stdout);
    expect(r.code).toBe(1);
    const q = (name: string, more = '') => instantQuery(prometheus!.port, `${name}{location="same-path"${more}}`);
    const ws = await until('the refused run', async () => {
      const v = await q(PROMETHEUS_METRICS.UpgradeSuccess.name, ',transport="websocket"');
      return v.length === 2 && v.every((s) => s.value === 0) ? v : undefined;
    });
    expect(ws).toHaveLength(2);
    const fallback = await q(PROMETHEUS_METRICS.SilentFallback.name);
    for (const v of doc.verdicts) {
      const today = v.kubectl.find((k: { client: string }) => k.client === '1.31-1.37');
      const s = fallback.find((f) => f.labels.operation === v.operation)!;
      expect(s.value).toBe(today.outcome === 'works-via-fallback' ? 1 : 0);
    }
    expect(fallback.map((s) => s.value)).toEqual([1, 1]);
    // The refused WebSocket has no handshake latency: PUT replaced the clean run's two WebSocket samples.
    const latencies = await q(PROMETHEUS_METRICS.HandshakeLatency.name);
    const timedSpdy = doc.results.filter(
      (res: { transport: string; upgrade: { ownCpu?: { distorted: boolean } } }) => res.transport === 'spdy' && !res.upgrade.ownCpu?.distorted,
    );
    expect(latencies.map((s) => s.labels.transport)).toEqual(timedSpdy.map(() => 'spdy'));
  }, 60_000);

  it('a Pushgateway that is not there, or redirects: exit 4 on a clean run, a plain cause, no secret, no redirect followed', async () => {
    if (!gateway) return;
    const lab = clean;
    const closed = http.createServer();
    await new Promise<void>((r) => closed.listen(0, '127.0.0.1', r));
    const closedPort = (closed.address() as AddressInfo).port;
    await new Promise((r) => closed.close(r));
    const down = await run(lab, `http://probe:${SECRET}@127.0.0.1:${closedPort}`, 'nowhere');
    expect(down.code).toBe(4);
    expect(down.stderr).toMatch(
      new RegExp(`the metrics were not delivered: the Pushgateway at http://127\\.0\\.0\\.1:${closedPort} could not be reached \\(ECONNREFUSED\\)`),
    );
    expect(JSON.parse(down.stdout).verdicts).toHaveLength(2);
    expect(down.stdout + down.stderr).not.toContain(SECRET);

    let followed = 0;
    const target = http.createServer((_q, s) => (followed++, s.end()));
    const redirector = http.createServer((_q, s) => s.writeHead(307, { location: `http://127.0.0.1:${(target.address() as AddressInfo).port}/` }).end());
    await Promise.all([new Promise<void>((r) => target.listen(0, '127.0.0.1', r)), new Promise<void>((r) => redirector.listen(0, '127.0.0.1', r))]);
    try {
      const moved = await run(lab, `http://probe:${SECRET}@127.0.0.1:${(redirector.address() as AddressInfo).port}`, 'moved');
      expect(moved.code).toBe(4);
      expect(moved.stderr).toMatch(/redirected \(307\); redirects are not followed/);
      expect(moved.stdout + moved.stderr).not.toContain(SECRET);
      expect(followed).toBe(0);
    } finally {
      await Promise.all([new Promise((r) => target.close(r)), new Promise((r) => redirector.close(r))]);
    }
  }, 60_000);

  it('usage: prometheus needs a Pushgateway URL, and the URL must be http(s)', async () => {
    const none = await cli(['run', '--kubeconfig', clean.kubeconfig, '--publish', 'prometheus']);
    expect(none.code).toBe(2);
    expect(none.stderr).toMatch(/--publish prometheus needs --pushgateway URL/);
    const bad = await cli(['run', '--kubeconfig', clean.kubeconfig, '--publish', 'prometheus', '--pushgateway', 'ftp://x']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/must be an http:\/\/ or https:\/\/ URL, not ftp:/);
    const stray = await cli(['run', '--kubeconfig', clean.kubeconfig, '--pushgateway', 'http://x:9091']);
    expect(stray.code).toBe(2);
    expect(stray.stderr).toMatch(/only used with --publish prometheus/);
  });
});
