/**
 * The probe sends what kubectl sends. Real kubectl 1.29, 1.33 and 1.36 and the probe (the CLI's `run`, as a user
 * starts it: no --container, the target found by its label) make their requests to the emulator, which records them;
 * every upgrade is compared on method, path, every query parameter (order aside), the header names, the upgrade
 * headers' values and the offered subprotocols, for exec, attach, port-forward, cp into and cp out of the pod, over
 * both transports; and the REST calls the probe makes before streaming (the pod, /version, the access reviews)
 * against kubectl's own. A difference fails the test unless the list below names it with its reason.
 */
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pattern, runKubectl, tcpEcho, withKubectlPortForward } from '../../lab/kubectl.js';
import { startEmulatorWithKubeconfig, type EmulatorWithKubeconfig } from '../../lab/emulator/kubeconfig.js';
import type { UpgradeRecord } from '../../lab/emulator/options.js';
import type { RestRecord } from '../../lab/emulator/server.js';
import { cli } from '../helpers/cli.js';
import { differences, unexplained, wireRequest, type WireRequest } from '../helpers/request-parity.js';

type Op = 'exec' | 'attach' | 'portforward' | 'cp-in' | 'cp-out';
type Wire = 'websocket' | 'spdy';
const OPS: readonly Op[] = ['exec', 'attach', 'portforward', 'cp-in', 'cp-out'];
const VERSIONS = ['1.29', '1.33', '1.36'] as const;
const TOKEN = 'parity-token-0123456789abcdef';

/**
 * kubectl's own identity (KEP-859, on by default from 1.30): `Kubectl-Command: kubectl exec` and a session id, for the
 * API server's audit log. The probe is not kubectl and does not say it is there; no hop acts on these headers.
 */
const KUBECTL_IDENTITY = {
  'header kubectl-command': "kubectl's KEP-859 header naming its command for audit logs; the probe does not claim to be kubectl",
  'header kubectl-session': "kubectl's KEP-859 session id for audit logs, with Kubectl-Command",
} as const;

/** The differences allowed, by operation, each with its reason. Everything else the two send must be the same. */
const ALLOWED: Readonly<Record<Op, Readonly<Record<string, string>>>> = {
  exec: { ...KUBECTL_IDENTITY },
  attach: { ...KUBECTL_IDENTITY },
  portforward: { ...KUBECTL_IDENTITY },
  'cp-in': {
    ...KUBECTL_IDENTITY,
    // kubectl cp runs `tar xmf - -C DIR`; the probe's upload runs its own counter (transfer.ts UPLOAD), same streams.
    'query command': 'the probe runs its own command (sh -c "head -n 1; wc -c; sleep 1"), not tar: the request differs only in the command',
  },
  'cp-out': {
    ...KUBECTL_IDENTITY,
    'query command': 'the probe runs its own command (sh -c "…; exec head -c SIZE /dev/zero"), not tar cf',
    // transfer.ts DOWNLOAD: the pod waits for the client's go line before it writes, so no byte is sent before the
    // reader is there; kubectl's tar writes at once and needs no stdin.
    'query stdin': "the probe's download reads a go line on stdin before it writes (transfer.ts), so it asks for stdin",
  },
};

/** What the two clients' upgrades of one operation and transport are, each as a hop sees it. */
const asWire = (u: UpgradeRecord): WireRequest => wireRequest(u.method, `${u.path}?${u.query}`, u.headers);

/** Which operation a probe upgrade is, from its path and command. */
function probeOp(u: UpgradeRecord): Op | undefined {
  const command = new URLSearchParams(u.query).getAll('command').join(' ');
  if (u.operation === 'portforward' || u.operation === 'attach') return u.operation;
  if (u.operation !== 'exec') return undefined;
  if (command === 'cat') return 'exec';
  if (command.includes('wc -c')) return 'cp-in';
  if (command.includes('/dev/zero')) return 'cp-out';
  return undefined;
}

let probeLab: EmulatorWithKubeconfig;
const probe = new Map<string, UpgradeRecord>();
let probeRest: RestRecord[] = [];

