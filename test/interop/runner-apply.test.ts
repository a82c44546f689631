/**
 * `kube-stream-probe manifest --runner cronjob | kubectl apply -f -` is the whole install (issue 27): real
 * kubectl (the oldest and newest we test) applies it to the emulator, which stores objects as the API server
 * does and refuses what it refuses: unknown fields under kubectl's default `fieldValidation=Strict` (field names
 * from @kubernetes/client-node's OpenAPI-generated models), schema violations (kubernetes-models' schemas),
 * kinds it does not serve (the PrometheusRule without prometheus-operator's CRD).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import YAML from 'yaml';
import { startEmulatorWithKubeconfig, type EmulatorWithKubeconfig } from '../../lab/emulator/kubeconfig.js';
import { KUBECTL_VERSIONS, runKubectl } from '../../lab/kubectl.js';
import { cli } from '../helpers/cli.js';
import { KUBERNETES_SCHEMA } from '../helpers/kube-schemas.js';

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
      const stored = lab.emulator.objects.list(d.kind).find((o) => (o.metadata as Doc['metadata']).name === d.metadata.name) as Doc | undefined;
      expect(stored, ref(d)).toBeDefined();
      const { metadata, status: _status, ...rest } = stored!;
      const {
        annotations,
        uid: _u,
        resourceVersion: _r,
        creationTimestamp: _c,
        generation: _g,
        ...meta
      } = metadata as Doc['metadata'] & Record<string, unknown>;
      expect(JSON.parse(annotations?.[LAST_APPLIED] ?? '{}')).toMatchObject({ kind: d.kind, metadata: { name: d.metadata.name } });
      const { [LAST_APPLIED]: _l, ...own } = annotations ?? {};
      const docMeta = { ...d.metadata, ...(Object.keys(own).length ? { annotations: own } : {}) };
      expect({ ...rest, metadata: { ...meta, ...(Object.keys(own).length ? { annotations: own } : {}) } }).toEqual({ ...d, metadata: docMeta });
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
