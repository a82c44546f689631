/**
 * Per-node probing against the emulator playing a 1.36 API server with four
 * nodes, one per fault: healthy; the WebSocket passed to a kubelet whose
 * runtime fails after the 101 (ExtendWebSocketsToKubelet + cri-dockerd); the
 * kubelet unreachable (every upgrade 500); streaming cut 3 s after the 101.
 * Over both transports: the right nodes named with the right class, the
 * kubectl model's answer, the metrics without a Node dimension; and real
 * kubectl 1.35 against the same emulator agrees on which nodes break.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import YAML from 'yaml';
import { startEmulatorWithKubeconfig, type EmulatorWithKubeconfig } from '../../lab/emulator/kubeconfig.js';
import { runKubectl, tcpEcho, withKubectlPortForward } from '../../lab/kubectl.js';
import { perNodeDatums } from '../../src/metrics/datums.js';
import type { PerNodeReport } from '../../src/probe/per-node.js';
import { NODE_TARGET_LABEL } from '../../src/kube/target.js';
import { cli } from '../helpers/cli.js';

let lab: EmulatorWithKubeconfig;
let report: PerNodeReport;
let code: number;
beforeAll(async () => {
  lab = await startEmulatorWithKubeconfig({
    tls: true,
    token: 'per-node-token-123456',
    serverVersion: 'v1.36.0',
    nodes: [
      { name: 'node-a', declaredFeatures: ['ExtendWebSocketsToKubelet'] },
      { name: 'node-b', kubeletVersion: 'v1.36.0', declaredFeatures: ['ExtendWebSocketsToKubelet'], fault: { kind: 'stream-error' } },
      { name: 'node-c', fault: { kind: 'refuse' } },
      { name: 'node-d', kubeletVersion: 'v1.35.2', fault: { kind: 'cut', afterSeconds: 3 } },
      { name: 'node-e', fault: { kind: 'black-hole', afterSeconds: 2 } },
    ],
  });
  const r = await cli(['run', '--kubeconfig', lab.kubeconfig, '--per-node', '--hold', '0s,5s', '--echo-timeout', '2000', '-o', 'json']);
  code = r.code;
  report = JSON.parse(r.stdout);
}, 60_000);
afterAll(async () => {
  await lab?.stop();
});

const failingOn = (op: string, transport: string) =>
  Object.fromEntries(report.summary.find((s) => s.operation === op && s.transport === transport)!.failing.map((f) => [f.node, f.class]));

describe('run --per-node', () => {
  it('finds the per-node targets and reads each node: kubelet version, whether it declares ExtendWebSocketsToKubelet', () => {
    expect(report.nodes.map((n) => [n.node, n.pod, n.kubeletVersion, n.extendWebSockets])).toEqual([
      ['node-a', 'probe-node-node-a', 'v1.36.0', true],
      ['node-b', 'probe-node-node-b', 'v1.36.0', true],
      ['node-c', 'probe-node-node-c', 'v1.36.0', false],
      ['node-d', 'probe-node-node-d', 'v1.35.2', false],
      ['node-e', 'probe-node-node-e', 'v1.36.0', false],
    ]);
    expect(code).toBe(1);
  });

  it('names the failing nodes per operation and transport, with the class of each failure', () => {
    for (const op of ['exec', 'portforward']) {
      expect(failingOn(op, 'websocket')).toEqual({
        'node-b': 'stream-error-after-upgrade',
        'node-c': 'api-server-refused',
        'node-d': 'idle-timeout',
        'node-e': 'black-hole',
      });
      expect(failingOn(op, 'spdy')).toEqual({ 'node-c': 'api-server-refused', 'node-d': 'idle-timeout', 'node-e': 'black-hole' });
    }
    expect(report.summary.find((s) => s.operation === 'exec' && s.transport === 'websocket')!.text).toMatch(
      /^WebSocket exec fails only on 4 of 5 nodes: node-b \(kubelet v1\.36\.0, declares ExtendWebSocketsToKubelet\): stream-error-after-upgrade/,
    );
  });

  it('a 101 followed by an error on the error stream is its own class, never a hop refusal, and kubectl breaks on it without falling back', () => {
    const b = report.nodes.find((n) => n.node === 'node-b')!.report;
    const ws = b.results.filter((r) => r.transport === 'websocket');
    for (const r of ws) expect(r).toMatchObject({ upgrade: { ok: true, status: 101 }, errorCode: 'STREAM_ERROR', firstEchoMs: null });
    expect(ws[0]!.error).toMatch(/http: server gave HTTP response to HTTPS client/);
    for (const v of b.verdicts) {
      expect(v.verdict).toBe('websocket-broken');
      expect(v.kubectl?.find((k) => k.client === '1.31-1.37')).toMatchObject({ outcome: 'breaks' });
      expect(v.diagnosis.map((d) => d.code)).not.toContain('hop-refused-upgrade');
    }
  });

  it('publishes NodesProbed and NodesFailing per operation × transport, no Node dimension', () => {
    const datums = perNodeDatums(report);
    expect(datums).toHaveLength(8);
    for (const d of datums) expect(Object.keys(d.dimensions).sort()).toEqual(['Cluster', 'Location', 'Operation', 'Transport']);
    const v = (name: string, op: string, t: string) =>
      datums.find((d) => d.name === name && d.dimensions.Operation === op && d.dimensions.Transport === t)!.value;
    expect([v('NodesProbed', 'exec', 'websocket'), v('NodesFailing', 'exec', 'websocket'), v('NodesFailing', 'exec', 'spdy')]).toEqual([5, 4, 3]);
  });

  it('real kubectl 1.35 agrees on which nodes break a quick exec and port-forward', async () => {
    const breaks: string[] = [];
    for (const n of report.nodes) {
      const r = await runKubectl('1.35', ['--kubeconfig', lab.kubeconfig, 'exec', n.pod, '--', 'echo', 'hi']);
      if (r.code !== 0 || r.stdout !== 'hi\n') breaks.push(n.node);
    }
    // Our hold-0 verdicts: the nodes whose exec (over kubectl's transport, WebSocket first with fallback) fails.
    const ours = report.nodes
      .filter(
        (n) =>
          n.report.verdicts.find((v) => v.operation === 'exec' && v.holdSeconds === 0)!.kubectl!.find((k) => k.client === '1.31-1.37')!.outcome === 'breaks',
      )
      .map((n) => n.node);
    expect(breaks).toEqual(['node-b', 'node-c']);
    expect(ours).toEqual(breaks);
    const b = await runKubectl('1.35', ['--kubeconfig', lab.kubeconfig, 'exec', 'probe-node-node-b', '--', 'echo', 'hi']);
    expect(b.stderr).toMatch(/server gave HTTP response to HTTPS client/);

    const pfBreaks: string[] = [];
    for (const n of report.nodes) {
      try {
        const { value } = await withKubectlPortForward('1.35', ['--kubeconfig', lab.kubeconfig, `pod/${n.pod}`, '0:8080'], {}, (port) =>
          tcpEcho(port, Buffer.from('through the node\n'), '127.0.0.1', 5_000),
        );
        if (value.toString() !== 'through the node\n') pfBreaks.push(n.node);
      } catch {
        pfBreaks.push(n.node);
      }
    }
    const oursPf = report.nodes
      .filter(
        (n) =>
          n.report.verdicts.find((v) => v.operation === 'portforward' && v.holdSeconds === 0)!.kubectl!.find((k) => k.client === '1.31-1.37')!.outcome ===
          'breaks',
      )
      .map((n) => n.node);
    expect(pfBreaks).toEqual(['node-b', 'node-c']);
    expect(oursPf).toEqual(pfBreaks);
  }, 90_000);

  it("the kubelet leg's fault after the 101 is named for attach and terminal sessions as for exec, and real kubectl 1.35 attach breaks there too", async () => {
    // One node's pod, at hold 0, with a short echo timeout: the kubelet leg's answer comes at once.
    const onNodeB = async (...extra: string[]) =>
      JSON.parse(
        (await cli(['run', '--kubeconfig', lab.kubeconfig, '--pod', 'probe-node-node-b', '--hold', '0s', '--echo-timeout', '2000', '-o', 'json', ...extra]))
          .stdout,
      );
    const doc = await onNodeB('--ops', 'attach');
    const ws = doc.results.find((x: { transport: string }) => x.transport === 'websocket');
    expect(ws).toMatchObject({ operation: 'attach', upgrade: { ok: true, status: 101 }, errorCode: 'STREAM_ERROR' });
    expect(doc.verdicts.map((v: { verdict: string }) => v.verdict)).toEqual(['websocket-broken']);
    expect(doc.verdicts[0].diagnosis.map((d: { code: string }) => d.code)).toContain('stream-error-after-upgrade');
    expect(doc.verdicts[0].kubectl.find((k: { client: string }) => k.client === '1.31-1.37').outcome).toBe('breaks');
    const k = await runKubectl('1.35', ['--kubeconfig', lab.kubeconfig, 'attach', '-i', 'probe-node-node-b'], { stdin: 'hi\n', timeoutMs: 20_000 });
    expect([k.code === 0, k.stderr]).toEqual([false, expect.stringMatching(/server gave HTTP response to HTTPS client/)]);
    // Terminal sessions (exec -it, attach -it) meet the same fault the same way.
    const t = await onNodeB('--ops', 'exec,attach', '--tty');
    for (const v of t.verdicts) {
      expect([v.operation, v.holdShape, v.verdict]).toEqual([v.operation, 'tty', 'websocket-broken']);
      expect(v.diagnosis.map((d: { code: string }) => d.code)).toContain('stream-error-after-upgrade');
    }
    expect(t.verdicts.map((v: { operation: string }) => v.operation)).toEqual(['exec', 'attach']);
  }, 60_000);

  it('the manifest: a DaemonSet labelled as run --per-node looks for, and the RBAC to find it and read nodes', async () => {
    const r = await cli(['manifest', '--per-node', '--tolerate-all']);
    const docs = YAML.parseAllDocuments(r.stdout).map((d) => d.toJSON());
    const ds = docs.find((d) => d.kind === 'DaemonSet');
    expect(ds.spec.template.metadata.labels[NODE_TARGET_LABEL.key]).toBe(NODE_TARGET_LABEL.value);
    expect(ds.spec.selector.matchLabels).toEqual(ds.spec.template.metadata.labels);
    expect(ds.spec.template.spec.tolerations).toEqual([{ operator: 'Exists' }]);
    expect(ds.spec.template.spec.containers.map((c: { name: string }) => c.name)).toEqual(['main', 'echo', 'tty']);
    const nodes = docs.find((d) => d.kind === 'ClusterRole' && d.metadata.name === 'kube-stream-probe-nodes');
    expect(nodes.rules).toEqual([{ apiGroups: [''], resources: ['nodes'], verbs: ['get'] }]);
    const role = docs.find((d) => d.kind === 'Role' && d.metadata.name === 'kube-stream-probe-per-node');
    expect(role.rules).toContainEqual({ apiGroups: [''], resources: ['pods/exec', 'pods/portforward', 'pods/attach'], verbs: ['get', 'create'] });
    expect((await cli(['manifest', '--tolerate-all'])).code).toBe(2);
  });
});

describe('run --per-node with --transfer and --hold-shape', () => {
  it('probes each node without transfers or shaped holds (they are the main target questions), and says what it probed', async () => {
    const plain = await startEmulatorWithKubeconfig({ nodes: [{ name: 'node-a' }, { name: 'node-b' }] });
    try {
      const r = await cli([
        'run',
        '--kubeconfig',
        plain.kubeconfig,
        '--per-node',
        '--transfer',
        '1MiB',
        '--hold',
        '0s,1s',
        '--hold-shape',
        'silent,output',
        '-o',
        'json',
      ]);
      const doc = JSON.parse(r.stdout) as PerNodeReport;
      expect(doc.nodes.map((n) => n.node)).toEqual(['node-a', 'node-b']);
      for (const n of doc.nodes) {
        expect(n.report.results.length).toBeGreaterThan(0);
        expect(n.report.results.filter((x) => x.transferBytes || x.holdShape)).toEqual([]);
      }
    } finally {
      await plain.stop();
    }
  }, 60_000);
});