beforeAll(async () => {
  probeLab = await startEmulatorWithKubeconfig({ tls: true, token: TOKEN });
  const run = (...flags: string[]) =>
    cli(['run', '--kubeconfig', probeLab.kubeconfig, '--transports', 'websocket,spdy', '--keepalive', 'kubectl', '--hold', '0s', '-o', 'json', ...flags]);
  const runs = [
    await run('--ops', 'exec,attach,portforward'),
    await run('--ops', 'exec', '--transfer', '64KiB', '--transfer-shape', 'upload'),
    await run('--ops', 'exec', '--transfer', '64KiB', '--transfer-shape', 'download'),
  ];
  for (const r of runs) expect(r.code, r.stderr).toBe(0);
  for (const u of probeLab.emulator.upgrades) {
    const op = probeOp(u);
    if (op && u.status === 101 && !probe.has(`${op}|${u.transport}`)) probe.set(`${op}|${u.transport}`, u);
  }
  probeRest = [...probeLab.emulator.restRequests];
}, 120_000);
afterAll(() => probeLab?.stop());

describe('the probe names the container as kubectl does (the target has three)', () => {
  it('every exec and attach upgrade of a default run carries container=main, and the run found nothing broken', () => {
    const streaming = probeLab.emulator.upgrades.filter((u) => u.operation === 'exec' || u.operation === 'attach');
    expect(streaming.length).toBeGreaterThan(0);
    for (const u of streaming) expect(new URLSearchParams(u.query).get('container'), u.query).toBe('main');
    expect(streaming.every((u) => u.status === 101)).toBe(true);
  });
});

