/**
 * `kube-stream-probe manifest --runner cronjob | kubectl apply -f -` is the whole install (issue 27): real
 * kubectl (the oldest and newest we test) applies it to the emulator, which stores objects as the API server
 * does and refuses what it refuses: unknown fields under kubectl's default `fieldValidation=Strict` (field names
 * from @kubernetes/client-node's OpenAPI-generated models), schema violations (kubernetes-models' schemas),
 * kinds it does not serve (the PrometheusRule without prometheus-operator's CRD).
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import YAML from 'yaml';
import { runner } from '../../functions/runner.js';
import { serveCommand } from '../../src/cli/serve-command.js';
import { startEmulatorWithKubeconfig, type EmulatorWithKubeconfig } from '../../lab/emulator/kubeconfig.js';
import { KUBECTL_VERSIONS, runKubectl } from '../../lab/kubectl.js';
import { startPushgateway } from '../../lab/prometheus.js';
import type { RealHop } from '../../lab/real-hops/process-hop.js';
import { PROMETHEUS_METRICS } from '../../src/metrics/prometheus.js';
import { cli } from '../helpers/cli.js';
import { requireHop } from '../helpers/hops.js';
import { expandArgs, KUBERNETES_SCHEMA } from '../helpers/kube-schemas.js';

type Doc = { apiVersion: string; kind: string; metadata: { name: string; namespace?: string; annotations?: Record<string, string> }; [k: string]: unknown };
const FLAGS = [
  '--runner',
  'cronjob',
  '--runner-image',
  'registry.example/ksp-runner:1.0',
  '--cluster',
  'prod-eu',
  '--pushgateway',
  'http://pushgateway.monitoring:9091',
];
const LAST_APPLIED = 'kubectl.kubernetes.io/last-applied-configuration';

async function manifest(extra: string[] = []): Promise<string> {
  const r = await cli(['manifest', ...FLAGS, ...extra]);
  expect(r.stderr).toBe('');
  expect(r.code).toBe(0);
  return r.stdout;
}
const docsOf = (yaml: string): Doc[] => YAML.parseAllDocuments(yaml).map((d) => d.toJS() as Doc);
/** `kubectl get`'s "kind.group/name" for a document. */
const ref = (d: Doc): string => {
  const group = d.apiVersion.includes('/') ? `.${d.apiVersion.split('/')[0]}` : '';
  return `${d.kind.toLowerCase()}${group}/${d.metadata.name}`;
};

/** A stored object without what the server and kubectl added: uid, versions, timestamps, status, last-applied. */
function asWritten(o: Doc): Doc {
  const { status: _s, metadata, ...rest } = structuredClone(o);
  const { uid: _u, resourceVersion: _r, creationTimestamp: _c, generation: _g, annotations, ...meta } = metadata as Doc['metadata'] & Record<string, unknown>;
  const { [LAST_APPLIED]: _l, ...own } = annotations ?? {};
  return { ...rest, metadata: { ...meta, ...(Object.keys(own).length > 0 ? { annotations: own } : {}) } } as Doc;
}

const FIRST = KUBECTL_VERSIONS[0];
const LAST = KUBECTL_VERSIONS[KUBECTL_VERSIONS.length - 1]!;

