/**
 * `run --ops attach --tty` through each real hop of the lab (test/lab/real-hops.test.ts's set: nginx three ways,
 * haproxy as TCP and as HTTP tunnel, squid, dante, mitmproxy): the terminal rows' verdicts are exec's on the same
 * path (the same channels and client code), and real kubectl 1.33 `attach -it` on a pty of its own through the same
 * hop works exactly where the probe's forecast for it says so — its process reads the size kubectl sent.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import YAML from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { emulatorKubeconfig, startEmulatorWithKubeconfig, type EmulatorWithKubeconfig } from '../../lab/emulator/kubeconfig.js';
import { kubectlInTerminal } from '../../lab/kubectl.js';
import type { RealHop } from '../../lab/real-hops/process-hop.js';
import { startDante, startMitmproxy, startSquid } from '../../lab/real-hops/proxies.js';
import { startHaproxy, startNginx } from '../../lab/real-hops/reverse-proxies.js';
import { runPlan } from '../../src/probe/runner.js';
import type { ProbeReport } from '../../src/probe/types.js';
import { requireHop } from '../helpers/hops.js';

const TOKEN = 'terminal-hops-token-123456';
let plain: EmulatorWithKubeconfig;
let secure: EmulatorWithKubeconfig;
const hops = new Map<string, RealHop>();
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** How the probe and kubectl reach the emulator through each hop. */
interface Route {
  readonly server: URL;
  readonly proxy?: URL;
  readonly ca?: string;
  readonly e: EmulatorWithKubeconfig;
}
const routes = new Map<string, Route>();
const reports = new Map<string, ProbeReport>();

beforeAll(async () => {
  plain = await startEmulatorWithKubeconfig({});
  secure = await startEmulatorWithKubeconfig({ tls: true, token: TOKEN });
  const up = Number(plain.emulator.url.port);
  const started: Array<[string, () => Promise<RealHop>]> = [
    ['nginx-upgrade-ok', () => startNginx({ kind: 'upgrade-ok', readTimeoutSeconds: 60 }, up)],
    ['nginx-no-upgrade-headers', () => startNginx({ kind: 'no-upgrade-headers' }, up)],
    ['nginx-refuse-spdy', () => startNginx({ kind: 'refuse-spdy' }, up)],
    ['haproxy-tcp', () => startHaproxy({ kind: 'tcp', timeoutSeconds: 60 }, up)],
    ['haproxy-http-tunnel', () => startHaproxy({ kind: 'http-tunnel', tunnelTimeoutSeconds: 60 }, up)],
    ['squid', () => startSquid()],
    ['dante', () => startDante()],
    ['mitmproxy', () => startMitmproxy(secure.emulator.tls!.caPem)],
  ];
  for (const [name, start] of started) {
    const hop = await requireHop(start);
    if (!hop) continue;
    hops.set(name, hop);
    const at = new URL(`http://127.0.0.1:${hop.port}`);
    const viaProxy = (proxy: URL, ca = secure.emulator.tls!.caPem): Route => ({ server: secure.emulator.url, proxy, ca, e: secure });
    routes.set(
      name,
      name.startsWith('nginx') || name.startsWith('haproxy')
        ? { server: at, e: plain }
        : name === 'dante'
          ? viaProxy(new URL(`socks5://127.0.0.1:${hop.port}`))
          : name === 'mitmproxy'
            ? viaProxy(at, (hop as RealHop & { caPem(): string }).caPem())
            : viaProxy(at),
    );
  }
  await Promise.all(
    [...routes].map(async ([name, r]) => {
      const report = await runPlan(
        {
          location: 'terminal-hops',
          cluster: {
            name,
            connection: {
              server: r.server,
              upgradeTimeoutMs: 4000,
              ...(r.ca ? { tls: { ca: [r.ca] } } : {}),
              ...(r.e === secure ? { headers: { Authorization: `Bearer ${TOKEN}` } } : {}),
              ...(r.proxy ? { proxy: { url: r.proxy } } : {}),
            },
            namespace: 'default',
            pod: 'probe-target',
            port: 8080,
          },
          operations: ['exec', 'attach'],
          transports: ['websocket', 'spdy'],
          keepalives: ['kubectl'],
          holdsSeconds: [0],
          holdShapes: ['silent', 'tty'],
          echoTimeoutMs: 3000,
        },
        { skipPreflight: true, followUpBudgetMs: 0 },
      );
      reports.set(name, report);
    }),
  );
}, 120_000);

afterAll(async () => {
  await Promise.all([...hops.values()].map((h) => h.stop()));
  await Promise.all([plain?.stop(), secure?.stop()]);
});

/** A kubeconfig for kubectl through the hop. */
function kubeconfigVia(name: string): string {
  const r = routes.get(name)!;
  const d = YAML.parse(emulatorKubeconfig(r.e.emulator, { server: r.server.toString().replace(/\/$/, ''), proxyUrl: r.proxy?.toString().replace(/\/$/, '') }));
  if (r.ca) d.clusters[0].cluster['certificate-authority-data'] = Buffer.from(r.ca).toString('base64');
  const p = join(hops.get(name)!.dir, 'terminal-kubeconfig');
  writeFileSync(p, YAML.stringify(d));
  return p;
}

describe.each(['nginx-upgrade-ok', 'nginx-no-upgrade-headers', 'nginx-refuse-spdy', 'haproxy-tcp', 'haproxy-http-tunnel', 'squid', 'dante', 'mitmproxy'])(
  'through %s',
  (name) => {
    it("attach -it and exec -it get exec's verdict, and real kubectl 1.33 attach -it works exactly where the forecast says", async ({ skip }) => {
      const r = reports.get(name) ?? skip(`${name} missing`);
      const verdict = (op: string, shape?: string) => r.verdicts.find((v) => v.operation === op && v.holdShape === shape)!;
      const exec = verdict('exec').verdict;
      expect([verdict('exec', 'tty').verdict, verdict('attach').verdict, verdict('attach', 'tty').verdict]).toEqual([exec, exec, exec]);
      const forecast = verdict('attach', 'tty').kubectl!.find((k) => k.client === '1.31-1.37')!.outcome;
      const e = routes.get(name)!.e;
      const before = e.emulator.upgrades.length;
      const k = kubectlInTerminal('1.33', ['--kubeconfig', kubeconfigVia(name), 'attach', '-it', 'probe-target', '-c', 'tty'], { cols: 100, rows: 40 }, 20_000);
      for (let i = 0; i < 100 && !e.emulator.upgrades.slice(before).some((u) => u.status === 101); i++) await sleep(50);
      await sleep(300);
      k.type('hello\r');
      await sleep(500);
      k.stop();
      const shown = (await k.done).stdout;
      expect([name, forecast === 'breaks' ? 'breaks' : 'works']).toEqual([name, shown.includes('hello\r\n40 100\r\n') ? 'works' : 'breaks']);
    }, 60_000);
  },
);
