/**
 * The kubectl model against kubectl itself: for each real hop, the probe's
 * prediction for kubectl 1.29, 1.30, 1.33, 1.34, 1.35 and 1.36 must equal what
 * that kubectl did through the same hop: works, works only through its
 * fallback to SPDY, or breaks. Exec and port-forward, each held idle as a user
 * holds them. And the diagnosis names the product the wire names (Server, Via,
 * its page) and gives that product's fix: real nginx, Apache, Varnish, HAProxy,
 * nghttpx, squid, tinyproxy and Privoxy, each with the misconfiguration that
 * breaks it in the field.
 *
 * What kubectl did is read from the outside: the command worked (both echoes
 * came back) or not, and which transport reached the API server (the
 * emulator's record, by kubectl's User-Agent). Worked over SPDY where the
 * version's default is WebSocket = it fell back.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { emulatorKubeconfig } from '../../lab/emulator/kubeconfig.js';
import { Emulator } from '../../lab/emulator/server.js';
import { kubectlExecHolding, kubectlPortForwardHolding } from '../../lab/kubectl.js';
import type { RealHop } from '../../lab/real-hops/process-hop.js';
import type { KubectlClient, KubectlOutcome } from '../../src/probe/kubectl-model.js';
import { reportDatums } from '../../src/metrics/datums.js';
import type { ProbeReport } from '../../src/probe/types.js';
import type { Operation, Transport } from '../../src/vocabulary.js';
import { HOP_PATHS, probeThrough, type HopPath } from '../helpers/hop-paths.js';
import { requireHop } from '../helpers/hops.js';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';

const VERSIONS = ['1.29', '1.30', '1.33', '1.34', '1.35', '1.36'] as const;
const CLIENT_OF: Readonly<Record<(typeof VERSIONS)[number], KubectlClient>> = {
  '1.29': '1.29',
  '1.30': '1.30',
  '1.33': '1.31-1.37',
  '1.34': '1.31-1.37',
  '1.35': '1.31-1.37',
  '1.36': '1.31-1.37',
};

/** The transport each version uses first when nothing is set (KEP-4006 defaults). */
function defaultTransport(version: string, op: Operation): Transport {
  const minor = Number(version.split('.')[1]);
  return (op === 'exec' ? minor >= 30 : minor >= 31) ? 'websocket' : 'spdy';
}