describe.each([FIRST, LAST])('kubectl %s apply -f - of the runner manifest', (version) => {
  let lab: EmulatorWithKubeconfig;
  const kubectl = (args: string[], stdin?: string) => runKubectl(version, ['--kubeconfig', lab.kubeconfig, ...args], { stdin, timeoutMs: 60_000 });

  beforeAll(async () => {
    lab = await startEmulatorWithKubeconfig({ objectSchema: KUBERNETES_SCHEMA });
  });
  afterAll(async () => lab?.stop());

  it('creates every document as written (server-validated: Strict), then finds them unchanged; delete -f removes them', async () => {
    const yaml = await manifest(['--per-node', '--grafana-dashboard']);
    const docs = docsOf(yaml);
    expect(docs.map((d) => d.kind)).toEqual(
      expect.arrayContaining(['Namespace', 'ServiceAccount', 'ConfigMap', 'CronJob', 'Role', 'RoleBinding', 'DaemonSet']),
    );

    const first = await kubectl(['apply', '-f', '-'], yaml);
    expect(first.stderr).toBe('');
    expect(first.code).toBe(0);
    expect(first.stdout.trim().split('\n')).toEqual(docs.map((d) => `${ref(d)} created`));
    // kubectl asked the server to validate, strictly, rather than validating itself.
    const posts = lab.emulator.restRequests.filter((r) => r.method === 'POST' && !r.path.includes('selfsubjectaccessreviews'));
    expect(posts).toHaveLength(docs.length);
    for (const p of posts) expect(p.path).toMatch(/[?&]fieldValidation=Strict(&|$)/);

    // What the server stored is what the manifest says, plus kubectl's last-applied record of it.
    for (const d of docs) {
      const stored = lab.emulator.objects.list(d.kind).find((o) => o.metadata?.name === d.metadata.name) as Doc | undefined;
      expect(stored, ref(d)).toBeDefined();
      expect(JSON.parse(stored!.metadata.annotations?.[LAST_APPLIED] ?? '{}')).toMatchObject({ kind: d.kind, metadata: { name: d.metadata.name } });
      expect(asWritten(stored!)).toEqual(d);
    }

    const again = await kubectl(['apply', '-f', '-'], yaml);
    expect(again.code).toBe(0);
    expect(again.stdout.trim().split('\n')).toEqual(docs.map((d) => `${ref(d)} unchanged`));

    const gone = await kubectl(['delete', '-f', '-'], yaml);
    expect(gone.stderr).toBe('');
    expect(gone.code).toBe(0);
    expect(gone.stdout.trim().split('\n')).toHaveLength(docs.length);
    await expect.poll(() => lab.emulator.objects.list('ConfigMap'), { timeout: 5_000 }).toEqual([]);
    expect(lab.emulator.objects.list('CronJob')).toEqual([]);
  });

  it('refuses what a real API server refuses: an unknown field (Strict), an invalid value, a namespace that does not exist', async () => {
    const docs = docsOf(await manifest());
    const cron = docs.find((d) => d.kind === 'CronJob')!;
    const ns = docs.find((d) => d.kind === 'Namespace')!;
    const apply = (d: Doc, ...flags: string[]) => kubectl(['apply', ...flags, '-f', '-'], YAML.stringify(d));

    const missingNs = await apply(cron);
    expect(missingNs.code).toBe(1);
    expect(missingNs.stderr).toContain(`namespaces "${cron.metadata.namespace}" not found`);
    expect((await apply(ns)).code).toBe(0);

    const typo = structuredClone(cron) as Doc & { spec: Record<string, unknown> };
    typo.spec.concurrencyPolicyy = 'Forbid';
    const strict = await apply(typo);
    expect(strict.code).toBe(1);
    expect(strict.stderr).toContain('CronJob in version "v1" cannot be handled as a CronJob: strict decoding error: unknown field "spec.concurrencyPolicyy"');
    expect(lab.emulator.objects.list('CronJob')).toEqual([]);

    const nested = structuredClone(cron) as any;
    nested.spec.jobTemplate.spec.template.spec.containers[0].imagePullPolicyy = 'Always';
    expect((await apply(nested)).stderr).toContain('unknown field "spec.jobTemplate.spec.template.spec.containers[0].imagePullPolicyy"');

    const invalid = structuredClone(cron) as any;
    invalid.spec.concurrencyPolicy = 'Sometimes';
    const bad = await apply(invalid);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toMatch(/CronJob\.batch "kube-stream-probe-runner" is invalid: spec\.concurrencyPolicy: Invalid value/);

    // --validate=false is fieldValidation=Ignore: the server drops the field, as a real one does.
    const ignored = await apply(typo, '--validate=false');
    expect(ignored.code).toBe(0);
    const stored = lab.emulator.objects.list('CronJob');
    expect(stored).toHaveLength(1);
    expect(stored[0]!.spec).not.toHaveProperty('concurrencyPolicyy');
    expect(stored[0]!.spec).toHaveProperty('concurrencyPolicy', 'Forbid');

    // --validate=warn: stored without the field, and kubectl shows the server's warning.
    expect((await kubectl(['delete', 'cronjob', '-n', cron.metadata.namespace!, cron.metadata.name])).code).toBe(0);
    const warned = await apply(typo, '--validate=warn');
    expect(warned.code).toBe(0);
    expect(warned.stderr).toContain('unknown field "spec.concurrencyPolicyy"');
    expect((await kubectl(['delete', '-f', '-'], YAML.stringify(ns))).code).toBe(0);
    await expect.poll(() => lab.emulator.objects.list('CronJob'), { timeout: 5_000 }).toEqual([]);
  });

  it('the PrometheusRule needs prometheus-operator: without its CRD kubectl says so and applies the rest', async () => {
    const yaml = await manifest(['--prometheus-rule']);
    const r = await kubectl(['apply', '-f', '-'], yaml);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/no matches for kind "PrometheusRule" in version "monitoring\.coreos\.com\/v1"/);
    expect(r.stdout).toMatch(/cronjob\.batch\/kube-stream-probe-runner (created|unchanged|configured)/);
  });
});

