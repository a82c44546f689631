/**
 * `--ops attach --tty` through each real hop of the lab (test/helpers/hop-paths.ts, the catalogue the kubectl-model
 * proof goes through): the terminal rows' verdicts are exec's on the same path (the same channels and client code),
 * and real kubectl 1.33 `attach -it` on a pty of its own through the same hop works exactly where the probe's
 * forecast for it says so — its process reads the size kubectl sent. One emulator per path.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import YAML from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { emulatorKubeconfig } from '../../lab/emulator/kubeconfig.js';
import { Emulator } from '../../lab/emulator/server.js';
import { kubectlInTerminal } from '../../lab/kubectl.js';
import type { RealHop } from '../../lab/real-hops/process-hop.js';
import { runPlan } from '../../src/probe/runner.js';
import type { ProbeReport } from '../../src/probe/types.js';
import { HOP_PATHS, type HopPath, type Route } from '../helpers/hop-paths.js';
import { requireHop } from '../helpers/hops.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
/**
 * The TLS emulators want a token: with no credential, kubectl on a terminal prompts for a username over https
 * (over http it neither prompts nor sends a token, so those emulators take none).
 */
const TOKEN = 'terminal-hops-token-123456';
const PATHS: HopPath[] = Object.values(HOP_PATHS);

interface Prepared {
  readonly emulator: Emulator;
  readonly hop?: RealHop;
  readonly report?: ProbeReport;
  readonly kubeconfig?: string;
}
const prepared = new Map<string, Prepared>();

function probe(route: Route, name: string): Promise<ProbeReport> {
  return runPlan(
    {
      location: 'terminal-hops',
      cluster: {
        name,
        connection: {
          server: route.server,
          upgradeTimeoutMs: 4000,
          ...(route.ca ? { headers: { Authorization: `Bearer ${TOKEN}` } } : {}),
          ...(route.proxy ? { proxy: { url: route.proxy } } : {}),
          ...(route.ca ? { tls: { ca: [route.ca] } } : {}),
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
}

async function prepare(path: HopPath): Promise<Prepared> {
  const emulator = await Emulator.start(path.tls ? { tls: true, token: TOKEN } : {});
  const hop = await requireHop(() => path.start(emulator));
  if (!hop) return { emulator };
  const route = path.route(hop, emulator);
  const report = await probe(route, path.name);
  const d = YAML.parse(emulatorKubeconfig(emulator, { server: route.server.toString().replace(/\/$/, ''), proxyUrl: route.proxy?.toString() }));
  if (route.ca) d.clusters[0].cluster['certificate-authority-data'] = Buffer.from(route.ca).toString('base64');
  const kubeconfig = join(hop.dir, 'terminal-kubeconfig');
  writeFileSync(kubeconfig, YAML.stringify(d));
  return { emulator, hop, report, kubeconfig };
}

beforeAll(async () => {
  await Promise.all(PATHS.map(async (p) => prepared.set(p.name, await prepare(p))));
}, 90_000);
afterAll(async () => {
  await Promise.all(
    [...prepared.values()].map(async (p) => {
      await p.hop?.stop();
      await p.emulator.stop();
    }),
  );
});

describe.each(PATHS.map((p) => p.name))('through %s', (name) => {
  it("attach, exec -it and attach -it get exec's verdict, and real kubectl 1.33 attach -it works exactly where the forecast says", async ({ skip }) => {
    const p = prepared.get(name)!;
    const r = p.report ?? skip(`${name}: hop missing`);
    const verdict = (op: string, shape?: string) => r.verdicts.find((v) => v.operation === op && v.holdShape === shape)!;
    // A terminal changes nothing a hop sees at the upgrade: each terminal row is its operation's (attach may differ
    // from exec: a hop's rule can name …/exec and not …/attach).
    expect([verdict('exec', 'tty').verdict, verdict('attach', 'tty').verdict]).toEqual([verdict('exec').verdict, verdict('attach').verdict]);
    const forecast = verdict('attach', 'tty').kubectl!.find((k) => k.client === '1.31-1.37')!.outcome;
    const before = p.emulator.upgrades.length;
    const k = kubectlInTerminal('1.33', ['--kubeconfig', p.kubeconfig!, 'attach', '-it', 'probe-target', '-c', 'tty'], { cols: 100, rows: 40 }, 20_000);
    for (let i = 0; i < 100 && !p.emulator.upgrades.slice(before).some((u) => u.status === 101); i++) await sleep(50);
    await sleep(300);
    k.type('hello\r');
    await sleep(500);
    k.stop();
    const shown = (await k.done).stdout;
    if (process.env.KSP_DEBUG) console.log(name, forecast, JSON.stringify(shown.slice(0, 300)));
    expect([name, forecast === 'breaks' ? 'breaks' : 'works']).toEqual([name, shown.includes('hello\r\n40 100\r\n') ? 'works' : 'breaks']);
  }, 60_000);
});
