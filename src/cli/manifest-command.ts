/**
 * `kube-stream-probe manifest`: the probe target and least-privilege RBAC.
 * The target is a StatefulSet of one pod whose main process is `cat`, with a
 * TCP echo port: its pod keeps the name `<name>-0` and comes back on another
 * node when the upgrade drains this one, so RBAC can name it and the probe
 * never loses it. RBAC: list pods in the namespace (the probe finds the target
 * by label), get the pod, get + create on pods/exec and pods/portforward for
 * that pod only (WebSocket upgrades are GET, SPDY upgrades POST, and 1.35+
 * wants create for both), and SelfSubjectAccessReview for the preflight.
 */
import { grafanaDashboard } from '../metrics/grafana-dashboard.js';
import YAML from 'yaml';
import { probeError } from '../errors.js';
import { NODE_TARGET_LABEL, TARGET_DEFAULTS, TARGET_LABEL, statefulPodName } from '../kube/target.js';
import { holdShapeCommand } from '../probe/hold-shape.js';
import { holdSpan, planFlagValues } from '../config/plan.js';
import { restrictedContainer } from './pod-security.js';
import { parsePushgatewayUrl } from '../metrics/pushgateway.js';
import { formatSize, parseDurationSeconds } from '../vocabulary.js';
import { MATRIX_FLAGS, integer, named, oneOf, parse, planFromFlags } from './args.js';
import { NAME_RULES } from '../config/rules.js';
import {
  RUNNER_DEFAULT_PLAN,
  RUNNER_NAME,
  SERVE_NAME,
  SERVE_PORT,
  cronFor,
  runnerDocuments,
  runnerDeadlineSeconds,
  serveDocuments,
  serveScrapeTimeoutSeconds,
  type RunnerOptions,
  type ServeOptions,
} from './runner-manifest.js';
import { probeScrapeConfig } from './probe-endpoint.js';
import type { CommandIO } from './io.js';

export const MANIFEST_HELP = `Usage: kube-stream-probe manifest [flags] | kubectl apply -f -

Prints YAML for the probe target and the RBAC the probe needs.

Flags:
  -n, --namespace NS        namespace to create (default kube-stream-probe)
  --name NAME               the target StatefulSet (default probe-target; its pod is NAME-0)
  --port N                  TCP echo port (default 8080)
  --image REF               image for cat (default busybox:1.36; any image with cat)
  --echo-image REF          image for the TCP echo (default alpine/socat:1.8.0.1; needs socat)
  --group NAME              bind the Role to this group (default kube-stream-probe;
                            map your probe's IAM role to it with an EKS access entry)
  --user NAME               bind to this user instead
  --service-account NS/NAME bind to this service account instead
  --per-node                also a DaemonSet of per-node targets (label ${NODE_TARGET_LABEL.key}=${NODE_TARGET_LABEL.value})
                            and the RBAC to find them and read their nodes, for \`run --per-node\`
  --tolerate-all            with --per-node: run on tainted nodes too (control plane, dedicated pools)

In-cluster runner (the probe from inside the cluster, metrics to Prometheus):
  --runner cronjob          also a CronJob that runs \`run\` against this cluster's API server with its
                            own service account (${RUNNER_NAME}, bound to the Role instead of
                            --group), its plan in a ConfigMap, pushing to --pushgateway
  --runner serve            instead, the exporter (\`serve\`) as a Deployment with a Service on ${SERVE_PORT}, a
                            NetworkPolicy that opens only that port, and the Prometheus job that scrapes it
                            (--service-monitor: a ServiceMonitor instead), its plan in the job's params
  --runner-image REF        the runner's image: container/Dockerfile's runner stage (serve: its serve stage)
                            (docker buildx build --target runner -f container/Dockerfile .)
  --service-monitor         with --runner serve: a ServiceMonitor (prometheus-operator's CRD)
  --pushgateway URL         where the runner pushes (e.g. http://pushgateway.monitoring:9091)
  --cluster NAME            this cluster's name in the metrics (required: in a pod the context is "in-cluster")
  --location NAME           where the runner is, in the metrics (default in-cluster)
  --every DURATION          how often it runs: 1m…30m dividing an hour, or 1h…24h dividing a day (default 5m)
  --ops, --transports, --keepalive, --hold, --transfer, --hold-shape, --transfer-shape
                            the plan, as for \`run\` (default exec,portforward; both; kubectl; 0s,65s; no transfer; silent)
  --mesh istio|linkerd      inject the mesh's sidecar (as a native sidecar, Kubernetes >= 1.29) so the
                            path probed is the mesh's
  --prometheus-rule         also the alert rules as a PrometheusRule (prometheus-operator's CRD)
  --grafana-dashboard       also the Grafana dashboard (the CloudWatch dashboard's rows over Prometheus) in a
                            ConfigMap labelled grafana_dashboard=1, which Grafana's dashboard sidecar loads

  --dashboard-json          print only the Grafana dashboard's JSON, to import (Dashboards → New → Import);
                            with --per-node it has the nodes row
  -h, --help                this help
`;