describe.each(VERSIONS)('kubectl %s and the probe make the same requests', (version) => {
  let lab: EmulatorWithKubeconfig;
  let work: string;
  beforeAll(async () => {
    lab = await startEmulatorWithKubeconfig({ tls: true, token: TOKEN });
    work = mkdtempSync(join(tmpdir(), 'ksp-parity-'));
    writeFileSync(join(work, 'file.bin'), pattern(64 * 1024));
  });
  afterAll(() => lab.stop());

  /** KUBECTL_*_WEBSOCKETS as the version needs them for `wire` (1.29's WebSocket exec is opt-in). */
  const env = (op: Op, wire: Wire): Record<string, string> => {
    const pf = op === 'portforward';
    if (wire === 'spdy') return pf ? { KUBECTL_PORT_FORWARD_WEBSOCKETS: 'false' } : { KUBECTL_REMOTE_COMMAND_WEBSOCKETS: 'false' };
    return version === '1.29' && !pf ? { KUBECTL_REMOTE_COMMAND_WEBSOCKETS: 'true' } : {};
  };

  /** Runs kubectl's command for `op` and returns its upgrade (the last one with a 101). */
  async function kubectlUpgrade(op: Op, wire: Wire): Promise<UpgradeRecord> {
    const from = lab.emulator.upgrades.length;
    const k = (args: string[], stdin?: string) =>
      runKubectl(version, ['--kubeconfig', lab.kubeconfig, ...args], { env: env(op, wire), stdin, timeoutMs: 30_000 });
    let r: { code: number | null; stderr: string } | undefined;
    if (op === 'exec') r = await k(['exec', '-i', 'probe-target', '--', 'cat'], 'parity\n');
    else if (op === 'attach') r = await k(['attach', '-i', 'probe-target'], 'parity\n');
    else if (op === 'cp-in') r = await k(['cp', join(work, 'file.bin'), 'probe-target:/tmp/parity.bin']);
    else if (op === 'cp-out') {
      await k(['cp', join(work, 'file.bin'), 'probe-target:/tmp/parity-out.bin']);
      const at = lab.emulator.upgrades.length;
      r = await k(['cp', 'probe-target:/tmp/parity-out.bin', join(work, 'back.bin')]);
      expect(readFileSync(join(work, 'back.bin')).equals(pattern(64 * 1024))).toBe(true);
      return lastUpgrade(lab.emulator.upgrades.slice(at), op);
    } else {
      const data = pattern(4096);
      await withKubectlPortForward(version, ['--kubeconfig', lab.kubeconfig, 'pod/probe-target', '0:8080'], env(op, wire), async (port) => {
        expect((await tcpEcho(port, data)).equals(data)).toBe(true);
      });
    }
    if (r) expect(r.code, r.stderr).toBe(0);
    return lastUpgrade(lab.emulator.upgrades.slice(from), op);
  }

  const lastUpgrade = (ups: readonly UpgradeRecord[], op: Op): UpgradeRecord => {
    const sub = op === 'portforward' ? 'portforward' : op === 'attach' ? 'attach' : 'exec';
    const found = ups.filter((u) => u.operation === sub && u.status === 101).at(-1);
    if (!found) throw new Error(`kubectl ${version} made no ${sub} upgrade for ${op}: ${ups.map((u) => `${u.method} ${u.path} ${u.status}`).join('; ')}`);
    return found;
  };

  for (const op of OPS) {
    for (const wire of ['websocket', 'spdy'] as const) {
      // KEP-4006: kubectl's WebSocket port-forward arrives in 1.30 (alpha, opt-in); 1.29 has none to compare with.
      if (version === '1.29' && op === 'portforward' && wire === 'websocket') continue;
      it(`${op} over ${wire}: the same method, path, query, headers and subprotocols`, async () => {
        const theirs = await kubectlUpgrade(op, wire);
        expect(theirs.transport).toBe(wire);
        const ours = probe.get(`${op}|${wire}`);
        expect(ours, `the probe made no ${op} ${wire} upgrade`).toBeDefined();
        const diffs = differences(asWire(theirs), asWire(ours!));
        expect(unexplained(diffs, ALLOWED[op]), `DIFFS ${op} ${wire} ${JSON.stringify(diffs)}`).toEqual([]);
        // The subprotocols, in kubectl's order, and the one the server chose.
        expect(ours!.offered).toEqual(theirs.offered);
        expect(ours!.subprotocol).toBe(theirs.subprotocol);
      });
    }
  }

  it('the REST calls before streaming: the pod GET, /version, the lookup by label and the access reviews, as kubectl makes them', async () => {
    const from = lab.emulator.restRequests.length;
    const k = (args: string[]) => runKubectl(version, ['--kubeconfig', lab.kubeconfig, ...args], { timeoutMs: 30_000 });
    expect((await k(['exec', 'probe-target', '--', 'true'])).code).toBe(0);
    const podGet = (rs: readonly RestRecord[]) => rs.find((r) => r.method === 'GET' && r.path.startsWith('/api/v1/namespaces/default/pods/probe-target'));
    const theirPod = podGet(lab.emulator.restRequests.slice(from));
    const ourPod = podGet(probeRest);
    expect(theirPod && ourPod).toBeTruthy();
    const rest = (r: RestRecord) => wireRequest(r.method, r.path, r.headers);
    expect(
      unexplained(differences(rest(theirPod!), rest(ourPod!)), REST_ALLOWED),
      `DIFFS pod ${JSON.stringify(differences(rest(theirPod!), rest(ourPod!)))}`,
    ).toEqual([]);

    const atVersion = lab.emulator.restRequests.length;
    expect((await k(['version', '-o', 'json'])).code).toBe(0);
    const theirVersion = lab.emulator.restRequests.slice(atVersion).find((r) => r.path === '/version' || r.path.startsWith('/version?'));
    const ourVersion = probeRest.find((r) => r.path === '/version' || r.path.startsWith('/version?'));
    expect(theirVersion && ourVersion).toBeTruthy();
    expect(
      unexplained(differences(rest(theirVersion!), rest(ourVersion!)), REST_ALLOWED),
      `DIFFS version ${JSON.stringify(differences(rest(theirVersion!), rest(ourVersion!)))}`,
    ).toEqual([]);

    // The target's lookup by label: `kubectl get pods -l …`, which pages by 500 (--chunk-size) where the probe reads one
    // page (its namespace holds only its targets; a list over 16 MiB is target-unlisted, never guessed from).
    const atList = lab.emulator.restRequests.length;
    expect((await k(['get', 'pods', '-l', 'app.kubernetes.io/name=kube-stream-probe-target', '-o', 'json'])).code).toBe(0);
    const isList = (r: RestRecord) => r.method === 'GET' && r.path.startsWith('/api/v1/namespaces/default/pods?');
    const theirList = lab.emulator.restRequests.slice(atList).find(isList);
    const ourList = probeRest.find(isList);
    expect(theirList && ourList).toBeTruthy();
    const listDiffs = differences(rest(theirList!), rest(ourList!));
    expect(
      unexplained(listDiffs, {
        ...REST_ALLOWED,
        'query limit': 'kubectl get pages by 500 (--chunk-size); the probe reads one page',
        'header accept': "kubectl get's resource builder asks for JSON alone; the probe sends client-go's default for every call",
      }),
      `DIFFS list ${JSON.stringify(listDiffs)}`,
    ).toEqual([]);

    // `kubectl auth can-i create pods/probe-target --subresource exec`: the review the probe's preflight makes for it.
    const atReview = lab.emulator.restRequests.length;
    expect((await k(['auth', 'can-i', 'create', 'pods/probe-target', '--subresource', 'exec', '-n', 'default'])).stdout).toBe('yes\n');
    const isReview = (r: RestRecord) => r.method === 'POST' && r.path.startsWith('/apis/authorization.k8s.io/v1/selfsubjectaccessreviews');
    const theirReview = lab.emulator.restRequests.slice(atReview).find(isReview);
    const spec = (r: RestRecord) => (r.body as { spec?: { resourceAttributes?: Record<string, string> } }).spec?.resourceAttributes;
    const ourReview = probeRest.filter(isReview).find((r) => spec(r)?.verb === 'create' && spec(r)?.subresource === 'exec');
    expect(theirReview && ourReview).toBeTruthy();
    expect(
      unexplained(differences(rest(theirReview!), rest(ourReview!)), { ...REST_ALLOWED, ...REVIEW_ALLOWED }),
      `DIFFS review ${JSON.stringify(differences(rest(theirReview!), rest(ourReview!)))}`,
    ).toEqual([]);
    expect(spec(ourReview!)).toEqual(spec(theirReview!));
  });
});