interface Path extends HopPath {
  readonly holdSeconds: number;
  /** The diagnosis each operation must carry: its code, the product it names, and that product's fix. */
  readonly expect?: { readonly code: string; readonly names: RegExp; readonly fix: RegExp };
}
const H = HOP_PATHS;
const PATHS: readonly Path[] = [
  {
    ...H.nginxRefuseWebSocket,
    holdSeconds: 0,
    // A plain GET reaches the API server: the rule is on the Upgrade header, not the method.
    expect: {
      code: 'hop-refused-upgrade',
      names: /nginx \(Server: nginx.*the rule matches the WebSocket Upgrade, not the method/,
      fix: /nginx.*deny.*limit_except/,
    },
  },
  { ...H.nginxRefuseSpdy, holdSeconds: 0 },
  { ...H.squidDenyConnect, holdSeconds: 0, expect: { code: 'proxy-refused-tunnel', names: /Squid \(Server: squid\//, fix: /SSL_ports/ } },
  { ...H.nginxIdle, holdSeconds: 9 },
  { ...H.haproxyTcp, holdSeconds: 9 },
  {
    ...H.nginxVerbAcl,
    holdSeconds: 0,
    expect: { code: 'verb-acl', names: /POST passed.*nginx \(Server: nginx.*rule is on the method/, fix: /limit_except/ },
  },
  {
    ...H.haproxyVerbAcl,
    holdSeconds: 0,
    expect: {
      code: 'verb-acl',
      names: /HAProxy \(its page says "Request forbidden by administrative rules"\).*rule is on the method/,
      fix: /http-request deny/,
    },
  },
  { ...H.apacheNoUpgrade, holdSeconds: 0, expect: { code: 'hop-stripped-upgrade', names: /Apache httpd \(Server: Apache\//, fix: /upgrade=ANY/ } },
  { ...H.apacheWebSocketOnly, holdSeconds: 0, expect: { code: 'http2-leg', names: /Apache httpd \(Server: Apache\//, fix: /upgrade=ANY/ } },
  {
    ...H.apacheVerbAcl,
    holdSeconds: 0,
    expect: { code: 'verb-acl', names: /Apache httpd \(Server: Apache\/.*rule is on the method/, fix: /<Limit>/ },
  },
  { ...H.varnishDefault, holdSeconds: 0, expect: { code: 'hop-stripped-upgrade', names: /Varnish \(Via: 1\.1 varnish/, fix: /return \(pipe\)/ } },
  { ...H.varnishPipeWebSocket, holdSeconds: 0, expect: { code: 'http2-leg', names: /Varnish \(Via: 1\.1 varnish/, fix: /return \(pipe\)/ } },
  {
    ...H.nghttpxH2Leg,
    holdSeconds: 0,
    expect: { code: 'http2-leg', names: /nghttpx.*Via header names an HTTP\/2 leg \("2 nghttpx"\)/, fix: /proto=h2/ },
  },
  { ...H.tinyproxy443, holdSeconds: 0, expect: { code: 'proxy-refused-tunnel', names: /tinyproxy \(Server: tinyproxy\//, fix: /ConnectPort/ } },
  { ...H.privoxy443, holdSeconds: 0, expect: { code: 'proxy-refused-tunnel', names: /Privoxy/, fix: /limit-connect/ } },
];

interface Observed {
  readonly outcome: KubectlOutcome;
  readonly detail: string;
}

async function observe(version: (typeof VERSIONS)[number], op: Operation, kubeconfig: string, emulator: Emulator, holdSeconds: number): Promise<Observed> {
  const from = emulator.upgrades.length;
  const args = ['--kubeconfig', kubeconfig];
  const held = op === 'exec' ? await kubectlExecHolding(version, args, {}, holdSeconds) : await kubectlPortForwardHolding(version, args, {}, holdSeconds);
  if (!held.works) return { outcome: 'breaks', detail: held.stderr.trim().split('\n').slice(-2).join(' | ') };
  const mine = emulator.upgrades
    .slice(from)
    // kubectl's User-Agent is "<binary name>/v1.33.1 (linux/amd64) kubernetes/…".
    .filter((u) => String(u.headers['user-agent'] ?? '').includes(`/v${version}.`) && u.operation === op && u.status === 101);
  const used = mine.at(-1)?.transport;
  return { outcome: used && used !== defaultTransport(version, op) ? 'works-via-fallback' : 'works', detail: `over ${used}` };
}

interface Prepared {
  readonly emulator: Emulator;
  readonly hop: RealHop | undefined;
  readonly report?: ProbeReport;
  readonly kubeconfig?: string;
}
const prepared = new Map<string, Prepared>();

async function prepare(path: Path): Promise<Prepared> {
  const emulator = await Emulator.start({});
  const hop = await requireHop(() => path.start(emulator));
  if (!hop) return { emulator, hop };
  const { server, proxy } = path.route(hop, emulator);
  const report = await probeThrough({ server, proxy }, path.name, path.holdSeconds);
  const kubeconfig = join(hop.dir, 'kubeconfig');
  writeFileSync(kubeconfig, emulatorKubeconfig(emulator, { server: server.toString().replace(/\/$/, ''), proxyUrl: proxy?.toString() }));
  return { emulator, hop, report, kubeconfig };
}

// Every path at once: the probes hold in parallel, then every kubectl does.
beforeAll(async () => {
  await Promise.all(PATHS.map(async (p) => prepared.set(p.name, await prepare(p))));
}, 60_000);
afterAll(async () => {
  await Promise.all(
    [...prepared.values()].map(async (p) => {
      await p.hop?.stop();
      await p.emulator.stop();
    }),
  );
});

describe.concurrent('through each real hop, the probe predicts what kubectl 1.29, 1.30, 1.33, 1.34, 1.35 and 1.36 do, and names the hop with its fix', () => {
  for (const path of PATHS) {
    it(`${path.name}: exec and port-forward`, async ({ skip }) => {
      const { hop, report, kubeconfig, emulator } = prepared.get(path.name)!;
      if (!hop || !report || !kubeconfig) skip('hop missing');
      const cases = (['exec', 'portforward'] as const).flatMap((op) => VERSIONS.map((version) => ({ op, version })));
      const observed = await Promise.all(cases.map(({ op, version }) => observe(version, op, kubeconfig!, emulator, path.holdSeconds)));
      const rows = cases.map(({ op, version }, i) => {
        const verdict = report!.verdicts.find((v) => v.operation === op)!;
        const predicted = verdict.kubectl!.find((k) => k.client === CLIENT_OF[version])!;
        return { op, version, predicted: predicted.outcome, did: observed[i]!.outcome, why: predicted.reason, saw: observed[i]!.detail };
      });
      const disagree = rows.filter((r) => r.predicted !== r.did);
      expect(disagree, JSON.stringify(disagree, null, 1)).toEqual([]);
      // Each path exercises what it is here for.
      const outcomes = new Set(rows.map((r) => r.did));
      if (path.name.startsWith('nginx refusing WebSocket')) expect(outcomes).toEqual(new Set(['works', 'works-via-fallback']));
      if (path.name.startsWith('nginx refusing SPDY')) expect(outcomes).toEqual(new Set(['works', 'breaks']));
      if (path.name.startsWith('squid')) expect(outcomes).toEqual(new Set(['breaks']));
      if (path.holdSeconds > 0)
        expect(rows.filter((r) => r.did === 'breaks').map((r) => `${r.op} ${r.version}`)).toEqual([
          'portforward 1.33',
          'portforward 1.34',
          'portforward 1.35',
          'portforward 1.36',
        ]);
      // The product the wire names, and its own fix (not another product's).
      if (path.expect) {
        for (const v of report!.verdicts) {
          const d = v.diagnosis.find((x) => x.code === path.expect!.code);
          expect(d, `${v.operation}: ${JSON.stringify(v.diagnosis.map((x) => x.code))}`).toBeDefined();
          expect(d!.summary).toMatch(path.expect.names);
          expect(d!.check).toMatch(path.expect.fix);
          if (!/nginx/i.test(path.name)) expect(d!.check).not.toMatch(/proxy_set_header Upgrade/);
        }
      }
    }, 90_000);
  }

  it('SilentFallback is exactly "works only through the fallback": 1 where WebSocket is refused, 0 on the idle cut where kubectl dies', ({ skip }) => {
    const refused = prepared.get(PATHS[0]!.name)!.report ?? skip('nginx missing');
    const cut = prepared.get(PATHS[3]!.name)!.report ?? skip('nginx missing');
    const fallback = (r: ProbeReport) =>
      reportDatums(r)
        .filter((d) => d.name === 'SilentFallback')
        .map((d) => `${d.dimensions.Operation}=${d.value}`);
    expect(fallback(refused)).toEqual(['exec=1', 'portforward=1']);
    expect(cut.verdicts.find((v) => v.operation === 'portforward')!.verdict).toBe('websocket-broken');
    expect(fallback(cut)).toEqual(['exec=0', 'portforward=0']);
  });
});
