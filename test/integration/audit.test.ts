/**
 * `kube-stream-probe audit` against the emulator playing a 1.33, a 1.35 and a
 * 1.36 API server: the gates each version has, the counters read only where
 * they exist (absent is not zero), each RBAC shape (get-only, create-only,
 * both, none), /metrics and the RBAC lists forbidden, local kubectl clients
 * behind an https:// proxy, the scan fixture's toggles with file:line, and
 * the verdict with its fixes in order.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import YAML from 'yaml';
import { emulatorKubeconfig, startEmulatorWithKubeconfig, type EmulatorWithKubeconfig } from '../../lab/emulator/kubeconfig.js';
import type { EmulatorOptions } from '../../lab/emulator/options.js';
import { KUBECTL_DIR } from '../../lab/kubectl.js';
import type { AuditReport } from '../../src/audit/audit.js';
import { cli } from '../helpers/cli.js';

const FIXTURE = 'lab/fixtures/audit-scan';
const labs: EmulatorWithKubeconfig[] = [];
let dir: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'ksp-audit-'));
});
afterAll(async () => {
  await Promise.all(labs.map((l) => l.stop()));
  rmSync(dir, { recursive: true, force: true });
});

async function lab(options: EmulatorOptions): Promise<EmulatorWithKubeconfig> {
  const l = await startEmulatorWithKubeconfig({ tls: true, token: 'audit-token-123456', ...options });
  labs.push(l);
  return l;
}

async function audit(
  l: EmulatorWithKubeconfig,
  args: string[] = [],
  env: NodeJS.ProcessEnv = {},
): Promise<{ code: number; report: AuditReport; stderr: string }> {
  // Held 0 s unless a test says otherwise: the default plan's 65 s hold is checked through a real nginx
  // (test/lab/audit-nginx.test.ts).
  const holds = args.includes('--hold') ? [] : ['--hold', '0s'];
  const r = await cli(['audit', '--kubeconfig', l.kubeconfig, '-o', 'json', ...holds, ...args], { PATH: '/nonexistent', ...env });
  return { code: r.code, report: JSON.parse(r.stdout), stderr: r.stderr };
}

const gate = (a: AuditReport, name: string) => a.gates.find((g) => g.name === name);
const counter = (a: AuditReport, name: string) => a.counters.find((c) => c.name === name)!;

describe('the A/B with --transfer', () => {
  it('a lost tail is a "transfers" fix, with the cp row as its evidence, and not ready', async () => {
    const l = await lab({ serverVersion: 'v1.33.1', faults: { truncateTailBytes: 4096 } });
    const { code, report } = await audit(l, ['--transfer', '1MiB', '--ops', 'exec']);
    expect(code).toBe(1);
    const fix = report.fixes.find((f) => f.category === 'transfers');
    expect(fix?.evidence).toMatch(
      /^exec kubectl cp 1MiB: The (WebSocket|SPDY) exec transfer of 1 MiB ended with exit status 0 before its last 4096 bytes came back/,
    );
    expect(fix?.what).toContain('unexpected EOF');
  });
});

describe('the A/B names the container as kubectl does', () => {
  it('a default audit sends container=main on every exec (the target has three) and its A/B is clean', async () => {
    const l = await lab({ serverVersion: 'v1.33.1' });
    const { report } = await audit(l, ['--ops', 'exec']);
    const execs = l.emulator.upgrades.filter((u) => u.operation === 'exec');
    expect(execs.length).toBeGreaterThan(0);
    for (const u of execs) expect([new URLSearchParams(u.query).get('container'), u.status]).toEqual(['main', 101]);
    expect(report.ab?.verdicts.every((v) => v.verdict === 'clean')).toBe(true);
  });
});

describe('server versions: gates and counters, read per version', () => {
  it('1.33: translation and tunnel gates on (beta), the 1.35/1.36 gates absent; the two counters read, the 1.36 one not (absent is not zero)', async () => {
    const l = await lab({ serverVersion: 'v1.33.4' });
    await cli(['run', '--kubeconfig', l.kubeconfig, '--keepalive', 'kubectl', '-o', 'json']); // one WebSocket exec and one port-forward for the counters
    const { code, report } = await audit(l, ['--no-ab']);
    expect(report.server).toMatchObject({ version: 'v1.33.4', minor: 33 });
    expect(gate(report, 'TranslateStreamCloseWebsocketRequests')).toMatchObject({ enabled: true, stage: 'BETA' });
    expect(gate(report, 'PortForwardWebsockets')).toMatchObject({ enabled: true, stage: 'BETA' });
    expect(gate(report, 'AuthorizePodWebsocketUpgradeCreatePermission')).toMatchObject({ enabled: null });
    expect(gate(report, 'ExtendWebSocketsToKubelet')).toMatchObject({ enabled: null });
    expect(counter(report, 'apiserver_stream_translator_requests_total')).toMatchObject({ state: 'read', total: 1, failed: 0, byCode: { '101': 1 } });
    expect(counter(report, 'apiserver_stream_tunnel_requests_total')).toMatchObject({ state: 'read', total: 1, failed: 0 });
    expect(counter(report, 'apiserver_websocket_streaming_requests_total')).toMatchObject({ state: 'not-in-version', total: null });
    expect(report.verdict).toBe('ready');
    expect(code).toBe(0);
  });

  it('1.35: the create rule is on; failed WebSocket upgrades the server counted are reported as failures', async () => {
    const l = await lab({ serverVersion: 'v1.35.0', faults: { rejectWebSocket: 400 } });
    await cli(['run', '--kubeconfig', l.kubeconfig, '--keepalive', 'kubectl', '-o', 'json']);
    const { report } = await audit(l, ['--no-ab']);
    expect(gate(report, 'AuthorizePodWebsocketUpgradeCreatePermission')).toMatchObject({ enabled: true, stage: 'BETA' });
    // The run's refused WebSocket exec, and its retry a second later on a fresh connection (src/probe/retry.ts).
    expect(counter(report, 'apiserver_stream_translator_requests_total')).toMatchObject({ state: 'read', failed: 2, byCode: { '400': 2 } });
    expect(report.verdict).toBe('ready-after-fixes');
    expect(report.fixes[0]).toMatchObject({ category: 'upgrade passthrough' });
  });

  it('1.36: ExtendWebSocketsToKubelet, and the 1.36 counter read by subresource and proxy type', async () => {
    const l = await lab({ serverVersion: 'v1.36.0' });
    const { report } = await audit(l); // the A/B runs, then… the counters were read before it: zero
    expect(gate(report, 'ExtendWebSocketsToKubelet')).toMatchObject({ enabled: true });
    const c = counter(report, 'apiserver_websocket_streaming_requests_total');
    expect(c).toMatchObject({ state: 'read', total: 0, failed: null });
    expect(Object.keys(c.bySubresource ?? {}).sort()).toEqual([
      'attach/proxied_to_kubelet',
      'attach/translated_at_apiserver',
      'exec/proxied_to_kubelet',
      'exec/translated_at_apiserver',
      'portforward/proxied_to_kubelet',
      'portforward/translated_at_apiserver',
    ]);
    expect(report.ab?.verdicts.every((v) => v.verdict === 'clean')).toBe(true);
    const again = await audit(l, ['--no-ab']);
    // kubectl's WebSocket exec and an SDK client's (both v5: translated), kubectl's tunnel; the SDK client's legacy
    // port-forward goes to the kubelet by the plain proxy, which this counter does not count.
    expect(counter(again.report, 'apiserver_websocket_streaming_requests_total').bySubresource).toMatchObject({
      'exec/translated_at_apiserver': 2,
      'portforward/translated_at_apiserver': 1,
    });
  });

  it("1.36 with mixed kubelets: each kubelet's pass-through counter read through nodes/proxy where it exists, never below 1.36", async () => {
    const nodes = [
      { name: 'node-a', kubeletVersion: 'v1.35.2' },
      { name: 'node-b', kubeletVersion: 'v1.36.0', declaredFeatures: ['ExtendWebSocketsToKubelet'] },
      { name: 'node-c', kubeletVersion: 'v1.36.0' },
    ];
    const l = await lab({ serverVersion: 'v1.36.0', nodes });
    const run = await cli(['run', '--per-node', '--kubeconfig', l.kubeconfig, '--hold', '0s', '-o', 'json']); // traffic to every node's target
    expect(run.code).toBe(0);
    const { report } = await audit(l, ['--no-ab']);
    expect(report.kubelets.state).toBe('read');
    expect(report.kubelets.nodes).toEqual([
      { node: 'node-a', kubeletVersion: 'v1.35.2', state: 'not-in-version', total: null, bySubresource: {} },
      // Only node-b declares the feature: the API server passed its WebSocket exec and port-forward to its kubelet.
      { node: 'node-b', kubeletVersion: 'v1.36.0', state: 'read', total: 2, bySubresource: { exec: 1, portforward: 1 } },
      { node: 'node-c', kubeletVersion: 'v1.36.0', state: 'not-seen', total: null, bySubresource: {} },
    ]);
    // The API server's own counter agrees: node-b's streams as proxied_to_kubelet, the rest translated.
    const c = counter(report, 'apiserver_websocket_streaming_requests_total').bySubresource!;
    expect([c['exec/proxied_to_kubelet'], c['portforward/proxied_to_kubelet']]).toEqual([1, 1]);
    expect(c['exec/translated_at_apiserver']).toBeGreaterThanOrEqual(2);
    const text = await cli(['audit', '--kubeconfig', l.kubeconfig, '--no-ab'], { PATH: '/nonexistent' });
    expect(text.stdout).toMatch(/node-b\s+v1\.36\.0\s+yes\s+2\s+exec=1 portforward=1/);
    expect(text.stdout).toMatch(/node-a\s+v1\.35\.2\s+no: only from 1\.36 \(absent is not zero\)/);
  });

  it('nodes/proxy forbidden: the kubelet counters are not read, with the warning that it is as strong as exec; below 1.36 it is never asked', async () => {
    const l = await lab({ serverVersion: 'v1.36.0', nodes: [{ name: 'node-a' }], nodeProxyForbidden: true });
    const { report } = await audit(l, ['--no-ab']);
    expect(report.kubelets.state).toBe('forbidden');
    expect(report.kubelets.detail).toMatch(/get nodes\/proxy .*as strong as exec on every pod/);
    expect(report.verdict).toBe('ready'); // not a finding to fix by granting it
    const old = await lab({ serverVersion: 'v1.33.4', nodeProxyForbidden: true });
    const before = await audit(old, ['--no-ab']);
    expect(before.report.kubelets).toMatchObject({ state: 'read', nodes: [{ state: 'not-in-version' }] });
  });

  it('/metrics forbidden: said so, with what to grant; nothing concluded from its absence', async () => {
    const l = await lab({ metricsForbidden: true });
    const { report } = await audit(l, ['--no-ab']);
    expect(report.metrics).toMatchObject({ state: 'forbidden' });
    expect(report.metrics.detail).toMatch(/get the non-resource URL \/metrics/);
    expect(report.gates).toEqual([]);
    expect(report.counters).toEqual([]);
  });
});

describe('RBAC shapes', () => {
  const role = (name: string, verbs: string[], resources = ['pods/exec', 'pods/attach', 'pods/portforward']) => ({
    metadata: { name },
    rules: [{ apiGroups: [''], resources, verbs }],
  });
  const binding = (name: string, subject: object) => ({ metadata: { name, namespace: 'team-a' }, roleRef: { kind: 'ClusterRole', name }, subjects: [subject] });

  it('get-only breaks on 1.35+ (and never worked over SPDY), create-only works only by falling back, both is fine, none is not listed; subjects named', async () => {
    const l = await lab({
      serverVersion: 'v1.35.0',
      rbacObjects: {
        clusterRoles: [
          role('dev-get-only', ['get']),
          role('ops-create-only', ['create']),
          role('sre-both', ['get', 'create']),
          role('viewer', ['get', 'list'], ['pods', 'pods/log']),
          { metadata: { name: 'all' }, rules: [{ apiGroups: ['*'], resources: ['*'], verbs: ['*'] }] },
        ],
        roleBindings: [
          binding('dev-get-only', { kind: 'Group', name: 'developers' }),
          binding('ops-create-only', { kind: 'ServiceAccount', name: 'deployer', namespace: 'ci' }),
        ],
        clusterRoleBindings: [],
        roles: [],
      },
    });
    const { code, report } = await audit(l, ['--no-ab']);
    expect(report.rbac.state).toBe('read');
    expect(report.rbac.roles.map((r) => r.name).sort()).toEqual(['all', 'dev-get-only', 'ops-create-only', 'sre-both']);
    const byRole = (n: string) => report.rbac.findings.filter((f) => f.role === `ClusterRole ${n}`);
    expect(byRole('dev-get-only').map((f) => f.shape)).toEqual(['get-only', 'get-only', 'get-only']);
    expect(byRole('dev-get-only')[0]).toMatchObject({ subjects: ['Group developers'], fix: 'add create on pods/exec to ClusterRole dev-get-only' });
    expect(byRole('dev-get-only')[0]!.meaning).toMatch(/refused \(403\) on a 1\.35\+ server; SPDY never worked/);
    expect(byRole('ops-create-only')[0]).toMatchObject({ shape: 'create-only', subjects: ['ServiceAccount ci/deployer'] });
    expect(byRole('ops-create-only')[0]!.meaning).toMatch(
      /only by falling back to SPDY \(kubectl 1\.38, KEP-4006 GA, can no longer be forced onto SPDY\), and WebSocket-only clients fail/,
    );
    expect(byRole('sre-both')).toEqual([]);
    expect(byRole('all')).toEqual([]);
    expect(report.verdict).toBe('ready-after-fixes');
    expect(report.fixes.every((f) => f.category === 'RBAC')).toBe(true);
    expect(code).toBe(1);
  });

  it('the RBAC lists forbidden: said so, with the verbs needed', async () => {
    const l = await lab({ rbacListForbidden: true });
    const { report } = await audit(l, ['--no-ab']);
    expect(report.rbac).toMatchObject({ state: 'forbidden', roles: [], findings: [] });
    expect(report.rbac.detail).toMatch(/needs list on roles, clusterroles and their bindings/);
  });

  it('ready with the RBAC lists forbidden: the headline says RBAC unchecked, and why, never a bare READY', async () => {
    const l = await lab({ rbacListForbidden: true });
    const r = await cli(['audit', '--kubeconfig', l.kubeconfig, '--hold', '0s'], { PATH: '/nonexistent' });
    expect(r.stdout).toMatch(/^READY, RBAC UNCHECKED: nothing found that breaks .*; the cluster's roles could not be read \(.*needs list on roles/m);
    expect(r.stdout).not.toMatch(/^READY: /m);
  });
});

describe('clients, toggles, the A/B and the verdict', () => {
  it('the scan fixture: every toggle with file:line and value (Dockerfile, GitHub Actions, shell profile, manifest)', async () => {
    const l = await lab({});
    const { report } = await audit(l, ['--no-ab', '--scan', FIXTURE]);
    expect(report.toggles!.hits.map((h) => [h.file, h.line, h.toggle, h.value])).toEqual([
      [`${FIXTURE}/.bashrc`, 3, 'KUBECTL_REMOTE_COMMAND_WEBSOCKETS', 'false'],
      [`${FIXTURE}/.github/workflows/deploy.yml`, 7, 'KUBECTL_PORT_FORWARD_WEBSOCKETS', 'false'],
      [`${FIXTURE}/Dockerfile`, 3, 'KUBECTL_REMOTE_COMMAND_WEBSOCKETS', 'false'],
      [`${FIXTURE}/deploy/debug-pod.yaml`, 10, 'KUBECTL_PORT_FORWARD_WEBSOCKETS', 'false'], // `- name:`, its value on the next line
    ]);
    expect(report.verdict).toBe('ready-after-fixes');
    expect(report.fixes.map((f) => f.category)).toEqual(['toggles', 'toggles', 'toggles', 'toggles']);
  });

  it('local kubectl clients on PATH behind an https:// proxy-url: those below 1.33 work only by falling back', async () => {
    const l = await lab({});
    const doc = YAML.parse(emulatorKubeconfig(l.emulator, { proxyUrl: 'https://127.0.0.1:1' }));
    doc.users[0].user = { token: 'audit-token-123456' };
    const path = join(dir, 'kubeconfig-https-proxy');
    writeFileSync(path, YAML.stringify(doc));
    const r = await cli(['audit', '--kubeconfig', path, '-o', 'json', '--no-ab'], { PATH: KUBECTL_DIR });
    const report: AuditReport = JSON.parse(r.stdout);
    expect(report.clients.proxyScheme).toBe('https');
    const versions = report.clients.local.map((c) => c.version?.replace(/\.\d+$/, ''));
    expect(versions).toEqual(expect.arrayContaining(['v1.29', 'v1.30', 'v1.31', 'v1.32', 'v1.33']));
    const flagged = report.clients.findings.map((f) => /\(v1\.(\d+)/.exec(f)![1]).sort();
    expect(flagged).toEqual(expect.arrayContaining(['29', '30', '31', '32']));
    expect(flagged).not.toContain('33');
    // The proxy is unreachable, so the server could not be read: blocked, and said why.
    expect(report.verdict).toBe('blocked');
    expect(r.code).toBe(3);
  });

  it('the A/B included; a missing target blocks the verdict; the table names the verdict and the fixes; html is a page', async () => {
    const l = await lab({ serverVersion: 'v1.33.4', faults: { rejectWebSocket: 400 } });
    const ok = await audit(l);
    expect(ok.report.ab?.verdicts.map((v) => v.verdict)).toEqual(['websocket-broken', 'websocket-broken']);
    // The API server's own Status refused it (the lab's rejectWebSocket): its fix is at the API server, not a hop.
    expect(ok.report.fixes[0]).toMatchObject({ category: 'API server' });
    const blocked = await audit(l, ['--pod', 'nope']);
    expect(blocked.report.verdict).toBe('blocked');
    expect(blocked.report.blockedBecause[0]).toMatch(/could not measure the path: The pod default\/nope does not exist/);
    expect(blocked.code).toBe(3);
    const table = await cli(['audit', '--kubeconfig', l.kubeconfig, '--hold', '0s', '--scan', FIXTURE]);
    expect(table.stdout).toMatch(
      /READY AFTER FIXES: fix these first, most likely causes first; no idle timeout measured \(every hold was 0 s\) \(see below\)\.\nNot measured: idle timeouts \(every hold was 0 s\)\. .*\n  1\. \[upgrade passthrough\] find who gets non-101 answers/,
    );
    expect(table.stdout).toMatch(/\[toggles\] remove KUBECTL_REMOTE_COMMAND_WEBSOCKETS/);
    const html = await cli(['audit', '--kubeconfig', l.kubeconfig, '--hold', '0s', '-o', 'html']);
    expect(html.stdout).toMatch(/^<!doctype html>/);
    expect(html.stdout).toContain('<section class="audit">');
    expect(html.stdout).toContain('<p class="not-measured">Not measured: idle timeouts (every hold was 0 s).');
    expect(html.stdout).toContain('<section class="report"');
  });
});