/** REST differences allowed, with their reasons. */
const REST_ALLOWED: Readonly<Record<string, string>> = {
  ...KUBECTL_IDENTITY,
  // Go's transport asks for gzip and inflates it itself; the probe reads plain bodies under its own size bound.
  'header accept-encoding': "Go's transport adds Accept-Encoding: gzip on its own; the probe asks for no compression",
  // undici says keep-alive, HTTP/1.1's default, which Go leaves unsaid.
  'header connection': "undici sends Connection: keep-alive, HTTP/1.1's default that Go's transport leaves implicit",
};

/**
 * kubectl's typed clientset speaks Kubernetes protobuf for built-in kinds (Content-Type
 * application/vnd.kubernetes.protobuf, Accept protobuf then JSON); the probe speaks JSON, which every kube-apiserver
 * serves for the same object. The review's fields are compared field by field above.
 */
const REVIEW_ALLOWED: Readonly<Record<string, string>> = {
  'header content-type': "kubectl's typed client sends protobuf; the probe the same review as JSON",
  'header accept': "kubectl's typed client asks for protobuf first; the probe for JSON",
};

describe('the comparison fails on what it must catch', () => {
  it('a query parameter dropped from the probe’s request is a difference no rule allows', () => {
    const ours = probe.get('exec|websocket')!;
    const theirs = wireRequest(ours.method, `${ours.path}?${ours.query}`, ours.headers);
    expect(unexplained(differences(theirs, theirs), ALLOWED.exec)).toEqual([]);
    const dropped = new URLSearchParams(ours.query);
    dropped.delete('container');
    const broken = wireRequest(ours.method, `${ours.path}?${dropped}`, ours.headers);
    expect(unexplained(differences(theirs, broken), ALLOWED.exec)).toEqual(['query container: kubectl ["main"] probe []']);
    const noStderr = new URLSearchParams(ours.query);
    noStderr.delete('stderr');
    expect(unexplained(differences(theirs, wireRequest(ours.method, `${ours.path}?${noStderr}`, ours.headers)), ALLOWED.exec)).toEqual([
      'query stderr: kubectl ["true"] probe []',
    ]);
    // Another subprotocol offer, a missing header: differences too.
    const other = { ...ours.headers, 'sec-websocket-protocol': 'v4.channel.k8s.io' };
    expect(differences(theirs, wireRequest(ours.method, `${ours.path}?${ours.query}`, other))).toEqual([
      'header sec-websocket-protocol: kubectl "v5.channel.k8s.io" probe "v4.channel.k8s.io"',
    ]);
  });
});