/**
 * After the apply, the CronJob as the kubelet would start it: its container's args from the stored CronJob,
 * `$(VAR)` expanded from the stored ConfigMap, the runner image's entry point, the pod's service account (its
 * token, the cluster CA, its namespace) as the only credential, authorized by the Role and bindings the apply
 * created — on a 1.35 server, where a WebSocket upgrade needs get and create.
 */
describe('in the pod: the applied CronJob runs as its own service account', () => {
  const NS = 'kube-stream-probe';
  const SA = 'kube-stream-probe-runner';
  const SA_TOKEN = 'runner-service-account-token';
  let gateway: RealHop | undefined;
  let lab: EmulatorWithKubeconfig;
  let saDir: string;
  const kubectl = (args: string[], stdin?: string) => runKubectl(LAST, ['--kubeconfig', lab.kubeconfig, ...args], { stdin, timeoutMs: 60_000 });

  beforeAll(async () => {
    gateway = await requireHop(startPushgateway);
    lab = await startEmulatorWithKubeconfig({
      tls: true,
      token: 'cluster-admin-token',
      namespace: NS,
      pod: 'probe-target-0', // the manifest's StatefulSet's pod, the one name its Role grants
      serverVersion: 'v1.35.0',
      rbac: { model: '1.35', verbs: ['get', 'create'] },
      objectSchema: KUBERNETES_SCHEMA,
      serviceAccountTokens: { [SA_TOKEN]: { namespace: NS, name: SA } },
    });
    saDir = mkdtempSync(join(tmpdir(), 'ksp-sa-'));
    writeFileSync(join(saDir, 'token'), SA_TOKEN);
    writeFileSync(join(saDir, 'ca.crt'), lab.emulator.tls!.caPem);
    writeFileSync(join(saDir, 'namespace'), NS);
  }, 60_000);
  afterAll(async () => {
    await Promise.all([gateway?.stop(), lab?.stop()]);
    rmSync(saDir, { recursive: true, force: true });
  });

  /** Runs the stored CronJob's container as the kubelet would, in a pod with the service account mounted. */
  async function runStoredJob() {
    const cron = lab.emulator.objects.list('CronJob')[0] as any;
    const pod = cron.spec.jobTemplate.spec.template.spec;
    expect(pod.serviceAccountName).toBe(SA);
    const container = pod.containers[0];
    const configMap = lab.emulator.objects.list('ConfigMap').find((c: any) => c.metadata.name === container.envFrom[0].configMapRef.name) as any;
    const env: Record<string, string> = configMap.data;
    const args = expandArgs(container.args, env);
    let stdout = '';
    let stderr = '';
    const code = await runner(args, {
      out: (t) => void (stdout += t),
      err: (t) => void (stderr += t),
      interactive: false,
      env: {
        ...env,
        PATH: process.env.PATH,
        HOME: '/nonexistent',
        KUBERNETES_SERVICE_HOST: '127.0.0.1',
        KUBERNETES_SERVICE_PORT: lab.emulator.url.port,
        KSP_SERVICE_ACCOUNT_DIR: saDir,
      },
    });
    const exposition = await (await fetch(`http://127.0.0.1:${gateway!.port}/metrics`)).text();
    return { code, stdout, stderr, exposition };
  }

  it('the Role the manifest binds is enough: exec and port-forward over both transports, pushed under the cluster name', async () => {
    if (!gateway) return;
    const yaml = await manifest(['--hold', '0s', '--location', 'in-pod']);
    const withGateway = yaml.replace('http://pushgateway.monitoring:9091', `http://127.0.0.1:${gateway.port}`);
    const applied = await kubectl(['apply', '-f', '-'], withGateway);
    expect(applied.code, applied.stderr).toBe(0);
    // The pod's namespace already exists here (the emulator's pod runs in it), as it may in a cluster: kubectl
    // warns that it lacks its last-applied record and patches it in, with the manifest's restricted label.
    expect(applied.stderr.trim()).toMatch(
      /^Warning: resource namespaces\/kube-stream-probe is missing the kubectl\.kubernetes\.io\/last-applied-configuration annotation[^\n]*$/,
    );
    expect(applied.stdout).toContain('namespace/kube-stream-probe configured');
    const ns = lab.emulator.objects.list('Namespace').find((n) => n.metadata?.name === NS) as any;
    expect(ns.metadata.labels).toMatchObject({ 'pod-security.kubernetes.io/enforce': 'restricted' });

    const from = lab.emulator.upgrades.length;
    const r = await runStoredJob();
    expect(r.code, r.stderr + r.stdout.slice(0, 3000)).toBe(0);
    const report = JSON.parse(r.stdout);
    expect(report.cluster).toBe('prod-eu');
    expect(report.verdicts.map((v: { verdict: string }) => v.verdict)).toEqual(report.verdicts.map(() => 'clean'));
    // Every upgrade came with the service account's token and was let through by the stored RBAC.
    const upgrades = lab.since(from);
    expect(upgrades.length).toBeGreaterThanOrEqual(4);
    for (const u of upgrades) expect(u.status).toBe(101);
    expect(new Set(upgrades.map((u) => u.transport))).toEqual(new Set(['spdy', 'websocket']));
    expect(r.exposition).toMatch(new RegExp(`${PROMETHEUS_METRICS.KubectlWorks.name}\\{[^}]*cluster="prod-eu"[^}]*location="in-pod"[^}]*\\} 1`));
  });

  it("a Role granting only create (all SPDY's POST needs): WebSocket's GET is refused by the stored RBAC — a finding", async () => {
    if (!gateway) return;
    const docs = docsOf(await manifest(['--hold', '0s', '--location', 'in-pod']));
    const role = docs.find((d) => d.kind === 'Role')! as any;
    for (const rule of role.rules) if (rule.resources.includes('pods/exec')) rule.verbs = ['create'];
    expect((await kubectl(['delete', 'role', '-n', NS, role.metadata.name])).code).toBe(0);
    const applied = await kubectl(['apply', '-f', '-'], YAML.stringify(role));
    expect(applied.code, applied.stderr).toBe(0);
    const from = lab.emulator.upgrades.length;
    const r = await runStoredJob();
    expect(r.code, r.stderr).toBe(0); // a finding: the Job succeeds, the metrics carry it
    const verdicts = JSON.parse(r.stdout).verdicts as { verdict: string; diagnosis: { code: string }[] }[];
    expect(verdicts.map((v) => v.verdict)).toEqual(['websocket-broken', 'websocket-broken']);
    for (const v of verdicts) expect(v.diagnosis.map((d) => d.code)).toContain('rbac-websocket-create');
    const upgrades = lab.since(from);
    expect(upgrades.length).toBeGreaterThanOrEqual(4);
    for (const u of upgrades) expect(u.status).toBe(u.transport === 'spdy' ? 101 : 403);
    expect(r.exposition).toMatch(new RegExp(`${PROMETHEUS_METRICS.SilentFallback.name}\\{[^}]*location="in-pod"[^}]*operation="exec"[^}]*\\} 1`));
  });

  it('without its RoleBinding the service account may not find its target (403 from the stored RBAC): exit 3, not-measured, probe_error pushed', async () => {
    if (!gateway) return;
    const removed = await kubectl(['delete', 'rolebinding', '-n', NS, 'kube-stream-probe']);
    expect(removed.code, removed.stderr).toBe(0);
    const from = lab.emulator.upgrades.length;
    const r = await runStoredJob();
    // Exit 3: the probe could not measure; the Job fails, and the push says why.
    expect(r.code).toBe(3);
    const report = JSON.parse(r.stdout);
    for (const v of report.verdicts) {
      expect(v.verdict).toBe('not-measured');
      expect(v.diagnosis[0].code).toBe('target-forbidden');
      expect(v.diagnosis[0].summary).toContain(
        'User "system:serviceaccount:kube-stream-probe:kube-stream-probe-runner" cannot list resource "pods" in API group "" in the namespace "kube-stream-probe"',
      );
    }
    expect(lab.since(from)).toEqual([]); // no upgrade was tried
    expect(r.exposition).toMatch(new RegExp(`${PROMETHEUS_METRICS.ProbeError.name}\\{[^}]*location="in-pod"[^}]*\\} 1`));
  });

  it("the applied exporter, started from its stored Deployment as the serve image would (the service account its only credential): the scrape job it prints measures this cluster under --cluster's name", async () => {
    const m = await cli([
      'manifest',
      '--runner',
      'serve',
      '--runner-image',
      'registry.example/ksp-serve:1.0',
      '--cluster',
      'prod-eu',
      '--hold',
      '0s',
      '--location',
      'in-pod',
    ]);
    expect(m.code, m.stderr).toBe(0);
    // The tests above left the Role narrowed; the emulator patches maps, not lists (a rules change needs a delete).
    await kubectl(['delete', 'role', '-n', NS, 'kube-stream-probe', '--ignore-not-found']);
    const applied = await kubectl(['apply', '-f', '-'], m.stdout);
    expect(applied.code, applied.stderr).toBe(0);
    const pod = (lab.emulator.objects.list('Deployment')[0] as any).spec.template.spec;
    expect(pod.serviceAccountName).toBe(SA);
    // The image's entry point is `runner.mjs serve`; here it listens on a free loopback port instead of 0.0.0.0:9465.
    const args = (pod.containers[0].args as string[]).map((a) => (a === '0.0.0.0:9465' ? '127.0.0.1:0' : a));
    const stop = new AbortController();
    let served: Promise<number> | undefined;
    const port = await new Promise<number>((resolve) => {
      served = serveCommand(
        args,
        {
          out: () => {},
          err: () => {},
          interactive: false,
          signal: stop.signal,
          env: {
            PATH: process.env.PATH,
            HOME: '/nonexistent',
            KUBERNETES_SERVICE_HOST: '127.0.0.1',
            KUBERNETES_SERVICE_PORT: lab.emulator.url.port,
            KSP_SERVICE_ACCOUNT_DIR: saDir,
          },
        },
        (a) => resolve(a.port),
      );
    });
    try {
      // The job's own target (the pod's service account) and params.
      const target = /static_configs: \[\{ targets: \[([^\]]+)\] \}\]/.exec(m.stdout)![1];
      const body = await (
        await fetch(`http://127.0.0.1:${port}/probe?target=${target}&hold=0s`, { headers: { 'x-prometheus-scrape-timeout-seconds': '30' } })
      ).text();
      expect(body).toMatch(/^probe_success 1$/m);
      expect(body).toMatch(new RegExp(`${PROMETHEUS_METRICS.KubectlWorks.name}\\{[^}]*location="in-pod",cluster="prod-eu"[^}]*\\} 1`));
    } finally {
      stop.abort('SIGTERM');
      expect(await served).toBe(143);
    }
  });
});

