/**
 * `manifest --runner cronjob`: every document checked against Kubernetes' OpenAPI schemas (kubernetes-models,
 * generated from Kubernetes 1.27's OpenAPI; the PrometheusRule against prometheus-operator's CRD schema), the
 * restricted Pod Security fields and the CronJob's own rules; then the CronJob's container arguments, with
 * `$(VAR)` expanded from the ConfigMap as the kubelet does, run through the runner image's entry point
 * (functions/runner.ts, built by the task-image test) against the emulator, pushing to a real Pushgateway.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import YAML from 'yaml';
import { runner } from '../../functions/runner.js';
import { startEmulatorWithKubeconfig, type EmulatorWithKubeconfig } from '../../lab/emulator/kubeconfig.js';
import { promtool, startPushgateway } from '../../lab/prometheus.js';
import type { RealHop } from '../../lab/real-hops/process-hop.js';
import { RUNNER_NAME } from '../../src/cli/runner-manifest.js';
import { taskRunSeconds } from '../../src/config/lambda-limits.js';
import { grafanaDashboard } from '../../src/metrics/grafana-dashboard.js';
import { prometheusRules } from '../../src/metrics/prometheus-rules.js';
import { PROMETHEUS_METRICS } from '../../src/metrics/prometheus.js';
import { cli } from '../helpers/cli.js';
import { requireHop } from '../helpers/hops.js';
import { expandArgs, validateDocument } from '../helpers/kube-schemas.js';

type Doc = { apiVersion: string; kind: string; metadata: { name: string; namespace?: string; labels?: Record<string, string> }; [k: string]: any };
const validate = validateDocument;

const FLAGS = ['--runner', 'cronjob', '--runner-image', 'registry.example/ksp-runner:1.0', '--cluster', 'prod-eu'];
async function manifest(extra: string[], pushgateway = 'http://pushgateway.monitoring:9091'): Promise<Doc[]> {
  const r = await cli(['manifest', ...FLAGS, '--pushgateway', pushgateway, ...extra]);
  expect(r.stderr).toBe('');
  expect(r.code).toBe(0);
  return YAML.parseAllDocuments(r.stdout).map((d) => d.toJS() as Doc);
}
const find = (docs: Doc[], kind: string, name = RUNNER_NAME) => docs.find((d) => d.kind === kind && d.metadata.name === name)!;

describe('manifest --runner cronjob', () => {
  it("every document passes Kubernetes' OpenAPI schemas (the PrometheusRule its CRD's), and a broken CronJob does not", async () => {
    const docs = await manifest(['--per-node', '--prometheus-rule', '--mesh', 'istio']);
    expect(docs.map((d) => d.kind).sort()).toEqual(
      [
        'ClusterRole',
        'ClusterRole',
        'ClusterRoleBinding',
        'ClusterRoleBinding',
        'ConfigMap',
        'CronJob',
        'CronJob',
        'DaemonSet',
        'Namespace',
        'PrometheusRule',
        'Role',
        'Role',
        'RoleBinding',
        'RoleBinding',
        'ServiceAccount',
        'StatefulSet',
      ].sort(),
    );
    for (const d of docs) expect(() => validate(d), `${d.kind} ${d.metadata.name}`).not.toThrow();
    const broken = structuredClone(find(docs, 'CronJob'));
    broken.spec.concurrencyPolicy = 'Never';
    delete broken.spec.jobTemplate;
    expect(() => validate(broken)).toThrow(/concurrencyPolicy|jobTemplate/);
  });

  it('the CronJob: Forbid, no retries, a deadline from the longest hold, restricted Pod Security, the Role bound to its service account', async () => {
    const docs = await manifest(['--hold', '0s,65s']);
    const cron = find(docs, 'CronJob');
    expect(cron.spec).toMatchObject({ schedule: '*/5 * * * *', concurrencyPolicy: 'Forbid', startingDeadlineSeconds: 150 });
    const job = cron.spec.jobTemplate.spec;
    expect(job.backoffLimit).toBe(0);
    expect(job.activeDeadlineSeconds).toBe(taskRunSeconds(65) + 60);
    const pod = job.template.spec;
    expect(pod.serviceAccountName).toBe(RUNNER_NAME);
    expect(pod.restartPolicy).toBe('Never');
    // Pod Security "restricted" (kubernetes.io/docs/concepts/security/pod-security-standards): what it requires.
    const sc = pod.containers[0].securityContext;
    expect(sc).toMatchObject({
      allowPrivilegeEscalation: false,
      runAsNonRoot: true,
      capabilities: { drop: ['ALL'] },
      seccompProfile: { type: 'RuntimeDefault' },
    });
    expect(find(docs, 'Namespace', 'kube-stream-probe').metadata.labels?.['pod-security.kubernetes.io/enforce']).toBe('restricted');
    for (const b of docs.filter((d) => d.kind.endsWith('Binding')))
      expect(b.subjects).toEqual([{ kind: 'ServiceAccount', name: RUNNER_NAME, namespace: 'kube-stream-probe' }]);
    expect(pod.containers[0].args).toContain('--exit-zero-on-finding');
    expect(find(docs, 'ConfigMap').data).toMatchObject({ KSP_CLUSTER: 'prod-eu', KSP_LOCATION: 'in-cluster', KSP_HOLD: '0s,65s' });
  });

  it('meshes: Istio by label with a native sidecar; Linkerd by annotation with a native sidecar; none by default', async () => {
    const meta = async (mesh: string[]) => find(await manifest(mesh), 'CronJob').spec.jobTemplate.spec.template.metadata;
    expect(await meta(['--mesh', 'istio'])).toMatchObject({
      labels: { 'sidecar.istio.io/inject': 'true' },
      annotations: { 'sidecar.istio.io/nativeSidecar': 'true' },
    });
    expect((await meta(['--mesh', 'linkerd'])).annotations).toEqual({
      'linkerd.io/inject': 'enabled',
      'config.beta.linkerd.io/proxy-enable-native-sidecar': 'true',
    });
    const plain = await meta([]);
    expect(plain.annotations).toEqual({});
    expect(Object.keys(plain.labels).some((k) => k.includes('istio'))).toBe(false);
  });

  it('the PrometheusRule is the rules promtool replays, for this schedule, and promtool accepts it', async () => {
    const docs = await manifest(['--prometheus-rule', '--every', '10m', '--hold', '0s,120s']);
    const rule = find(docs, 'PrometheusRule', 'kube-stream-probe');
    expect(rule.spec).toEqual(JSON.parse(JSON.stringify(prometheusRules([{ intervalSeconds: 600, holdsSeconds: [0, 120] }]))));
    expect(find(docs, 'CronJob').spec.schedule).toBe('*/10 * * * *');
    const check = await requireHop(async () => {
      const { mkdtempSync, writeFileSync } = await import('node:fs');
      const { join } = await import('node:path');
      const { tmpdir } = await import('node:os');
      const f = join(mkdtempSync(join(tmpdir(), 'ksp-prule-')), 'rules.yml');
      writeFileSync(f, YAML.stringify(rule.spec));
      return promtool(['check', 'rules', f]);
    });
    if (check) expect(check.stdout).toMatch(/SUCCESS: 8 rules found/);
  });

  it("--grafana-dashboard: the dashboard in a ConfigMap for Grafana's sidecar; --dashboard-json prints it alone", async () => {
    const docs = await manifest(['--grafana-dashboard', '--per-node']);
    const cm = find(docs, 'ConfigMap', `${RUNNER_NAME}-dashboard`);
    expect(() => validate(cm)).not.toThrow();
    expect(cm.metadata.labels).toMatchObject({ grafana_dashboard: '1' });
    expect(JSON.parse(cm.data['kube-stream-probe.json'])).toEqual(JSON.parse(JSON.stringify(grafanaDashboard({ perNode: true }))));
    expect(docs.filter((d) => d.kind === 'ConfigMap')).toHaveLength(2);
    const alone = await cli(['manifest', '--dashboard-json']);
    expect(alone.code).toBe(0);
    expect(JSON.parse(alone.stdout)).toEqual(JSON.parse(JSON.stringify(grafanaDashboard())));
    expect((await cli(['manifest', '--dashboard-json', '--namespace', 'x'])).stderr).toMatch(/--dashboard-json prints only the dashboard: drop --namespace/);
    expect((await cli(['manifest', '--grafana-dashboard'])).stderr).toMatch(/--grafana-dashboard is a runner flag/);
  });

  it("--runner serve: Deployment, Service, NetworkPolicy and ServiceMonitor pass their schemas (the ServiceMonitor its CRD's); the scrape carries the plan and a timeout the run fits", async () => {
    const r = await cli([
      'manifest',
      '--runner',
      'serve',
      '--runner-image',
      'registry.example/ksp-serve:1.0',
      '--cluster',
      'prod-eu',
      '--hold',
      '0s,30s',
      '--every',
      '1m',
      '--service-monitor',
      '--prometheus-rule',
    ]);
    expect(r.stderr).toBe('');
    const docs = YAML.parseAllDocuments(r.stdout).map((d) => d.toJS() as Doc);
    for (const d of docs) expect(() => validate(d), `${d.kind} ${d.metadata.name}`).not.toThrow();
    const monitor = find(docs, 'ServiceMonitor', 'kube-stream-probe-serve') as any;
    expect(monitor.spec.endpoints).toEqual([
      {
        port: 'http-metrics',
        path: '/probe',
        params: {
          ops: ['exec,portforward'],
          transports: ['websocket,spdy'],
          keepalive: ['kubectl'],
          hold: ['0s,30s'],
          transfer: ['off'],
          hold_shape: ['silent'],
          transfer_shape: ['echo'],
        },
        interval: '60s',
        scrapeTimeout: '36s',
      },
    ]);
    expect(r.stdout).not.toMatch(/^# The Prometheus job/m);
    const serve = find(docs, 'Deployment', 'kube-stream-probe-serve') as any;
    expect(serve.spec.template.spec.containers[0].args.join(' ')).toBe('--listen 0.0.0.0:9465 --location in-cluster --cluster-name prod-eu --max-hold 30s');
    expect((await cli(['manifest', '--runner', 'serve', '--runner-image', 'a/b:1'])).stderr).toMatch(/--runner serve needs --cluster NAME/);
    const policy = find(docs, 'NetworkPolicy', 'kube-stream-probe-serve') as any;
    expect(policy.spec.ingress).toEqual([{ from: [{ namespaceSelector: {} }], ports: [{ port: 9465, protocol: 'TCP' }] }]);
    const tooLong = await cli(['manifest', '--runner', 'serve', '--runner-image', 'a/b:1', '--cluster', 'prod-eu', '--hold', '2m', '--every', '1m']);
    expect(tooLong.stderr).toMatch(/a scrape holding 120 s needs a 126 s scrape_timeout, longer than --every 1m/);
    expect((await cli(['manifest', '--runner', 'serve', '--runner-image', 'a/b:1', '--cluster', 'prod-eu', '--pushgateway', 'http://x:9091'])).stderr).toMatch(
      /--pushgateway is for --runner cronjob, not --runner serve/,
    );
  });

  it('without plan flags the runner runs what `manifest --help` says it does (0s,65s: a scheduled run crosses a 60 s idle timeout)', async () => {
    const help = (await cli(['manifest', '--help'])).stdout;
    const said = /the plan, as for `run` \(default ([^)]+)\)/.exec(help.replace(/\s+/g, ' '))![1]!.split('; ');
    const [ops, transports, keepalive, holds, transfer, shapes] = said;
    const data = find(await manifest([]), 'ConfigMap').data;
    expect(data).toMatchObject({ KSP_OPS: ops, KSP_KEEPALIVE: keepalive, KSP_HOLD: holds, KSP_HOLD_SHAPE: shapes });
    expect([transports, transfer, data.KSP_TRANSPORTS, data.KSP_TRANSFER]).toEqual(['both', 'no transfer', 'websocket,spdy', 'off']);
    expect(holds).toBe('0s,65s');
  });

  it('usage: the image, the Pushgateway and the cluster name are required; schedules a CronJob cannot keep are refused', async () => {
    const r = async (args: string[]) => cli(['manifest', ...args]);
    expect((await r(['--runner', 'cronjob', '--pushgateway', 'http://x:9091', '--cluster', 'c'])).stderr).toMatch(
      /needs --runner-image REF: build it with `docker buildx build --target runner/,
    );
    expect((await r([...FLAGS])).stderr).toMatch(/needs --pushgateway URL/);
    expect((await r(['--runner', 'cronjob', '--runner-image', 'a/b:1', '--pushgateway', 'http://x:9091'])).stderr).toMatch(/needs --cluster NAME/);
    // All that is missing, named at once: not one refusal per try.
    const none = await r(['--runner', 'cronjob']);
    expect(none.code).toBe(2);
    expect(none.stderr).toMatch(
      /needs --runner-image REF: .*; and --pushgateway URL \(where its metrics go\); and --cluster NAME: this cluster's name in the metrics/,
    );
    const odd = await r([...FLAGS, '--pushgateway', 'http://x:9091', '--every', '7m']);
    expect(odd.code).toBe(2);
    expect(odd.stderr).toMatch(/--every 7m: a CronJob runs at even steps/);
    expect((await r([...FLAGS, '--pushgateway', 'http://x:9091', '--hold', '30m'])).stderr).toMatch(/longer than four runs of --every 5m/);
    expect((await r(['--pushgateway', 'http://x:9091'])).stderr).toMatch(/--pushgateway is a runner flag: it needs --runner cronjob/);
    expect((await r([...FLAGS, '--pushgateway', 'http://x:9091', '--group', 'g'])).stderr).toMatch(/binds the Role to its own service account/);
  });

  describe("the CronJob's command, run as the kubelet would start it", () => {
    let gateway: RealHop | undefined;
    let clean: EmulatorWithKubeconfig;
    let refused: EmulatorWithKubeconfig;
    beforeAll(async () => {
      gateway = await requireHop(startPushgateway);
      clean = await startEmulatorWithKubeconfig({});
      refused = await startEmulatorWithKubeconfig({ faults: { rejectWebSocket: 400 } });
    }, 60_000);
    afterAll(async () => Promise.all([gateway?.stop(), clean?.stop(), refused?.stop()]));

    async function runJob(lab: EmulatorWithKubeconfig, location: string) {
      const docs = await manifest(['--hold', '0s', '--location', location], `http://127.0.0.1:${gateway!.port}`);
      const container = find(docs, 'CronJob').spec.jobTemplate.spec.template.spec.containers[0];
      const args = expandArgs(container.args, find(docs, 'ConfigMap').data);
      expect(args.join(' ')).not.toMatch(/\$\(/);
      let stdout = '';
      let stderr = '';
      // In the pod the service account is the credential; here the lab's kubeconfig stands in for it.
      const code = await runner([...args, '--kubeconfig', lab.kubeconfig, '--no-preflight'], {
        out: (t) => void (stdout += t),
        err: (t) => void (stderr += t),
        interactive: false,
        env: { PATH: process.env.PATH, HOME: '/nonexistent' },
      });
      const exposition = await (await fetch(`http://127.0.0.1:${gateway!.port}/metrics`)).text();
      return { code, stdout, stderr, exposition };
    }

    it('a clean path: exit 0, the run pushed under the cluster name, not "in-cluster"', async () => {
      if (!gateway) return;
      const r = await runJob(clean, 'ops-pods');
      expect(r.stderr).toMatch(/pushed \d+ samples/);
      expect(r.code).toBe(0);
      expect(JSON.parse(r.stdout).cluster).toBe('prod-eu');
      expect(r.exposition).toMatch(new RegExp(`${PROMETHEUS_METRICS.KubectlWorks.name}\\{[^}]*cluster="prod-eu"[^}]*location="ops-pods"[^}]*\\} 1`));
    });

    it('a hop refusing WebSocket: a finding, so exit 0 (the Job succeeds) and silent_fallback 1 in the Pushgateway', async () => {
      if (!gateway) return;
      const r = await runJob(refused, 'ops-pods-refused');
      expect(r.code).toBe(0);
      expect(JSON.parse(r.stdout).verdicts.map((v: { verdict: string }) => v.verdict)).not.toContain('clean');
      expect(r.exposition).toMatch(new RegExp(`${PROMETHEUS_METRICS.SilentFallback.name}\\{[^}]*location="ops-pods-refused"[^}]*operation="exec"[^}]*\\} 1`));
    });

    it('the runner image runs only `run` and `serve`', async () => {
      let err = '';
      const code = await runner(['demo'], { out: () => {}, err: (t) => void (err += t), interactive: false, env: {} });
      expect(code).toBe(2);
      expect(err).toMatch(/only "run" and "serve" are in this image \(got "demo"\)/);
    });
  });
});
