/**
 * The WS-only column against real WebSocket-only clients: @kubernetes/client-node 1.4 (no pings, exec over v5,
 * port-forward over the kubelet's legacy WebSocket protocol) holds exec and port-forward through each real hop of the
 * lab, with no hold and with a hold longer than the hop's idle timeout, and the probe's run (its default keepalives
 * kubectl,sdk) must have said so: its SDK-client session did what client-node did, and the forecast is `breaks`
 * whenever client-node broke; never `works` where only kubectl's pings kept a session alive. Debian's
 * python3-kubernetes 22.6 (v4 exec only) holds the same sessions wherever no forward proxy is in the way, and must
 * meet the same.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Emulator } from '../../lab/emulator/server.js';
import type { RealHop } from '../../lab/real-hops/process-hop.js';
import {
  clientNodeExecHolding,
  clientNodePortForwardHolding,
  pythonExecHolding,
  pythonPortForwardHolding,
  requirePython,
  type SdkClientTarget,
} from '../../lab/sdk-client.js';
import { runPlan } from '../../src/probe/runner.js';
import type { ProbeReport } from '../../src/probe/types.js';
import { HOP_PATHS, type HopPath, type Route } from '../helpers/hop-paths.js';
import { requireHop } from '../helpers/hops.js';
import { labPlan } from '../helpers/plan.js';

/** Longer than every timed hop's idle timer (7 s, squid's 4 s). */
const HOLD = 9;

interface Path {
  readonly name: string;
  /** The hop; undefined for none (straight to the emulator). */
  readonly hop?: HopPath;
  /** What client-node must do here, at no hold and after HOLD s (the hop's behaviour, known beforehand). */
  readonly clientNode: { readonly hold0: boolean; readonly held: boolean };
}

const H = HOP_PATHS;
const works = { hold0: true, held: true };
const refused = { hold0: false, held: false };
const cutWhenIdle = { hold0: true, held: false };
/** Every real hop of the lab's catalogue, and none. */
const PATHS: readonly Path[] = [
  { name: 'direct', clientNode: works },
  ...(
    [
      [H.nginxRefuseWebSocket, refused],
      [H.nginxRefuseSpdy, works],
      // client-node tunnels with CONNECT (hpagent) even to an http:// server, as kubectl does.
      [H.squidDenyConnect, refused],
      [H.nginxIdle, cutWhenIdle],
      [H.haproxyTcp, cutWhenIdle],
      [H.nginxVerbAcl, refused],
      [H.haproxyVerbAcl, refused],
      [H.apacheNoUpgrade, refused],
      [H.apacheWebSocketOnly, works],
      [H.apacheVerbAcl, refused],
      [H.varnishDefault, refused],
      [H.varnishPipeWebSocket, works],
      [H.nghttpxH2Leg, works],
      [H.tinyproxy443, refused],
      [H.privoxy443, refused],
      [H.haproxyHttpTunnel, cutWhenIdle],
      [H.squid, works],
      [H.squidIdle, cutWhenIdle],
      [H.dante, works],
      [H.mitmproxy, works],
    ] as const
  ).map(([hop, clientNode]) => ({ name: hop.name, hop, clientNode })),
];

let plain: Emulator;
let secure: Emulator;
type Held = Awaited<ReturnType<typeof clientNodeExecHolding>>;
type Measured = Record<'exec' | 'portforward', readonly [Held, Held]>;
/**
 * Per path: the probe's report, and what client-node and the Python client did (by operation, at hold 0 and HOLD),
 * measured side by side. The Python client only where no proxy is in the way: it ignores proxy-url (22.6).
 */
const labs = new Map<string, { hop?: RealHop; report: ProbeReport; clientNode: Measured; proxied: boolean; python?: Measured }>();

async function holding(
  execHolding: (t: SdkClientTarget, s: number) => Promise<Held>,
  portForwardHolding: (t: SdkClientTarget, s: number) => Promise<Held>,
  target: SdkClientTarget,
): Promise<Measured> {
  const [e0, eH, p0, pH] = await Promise.all([
    execHolding(target, 0),
    execHolding(target, HOLD),
    portForwardHolding(target, 0),
    portForwardHolding(target, HOLD),
  ]);
  return { exec: [e0, eH], portforward: [p0, pH] } as Measured;
}

function probe(route: Route): Promise<ProbeReport> {
  const plan = labPlan(route.server, { holdsSeconds: [0, HOLD], keepalives: ['kubectl', 'sdk'], echoTimeoutMs: 3000 });
  const connection = {
    ...plan.cluster.connection,
    upgradeTimeoutMs: 4000,
    ...(route.proxy ? { proxy: { url: route.proxy } } : {}),
    ...(route.ca ? { tls: { ca: [route.ca] } } : {}),
  };
  return runPlan({ ...plan, cluster: { ...plan.cluster, connection } }, { skipPreflight: true, followUpBudgetMs: 0 });
}

/** Python clients started at once (each start is a quarter second of CPU): more would starve the probe's own clock. */
const PYTHON_PATHS_AT_ONCE = 4;