export interface ManifestOptions {
  readonly namespace: string;
  /** The StatefulSet; its pod is `<name>-0`. */
  readonly name: string;
  readonly port: number;
  readonly image: string;
  readonly echoImage: string;
  readonly subject: { readonly kind: 'Group' | 'User' | 'ServiceAccount'; readonly name: string; readonly namespace?: string };
  /** Also a DaemonSet of per-node targets (`run --per-node`), optionally on tainted nodes too. */
  readonly perNode?: { readonly tolerateAll: boolean };
}

const DNS_LABEL = /^[a-z0-9]([-a-z0-9]{0,59}[a-z0-9])?$/; // room for the pod's "-0"
const IMAGE_REF = /^[a-z0-9]([a-z0-9._\-/:]*[a-z0-9])?(:[A-Za-z0-9_.-]{1,128})?(@sha256:[0-9a-f]{64})?$/;

export function manifestDocuments(o: ManifestOptions): unknown[] {
  const labels = { [TARGET_LABEL.key]: TARGET_LABEL.value, 'app.kubernetes.io/instance': o.name };
  const pod = statefulPodName(o.name);
  const subject =
    o.subject.kind === 'ServiceAccount'
      ? { kind: 'ServiceAccount', name: o.subject.name, namespace: o.subject.namespace }
      : { kind: o.subject.kind, name: o.subject.name, apiGroup: 'rbac.authorization.k8s.io' };
  /** A Role (in the namespace) or ClusterRole with these rules, and its binding to the subject. */
  const grant = (kind: 'Role' | 'ClusterRole', name: string, rules: object[]) => {
    const metadata = kind === 'Role' ? { name, namespace: o.namespace } : { name };
    return [
      { apiVersion: 'rbac.authorization.k8s.io/v1', kind, metadata, rules },
      {
        apiVersion: 'rbac.authorization.k8s.io/v1',
        kind: `${kind}Binding`,
        metadata,
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind, name },
        subjects: [subject],
      },
    ];
  };
  const restricted = restrictedContainer(65534); // nobody
  const resources = { requests: { cpu: '5m', memory: '8Mi' }, limits: { memory: '32Mi' } };
  const podSpec = (extra: Record<string, unknown> = {}) => ({
    automountServiceAccountToken: false,
    enableServiceLinks: false,
    terminationGracePeriodSeconds: 1,
    ...extra,
    containers: [
      // exec runs `cat` here; attach joins the main process, which is `cat` too.
      { name: 'main', image: o.image, command: ['cat'], stdin: true, securityContext: restricted, resources },
      {
        name: 'echo',
        image: o.echoImage,
        args: [`TCP-LISTEN:${o.port},fork,reuseaddr`, 'EXEC:cat'],
        ports: [{ name: 'echo', containerPort: o.port, protocol: 'TCP' }],
        securityContext: restricted,
        resources,
      },
      // Last (the first two keep their places): terminal attach sessions (--tty) join this one: a pty, and for each line typed the size it reads (probe/terminal.ts).
      {
        name: TARGET_DEFAULTS.ttyContainer,
        image: o.image,
        command: holdShapeCommand('tty'),
        stdin: true,
        tty: true,
        securityContext: restricted,
        resources,
      },
    ],
  });
  const nodeLabels = { [NODE_TARGET_LABEL.key]: NODE_TARGET_LABEL.value, 'app.kubernetes.io/instance': `${o.name}-node` };
  const perNode = o.perNode
    ? [
        {
          apiVersion: 'apps/v1',
          kind: 'DaemonSet',
          metadata: { name: `${o.name}-node`, namespace: o.namespace, labels: nodeLabels },
          spec: {
            selector: { matchLabels: nodeLabels },
            // One target per node, replaced node by node during an upgrade.
            updateStrategy: { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: 1 } },
            template: {
              metadata: { labels: nodeLabels, annotations: { 'kubectl.kubernetes.io/default-container': 'main' } },
              spec: podSpec(o.perNode.tolerateAll ? { tolerations: [{ operator: 'Exists' }] } : {}),
            },
          },
        },
        // DaemonSet pods have generated names, so these cannot name them; the namespace holds only probe targets.
        ...grant('Role', 'kube-stream-probe-per-node', [
          { apiGroups: [''], resources: ['pods'], verbs: ['get', 'list'] },
          { apiGroups: [''], resources: ['pods/exec', 'pods/portforward', 'pods/attach'], verbs: ['get', 'create'] },
        ]),
        // Each node's kubelet version and declared features (ExtendWebSocketsToKubelet), read only.
        ...grant('ClusterRole', 'kube-stream-probe-nodes', [{ apiGroups: [''], resources: ['nodes'], verbs: ['get'] }]),
      ]
    : [];
  return [
    { apiVersion: 'v1', kind: 'Namespace', metadata: { name: o.namespace, labels: { 'pod-security.kubernetes.io/enforce': 'restricted' } } },
    {
      apiVersion: 'apps/v1',
      kind: 'StatefulSet',
      metadata: { name: o.name, namespace: o.namespace, labels },
      spec: {
        replicas: 1,
        serviceName: o.name,
        selector: { matchLabels: labels },
        template: {
          metadata: { labels, annotations: { 'kubectl.kubernetes.io/default-container': 'main' } },
          spec: podSpec(),
        },
      },
    },
    ...grant('Role', 'kube-stream-probe', [
      // Finding the target by its label (list cannot be limited by name; the namespace holds only the target).
      { apiGroups: [''], resources: ['pods'], verbs: ['list'] },
      // Only the target pod. kubectl also GETs the pod before it upgrades.
      { apiGroups: [''], resources: ['pods'], resourceNames: [pod], verbs: ['get'] },
      // WebSocket = GET ("get"), SPDY = POST ("create"); from 1.35 WebSocket needs both.
      // attach (--ops attach) joins the target's own cat: less than exec, which runs any command.
      { apiGroups: [''], resources: ['pods/exec', 'pods/portforward', 'pods/attach'], resourceNames: [pod], verbs: ['get', 'create'] },
    ]),
    ...grant('ClusterRole', 'kube-stream-probe-access-review', [
      { apiGroups: ['authorization.k8s.io'], resources: ['selfsubjectaccessreviews'], verbs: ['create'] },
    ]),
    ...perNode,
  ];
}