describe.each([FIRST, LAST])('kubectl %s apply -f - of the exporter manifest (manifest --runner serve)', (version) => {
  let lab: EmulatorWithKubeconfig;
  const kubectl = (args: string[], stdin?: string) => runKubectl(version, ['--kubeconfig', lab.kubeconfig, ...args], { stdin, timeoutMs: 60_000 });
  beforeAll(async () => {
    lab = await startEmulatorWithKubeconfig({ objectSchema: KUBERNETES_SCHEMA });
  });
  afterAll(async () => lab?.stop());

  it('creates the Deployment, Service and NetworkPolicy beside the target and RBAC, as written (Strict), and the job to scrape them', async () => {
    const r = await cli(['manifest', '--runner', 'serve', '--runner-image', 'registry.example/ksp-serve:1.0', '--cluster', 'prod-eu', '--grafana-dashboard']);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    const docs = docsOf(r.stdout);
    expect(docs.map((d) => d.kind)).toEqual(expect.arrayContaining(['Deployment', 'Service', 'NetworkPolicy', 'ServiceAccount', 'Role', 'RoleBinding']));
    const applied = await kubectl(['apply', '-f', '-'], r.stdout);
    expect(applied.stderr).toBe('');
    expect(applied.code).toBe(0);
    expect(applied.stdout.trim().split('\n')).toEqual(docs.map((d) => `${ref(d)} created`));
    for (const d of docs) {
      const stored = lab.emulator.objects.list(d.kind).find((o) => o.metadata?.name === d.metadata.name) as Doc | undefined;
      expect(asWritten(stored!)).toEqual(d);
    }
    // The Role is bound to the exporter's service account, which its Deployment runs as; the Service selects its pods.
    const binding = docs.find((d) => d.kind === 'RoleBinding') as any;
    const deployment = docs.find((d) => d.kind === 'Deployment') as any;
    const service = docs.find((d) => d.kind === 'Service') as any;
    expect(binding.subjects).toEqual([{ kind: 'ServiceAccount', name: deployment.spec.template.spec.serviceAccountName, namespace: 'kube-stream-probe' }]);
    expect(deployment.spec.template.metadata.labels).toMatchObject(service.spec.selector);
    expect(deployment.spec.template.spec.containers[0].securityContext).toMatchObject({ readOnlyRootFilesystem: true, runAsNonRoot: true });
    // The scrape job, for a Prometheus without the operator: the Service's address, the plan's hold, a timeout the run fits.
    expect(r.stdout).toMatch(/^# {3}scrape_timeout: 71s$/m);
    expect(r.stdout).toContain(`replacement: 'kube-stream-probe-serve.kube-stream-probe.svc:9465'`);
  });
});