beforeAll(async () => {
  [plain, secure] = await Promise.all([Emulator.start({}), Emulator.start({ tls: true })]);
  const python = await requireHop(requirePython);
  const targets = new Map<string, SdkClientTarget>();
  // The probe and client-node side by side on every path...
  await Promise.all(
    PATHS.map(async (p) => {
      const emulator = p.hop?.tls ? secure : plain;
      const hop = p.hop ? await requireHop(() => p.hop!.start(emulator)) : undefined;
      if (p.hop && !hop) return;
      const route = hop ? p.hop!.route(hop, emulator) : { server: emulator.url };
      const target = { server: route.server.toString().replace(/\/$/, ''), ...(route.proxy ? { proxyUrl: route.proxy.toString().replace(/\/$/, '') } : {}) };
      const [report, clientNode] = await Promise.all([probe(route), holding(clientNodeExecHolding, clientNodePortForwardHolding, target)]);
      labs.set(p.name, { hop, report, clientNode, proxied: route.proxy !== undefined });
      if (!route.proxy) targets.set(p.name, target);
    }),
  );
  // ...then the Python client where no forward proxy is in the way, a few paths at a time.
  if (!python) return;
  const queue = [...targets];
  await Promise.all(
    Array.from({ length: PYTHON_PATHS_AT_ONCE }, async () => {
      for (let next = queue.shift(); next; next = queue.shift()) {
        const [name, target] = next;
        labs.set(name, { ...labs.get(name)!, python: await holding(pythonExecHolding, pythonPortForwardHolding, target) });
      }
    }),
  );
}, 180_000);

afterAll(async () => {
  await Promise.all([...labs.values()].map((l) => l.hop?.stop()));
  await Promise.all([plain?.stop(), secure?.stop()]);
});

describe.each(PATHS)('$name', (p) => {
  it.each([0, HOLD])('client-node exec and port-forward, hold %s s: the SDK-client sessions and the WS-only forecast say what it did', (holdSeconds) => {
    const lab = labs.get(p.name);
    if (!lab) return; // the hop is not installed here (requireHop said so); in CI it fails instead
    const expected = holdSeconds === 0 ? p.clientNode.hold0 : p.clientNode.held;
    for (const operation of ['exec', 'portforward'] as const) {
      const real = lab.clientNode[operation][holdSeconds === 0 ? 0 : 1];
      const what = `${p.name}: client-node ${operation}, hold ${holdSeconds} s`;
      expect(real.works, `${what} (${real.stderr}; closed after ${real.closedAfterSeconds} s)`).toBe(expected);
      // The Python client meets the same (v4 exec, the same legacy port-forward), where it takes the same path.
      if (process.env.CI === 'true') expect(lab.python !== undefined, `${p.name}: the Python client ran`).toBe(!lab.proxied);
      const py = lab.python?.[operation][holdSeconds === 0 ? 0 : 1];
      if (py) expect(py.works, `${p.name}: the Python client's ${operation}, hold ${holdSeconds} s (${py.stderr})`).toBe(expected);
      if (py?.works) expect(py.protocol).toBe('v4.channel.k8s.io');
      const sdk = lab.report.results.find((r) => r.keepalive === 'sdk' && r.operation === operation && r.holdSeconds === holdSeconds)!;
      expect(sdk.ok, `${what}: the probe's SDK-client session (${sdk.error ?? sdk.hold.cause ?? sdk.upgrade.error})`).toBe(real.works);
      if (real.works) expect(sdk.subprotocol).toBe(real.protocol);
      const v = lab.report.verdicts.find((x) => x.operation === operation && x.keepalive === 'kubectl' && x.holdSeconds === holdSeconds)!;
      const ws = lab.report.results.find(
        (r) => r.keepalive === 'kubectl' && r.transport === 'websocket' && r.operation === operation && r.holdSeconds === holdSeconds,
      )!;
      const forecast = v.kubectl!.find((k) => k.client === 'websocket-only')!;
      // Breaks when client-node broke; works only when it worked and kubectl's WebSocket path (client-go ≥ 0.36 tools) did.
      expect(forecast.outcome, `${what}: ${forecast.reason}`).toBe(real.works && ws.ok ? 'works' : 'breaks');
      expect(forecast.reason).toMatch(real.works ? /SDK clients and browser terminals work/ : /SDK clients and browser terminals break/);
    }
  });
});

describe('after a hold that only pings survive', () => {
  it("no forecast says WS-only works where kubectl's pings kept kubectl alive and client-node was cut", () => {
    const lab = labs.get(H.nginxIdle.name);
    if (!lab) return;
    const v = lab.report.verdicts.find((x) => x.operation === 'exec' && x.keepalive === 'kubectl' && x.holdSeconds === HOLD)!;
    // kubectl's WebSocket exec pings every 5 s: it survives the 7 s timer, and kubectl works...
    expect(v.verdict).toBe('clean');
    expect(v.kubectl!.find((k) => k.client === '1.31-1.37')!.outcome).toBe('works');
    // ...while clients without pings do not, and the report says so in the column and in a finding.
    expect(v.kubectl!.find((k) => k.client === 'websocket-only')!.outcome).toBe('breaks');
    expect(lab.report.findings.find((d) => d.code === 'keepalive-dependent')?.check).toMatch(
      /clients that send no pings \(browser terminals, SDK clients\) break/,
    );
  });
});