export function manifestYaml(o: ManifestOptions): string {
  return yamlDocuments(manifestDocuments(o));
}

/**
 * The documents as kubectl reads them: written as YAML 1.1, whose booleans (`on`, `off`, `yes`, `no`) kubectl's
 * parser (sigs.k8s.io/yaml over go-yaml) still honours, so a string such as `--transfer off` in the ConfigMap is
 * quoted and stays a string (found by the emulator's Strict validation: "data.KSP_TRANSFER: must be string").
 */
function yamlDocuments(docs: readonly unknown[]): string {
  return docs.map((d) => YAML.stringify(d, { aliasDuplicateObjects: false, version: '1.1' })).join('---\n');
}

export async function manifestCommand(argv: readonly string[], io: CommandIO): Promise<number> {
  const { values } = parse(argv, {
    namespace: { type: 'string', short: 'n' },
    name: { type: 'string' },
    port: { type: 'string' },
    image: { type: 'string' },
    'echo-image': { type: 'string' },
    group: { type: 'string' },
    user: { type: 'string' },
    'service-account': { type: 'string' },
    'per-node': { type: 'boolean' },
    'tolerate-all': { type: 'boolean' },
    runner: { type: 'string' },
    'runner-image': { type: 'string' },
    pushgateway: { type: 'string' },
    cluster: { type: 'string' },
    location: { type: 'string' },
    every: { type: 'string' },
    ...MATRIX_FLAGS,
    mesh: { type: 'string' },
    'prometheus-rule': { type: 'boolean' },
    'grafana-dashboard': { type: 'boolean' },
    'service-monitor': { type: 'boolean' },
    'dashboard-json': { type: 'boolean' },
    help: { type: 'boolean', short: 'h' },
  });
  if (values.help) {
    io.out(MANIFEST_HELP);
    return 0;
  }
  if (values['dashboard-json']) {
    const other = Object.keys(values).find((k) => k !== 'dashboard-json' && k !== 'per-node');
    if (other) throw probeError('USAGE', `--dashboard-json prints only the dashboard: drop --${other}`, { field: other });
    io.out(`${JSON.stringify(grafanaDashboard({ perNode: values['per-node'] === true }), null, 2)}\n`);
    return 0;
  }
  const namespace = values.namespace ?? TARGET_DEFAULTS.namespace;
  const name = values.name ?? TARGET_DEFAULTS.name;
  named('namespace', namespace, NAME_RULES.namespace);
  named('name', name, (v) =>
    DNS_LABEL.test(v) ? undefined : `"${v}" is not a StatefulSet name for the target (lower-case letters, digits and '-', at most 61: its pods add "-0")`,
  );
  const chosen = [values.group, values.user, values['service-account']].filter((v) => v !== undefined);
  if (chosen.length > 1) throw probeError('USAGE', 'give only one of --group, --user, --service-account', { field: 'subject' });
  const runner = runnerOptions(values, namespace);
  if (runner && chosen.length)
    throw probeError('USAGE', `--runner binds the Role to its own service account (${RUNNER_NAME}): drop --group/--user/--service-account`, {
      field: 'runner',
    });
  let subject: ManifestOptions['subject'] = { kind: 'Group', name: values.group ?? 'kube-stream-probe' };
  if (values.user) subject = { kind: 'User', name: values.user };
  if (runner) subject = { kind: 'ServiceAccount', namespace, name: RUNNER_NAME };
  if (values['service-account']) {
    const m = /^([a-z0-9-]+)\/([a-z0-9.-]+)$/.exec(values['service-account']);
    if (!m) throw probeError('USAGE', `--service-account: "${values['service-account']}" is not NAMESPACE/NAME`, { field: 'service-account' });
    subject = { kind: 'ServiceAccount', namespace: m[1]!, name: m[2]! };
  }
  const images = { image: values.image ?? TARGET_DEFAULTS.image, echoImage: values['echo-image'] ?? TARGET_DEFAULTS.echoImage };
  for (const [flag, v] of [
    ['image', images.image],
    ['echo-image', images.echoImage],
  ] as const) {
    if (!IMAGE_REF.test(v)) throw probeError('USAGE', `--${flag}: "${v}" is not an image reference (registry/name:tag or @sha256:…)`, { field: flag });
  }
  if (values['tolerate-all'] && !values['per-node']) throw probeError('USAGE', '--tolerate-all needs --per-node', { field: 'tolerate-all' });
  const perNode = values['per-node'] ? { tolerateAll: values['tolerate-all'] === true } : undefined;
  const target = manifestDocuments({
    namespace,
    name,
    port: integer('port', values.port, 1, 65535) ?? TARGET_DEFAULTS.port,
    subject,
    ...images,
    ...(perNode ? { perNode } : {}),
  });
  const runnerDocs = runner?.kind === 'serve' ? serveDocuments(runner) : runner ? runnerDocuments({ ...runner, perNode: perNode !== undefined }) : [];
  // Without a ServiceMonitor, the Prometheus job that scrapes the exporter, for prometheus.yml.
  const job =
    runner?.kind === 'serve' && !runner.serviceMonitor
      ? `${probeScrapeConfig({
          exporter: `${SERVE_NAME}.${namespace}.svc:${SERVE_PORT}`,
          targets: ['in-cluster'],
          hold: planFlagValues(runner).holds,
          interval: `${runner.everySeconds}s`,
          timeout: `${serveScrapeTimeoutSeconds(runner)}s`,
        })
          .trimEnd()
          .replace(/^/gm, '# ')}\n`
      : '';
  io.out(
    (job ? `# The Prometheus job for the exporter (prometheus.yml scrape_configs; --service-monitor writes a ServiceMonitor instead):\n${job}` : '') +
      yamlDocuments([...target, ...runnerDocs]),
  );
  return 0;
}

type ManifestValues = Partial<
  Record<'runner' | 'runner-image' | 'pushgateway' | 'cluster' | 'location' | 'every' | keyof typeof MATRIX_FLAGS | 'mesh', string>
> & {
  'prometheus-rule'?: boolean;
  'grafana-dashboard'?: boolean;
  'service-monitor'?: boolean;
};

type Runner = (Omit<RunnerOptions, 'perNode'> & { kind: 'cronjob' }) | (ServeOptions & { kind: 'serve' });

/** What each runner needs, and what each flag is for: every missing one is named at once, a flag of the other runner refused. */
const RUNNER_REQUIRED = {
  cronjob: {
    'runner-image': 'REF: build it with `docker buildx build --target runner -f container/Dockerfile .` and push it to a registry the cluster pulls from',
    pushgateway: 'URL (where its metrics go)',
    cluster: "NAME: this cluster's name in the metrics",
  },
  serve: {
    'runner-image': 'REF: build it with `docker buildx build --target serve -f container/Dockerfile .` and push it to a registry the cluster pulls from',
    cluster: "NAME: this cluster's name in the metrics",
  },
} as const;
const ONLY_FOR = { pushgateway: 'cronjob', mesh: 'cronjob', 'service-monitor': 'serve' } as const;

/** `--runner cronjob|serve` and its flags, checked; undefined without --runner (its flags are then refused). */
function runnerOptions(values: ManifestValues, namespace: string): Runner | undefined {
  const flags = [
    'runner-image',
    'pushgateway',
    'cluster',
    'location',
    'every',
    ...(Object.keys(MATRIX_FLAGS) as (keyof typeof MATRIX_FLAGS)[]),
    'mesh',
    'prometheus-rule',
    'grafana-dashboard',
    'service-monitor',
  ] as const;
  if (values.runner === undefined) {
    const stray = flags.find((f) => values[f] !== undefined);
    if (stray) {
      const runners = (ONLY_FOR as Record<string, string>)[stray] ?? 'cronjob or --runner serve';
      throw probeError('USAGE', `--${stray} is a runner flag: it needs --runner ${runners}`, { field: stray });
    }
    return undefined;
  }
  const kind = oneOf('runner', values.runner, ['cronjob', 'serve'] as const, 'cronjob');
  for (const [flag, only] of Object.entries(ONLY_FOR) as [keyof typeof ONLY_FOR, string][])
    if (values[flag] !== undefined && only !== kind) throw probeError('USAGE', `--${flag} is for --runner ${only}, not --runner ${kind}`, { field: flag });
  // Every required flag that is missing, named at once (not one per try).
  const required: Record<string, string> = RUNNER_REQUIRED[kind];
  const missing = Object.keys(required).filter((f) => values[f as keyof ManifestValues] === undefined);
  if (missing.length)
    throw probeError('USAGE', `--runner ${kind} needs ${missing.map((f) => `--${f} ${required[f]}`).join('; and ')}`, { field: missing.join(',') });
  const image = values['runner-image']!;
  if (!IMAGE_REF.test(image))
    throw probeError('USAGE', `--runner-image: "${image}" is not an image reference (registry/name:tag or @sha256:…)`, { field: 'runner-image' });
  const location = named('location', values.location, NAME_RULES.label) ?? 'in-cluster';
  const everySeconds = parseDurationSeconds('--every', values.every ?? '5m');
  const plan = planFromFlags(values, RUNNER_DEFAULT_PLAN);
  named('cluster', values.cluster, NAME_RULES.label);
  const common = {
    namespace,
    location,
    cluster: values.cluster!,
    everySeconds,
    image,
    ...plan,
    prometheusRule: values['prometheus-rule'] === true,
    grafanaDashboard: values['grafana-dashboard'] === true,
  };
  if (kind === 'serve') {
    const needs = serveScrapeTimeoutSeconds(plan);
    if (needs > everySeconds)
      throw probeError(
        'USAGE',
        `a scrape holding ${holdSpan(plan)} s needs a ${needs} s scrape_timeout, longer than --every ${values.every ?? '5m'}: scrape less often or hold less`,
        { field: 'hold' },
      );
    return { kind, ...common, serviceMonitor: values['service-monitor'] === true };
  }
  parsePushgatewayUrl(values.pushgateway!);
  const schedule = cronFor(everySeconds);
  if (typeof schedule !== 'string') throw probeError('USAGE', `--every ${values.every}: ${schedule.problem}`, { field: 'every' });
  if (runnerDeadlineSeconds(plan) > everySeconds * 4)
    throw probeError(
      'USAGE',
      `a run holding ${holdSpan(plan)} s${plan.transferBytes ? ` and moving --transfer ${formatSize(plan.transferBytes)}` : ''} may take up to ${runnerDeadlineSeconds(plan)} s, longer than four runs of --every ${values.every ?? '5m'}: run the long holds (or the transfer) in a CronJob of their own with a longer --every`,
      { field: 'hold' },
    );
  return {
    kind,
    ...common,
    pushgateway: values.pushgateway!,
    mesh: oneOf('mesh', values.mesh, ['none', 'istio', 'linkerd'] as const, 'none'),
  };
}
