/**
 * `manifest --runner cronjob`: the in-cluster runner. The same engine's `run` as a CronJob against its own API
 * server (the pod's service account: src/kube/in-cluster.ts), its plan in a ConfigMap, its metrics pushed to a
 * Pushgateway (src/metrics/pushgateway.ts), its alert rules as a PrometheusRule (src/metrics/prometheus-rules.ts).
 *
 * - concurrencyPolicy Forbid: a run that outlives its interval is not doubled (two runs would share the path and
 *   the start pacer's budget). activeDeadlineSeconds is the task runner's budget for the longest hold
 *   (lambda-limits.ts taskRunSeconds) plus a minute to pull and start. backoffLimit 0: a retry would publish a
 *   second run into the same interval; a failed Job is the signal.
 * - `run --exit-zero-on-finding`: a broken path is a finding the metrics carry, not a failed Job (which
 *   kube-prometheus' KubeJobFailed would page on a second time); a run that could not measure (3) or publish (4)
 *   fails the Job.
 * - Restricted Pod Security (the namespace enforces it), no token beyond the service account's projected one.
 * - Meshes: `--mesh istio` labels the pod `sidecar.istio.io/inject: "true"` and asks for a native sidecar
 *   (`sidecar.istio.io/nativeSidecar`, an annotation of istio/api that takes precedence over ENABLE_NATIVE_SIDECARS),
 *   `--mesh linkerd` annotates `linkerd.io/inject: enabled` with `config.beta.linkerd.io/proxy-enable-native-sidecar`
 *   (linkerd.io/2/reference/proxy-configuration): without a native sidecar (Kubernetes ≥ 1.29) the proxy never
 *   exits and the Job never completes.
 */
import { grafanaDashboard } from '../metrics/grafana-dashboard.js';
import { taskRunSeconds } from '../config/lambda-limits.js';
import { holdSpan, planFlagValues, planTransferMs } from '../config/plan.js';
import { prometheusRules } from '../metrics/prometheus-rules.js';
import { RESTRICTED_POD, restrictedContainer } from './pod-security.js';
import { DEFAULT_MATRIX, type RunPlan } from '../vocabulary.js';
import { PLAN_NAMES, PLAN_FIELDS } from '../config/plan.js';
import { scrapeTimeoutFor } from './probe-endpoint.js';

export const RUNNER_NAME = 'kube-stream-probe-runner';
export type Mesh = 'none' | 'istio' | 'linkerd';

/** The runner's plan when its flags say nothing: a 65 s hold beside the 0 s one, past the common 60 s idle timers. */
export const RUNNER_DEFAULT_PLAN: RunPlan = { ...DEFAULT_MATRIX, holdsSeconds: [0, 65] };

/** A run's budget in the runner (its Job's activeDeadlineSeconds): the task runner's for its holds and transfers, plus a minute to pull and start. */
export const runnerDeadlineSeconds = (plan: RunPlan): number => taskRunSeconds(holdSpan(plan), planTransferMs(plan)) + 60;

export interface RunnerOptions extends RunPlan {
  readonly namespace: string;
  readonly location: string;
  /** The cluster's name in results and metrics (in a pod, the context is only "in-cluster"). */
  readonly cluster: string;
  /** Seconds between runs: minutes dividing an hour, or hours dividing a day (a cron schedule exists for it). */
  readonly everySeconds: number;
  readonly perNode: boolean;
  readonly pushgateway: string;
  readonly image: string;
  readonly mesh: Mesh;
  /** Also a PrometheusRule (needs the prometheus-operator's CRD). */
  readonly prometheusRule: boolean;
  /** Also the Grafana dashboard, in a ConfigMap Grafana's dashboard sidecar loads. */
  readonly grafanaDashboard: boolean;
}

/**
 * The label Grafana's dashboard sidecar (k8s-sidecar, as kube-prometheus-stack deploys it with
 * `grafana.sidecar.dashboards.label: grafana_dashboard`, `labelValue: "1"`) loads dashboards from.
 */
export const GRAFANA_DASHBOARD_LABEL = { grafana_dashboard: '1' } as const;

/** What either runner adds when asked: the alert rules (a PrometheusRule) and the Grafana dashboard (a ConfigMap its sidecar loads). */
function monitoringExtras(
  o: Pick<RunnerOptions, 'namespace' | 'everySeconds' | 'holdsSeconds' | 'operations' | 'prometheusRule' | 'grafanaDashboard' | 'perNode'>,
  name: string,
  labels: Record<string, string>,
): unknown[] {
  return [
    ...(o.prometheusRule
      ? [
          {
            apiVersion: 'monitoring.coreos.com/v1',
            kind: 'PrometheusRule',
            metadata: { name: 'kube-stream-probe', namespace: o.namespace, labels },
            spec: prometheusRules([{ intervalSeconds: o.everySeconds, holdsSeconds: o.holdsSeconds, operations: o.operations }]),
          },
        ]
      : []),
    ...(o.grafanaDashboard
      ? [
          {
            apiVersion: 'v1',
            kind: 'ConfigMap',
            metadata: { name: `${name}-dashboard`, namespace: o.namespace, labels: { ...labels, ...GRAFANA_DASHBOARD_LABEL } },
            data: { 'kube-stream-probe.json': JSON.stringify(grafanaDashboard({ perNode: o.perNode }), null, 2) },
          },
        ]
      : []),
  ];
}

/** The CronJob schedule for an interval, or why none exists. */
export function cronFor(everySeconds: number): string | { problem: string } {
  const minutes = everySeconds / 60;
  if (Number.isInteger(minutes) && minutes >= 1 && minutes < 60 && 60 % minutes === 0) return minutes === 1 ? '* * * * *' : `*/${minutes} * * * *`;
  const hours = everySeconds / 3600;
  if (Number.isInteger(hours) && hours >= 1 && hours <= 24 && 24 % hours === 0)
    return hours === 24 ? '0 0 * * *' : hours === 1 ? '0 * * * *' : `0 */${hours} * * *`;
  return { problem: 'a CronJob runs at even steps: give minutes that divide an hour (1m, 5m, 15m…) or hours that divide a day (1h, 6h, 24h)' };
}

/** The ServiceAccount, ConfigMap, CronJob(s) and, when asked, the PrometheusRule. */
export function runnerDocuments(o: RunnerOptions): unknown[] {
  const schedule = cronFor(o.everySeconds);
  if (typeof schedule !== 'string') throw new Error(schedule.problem);
  const labels = { 'app.kubernetes.io/name': RUNNER_NAME, 'app.kubernetes.io/part-of': 'kube-stream-probe' };
  const meshLabels = o.mesh === 'istio' ? { 'sidecar.istio.io/inject': 'true' } : {};
  const meshAnnotations =
    o.mesh === 'istio'
      ? { 'sidecar.istio.io/nativeSidecar': 'true' }
      : o.mesh === 'linkerd'
        ? { 'linkerd.io/inject': 'enabled', 'config.beta.linkerd.io/proxy-enable-native-sidecar': 'true' }
        : {};
  // The plan as the run flags' values (config/plan.ts planFlagValues: `run` parses them back unchanged).
  const flags = planFlagValues(o);
  const plan = {
    KSP_LOCATION: o.location,
    KSP_CLUSTER: o.cluster,
    KSP_OPS: flags.operations,
    KSP_TRANSPORTS: flags.transports,
    KSP_KEEPALIVE: flags.keepalives,
    KSP_HOLD: flags.holds,
    KSP_TRANSFER: flags.transfer,
    KSP_HOLD_SHAPE: flags.holdShapes,
    KSP_TRANSFER_SHAPE: flags.transferShapes,
    KSP_PUSHGATEWAY: o.pushgateway,
  };
  const cronJob = (name: string, extraArgs: string[]) => ({
    apiVersion: 'batch/v1',
    kind: 'CronJob',
    metadata: { name, namespace: o.namespace, labels },
    spec: {
      schedule,
      concurrencyPolicy: 'Forbid',
      // A run that cannot start within half an interval is skipped, not run late into the next one.
      startingDeadlineSeconds: Math.max(10, Math.floor(o.everySeconds / 2)),
      successfulJobsHistoryLimit: 1,
      failedJobsHistoryLimit: 3,
      jobTemplate: {
        spec: {
          backoffLimit: 0,
          activeDeadlineSeconds: runnerDeadlineSeconds(o),
          ttlSecondsAfterFinished: Math.max(600, o.everySeconds * 3),
          template: {
            metadata: { labels: { ...labels, ...meshLabels }, annotations: meshAnnotations },
            spec: {
              serviceAccountName: RUNNER_NAME,
              restartPolicy: 'Never',
              enableServiceLinks: false,
              securityContext: RESTRICTED_POD,
              containers: [
                {
                  name: 'probe',
                  image: o.image,
                  // Kubernetes expands $(VAR) from the container's environment: the plan is the ConfigMap's.
                  args: [
                    'run',
                    '--location',
                    '$(KSP_LOCATION)',
                    '--cluster-name',
                    '$(KSP_CLUSTER)',
                    '--ops',
                    '$(KSP_OPS)',
                    '--transports',
                    '$(KSP_TRANSPORTS)',
                    '--keepalive',
                    '$(KSP_KEEPALIVE)',
                    '--hold',
                    '$(KSP_HOLD)',
                    '--transfer',
                    '$(KSP_TRANSFER)',
                    '--hold-shape',
                    '$(KSP_HOLD_SHAPE)',
                    '--transfer-shape',
                    '$(KSP_TRANSFER_SHAPE)',
                    '--publish',
                    'prometheus',
                    '--pushgateway',
                    '$(KSP_PUSHGATEWAY)',
                    '--exit-zero-on-finding',
                    '-o',
                    'json',
                    ...extraArgs,
                  ],
                  envFrom: [{ configMapRef: { name: RUNNER_NAME } }],
                  // The image's `node` user (uid 1000 in the official Node.js images the Dockerfile builds on).
                  securityContext: restrictedContainer(1000),
                  resources: { requests: { cpu: '250m', memory: '128Mi' }, limits: { memory: '256Mi' } },
                },
              ],
            },
          },
        },
      },
    },
  });
  return [
    { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: RUNNER_NAME, namespace: o.namespace, labels } },
    { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: RUNNER_NAME, namespace: o.namespace, labels }, data: plan },
    cronJob(RUNNER_NAME, []),
    ...(o.perNode ? [cronJob(`${RUNNER_NAME}-per-node`, ['--per-node'])] : []),
    ...monitoringExtras(o, RUNNER_NAME, labels),
  ];
}

/** The exporter (`manifest --runner serve`): its name, port and the port's name in the Service and ServiceMonitor. */
export const SERVE_NAME = 'kube-stream-probe-serve';
export const SERVE_PORT = 9465;
const SERVE_PORT_NAME = 'http-metrics';

export interface ServeOptions extends RunPlan {
  readonly namespace: string;
  readonly location: string;
  /** This cluster's name in the metrics (in a pod the context is only "in-cluster"). */
  readonly cluster: string;
  /** The scrape interval (seconds). */
  readonly everySeconds: number;
  readonly image: string;
  /** Also a ServiceMonitor (prometheus-operator's CRD); without it, the scrape job is printed for prometheus.yml. */
  readonly serviceMonitor: boolean;
  readonly prometheusRule: boolean;
  readonly grafanaDashboard: boolean;
}

/** The scrape_timeout the exporter's run needs (probe-endpoint.ts scrapeTimeoutFor: the rule serve refuses by). */
export const serveScrapeTimeoutSeconds = (plan: RunPlan): number => scrapeTimeoutFor(holdSpan(plan));

/** The /probe parameters for the plan (the query's names: config/plan.ts), as a ServiceMonitor's params or a scrape job's. */
export function serveParams(plan: RunPlan): Record<string, string[]> {
  const flags = planFlagValues(plan);
  return Object.fromEntries(PLAN_FIELDS.map((f) => [PLAN_NAMES.query[f], [flags[f]]]));
}

/**
 * `serve` in the cluster: its ServiceAccount (bound to the Role like the CronJob's), a Deployment of one replica
 * (restricted, read-only root, probes on /-/healthy), a Service on 9465, a NetworkPolicy that admits only that
 * port, and a ServiceMonitor when asked. The pod's own service account is the target (no kubeconfig): the
 * ServiceMonitor sends no `target`, the printed job `in-cluster`; both mean the current (only) context.
 */
export function serveDocuments(o: ServeOptions): unknown[] {
  const labels = { 'app.kubernetes.io/name': SERVE_NAME, 'app.kubernetes.io/part-of': 'kube-stream-probe' };
  const timeout = serveScrapeTimeoutSeconds(o);
  const monitor = o.serviceMonitor
    ? [
        {
          apiVersion: 'monitoring.coreos.com/v1',
          kind: 'ServiceMonitor',
          metadata: { name: SERVE_NAME, namespace: o.namespace, labels },
          spec: {
            selector: { matchLabels: labels },
            endpoints: [{ port: SERVE_PORT_NAME, path: '/probe', params: serveParams(o), interval: `${o.everySeconds}s`, scrapeTimeout: `${timeout}s` }],
          },
        },
      ]
    : [];
  const healthy = { httpGet: { path: '/-/healthy', port: SERVE_PORT_NAME }, periodSeconds: 10 };
  return [
    { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: RUNNER_NAME, namespace: o.namespace, labels } },
    {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: SERVE_NAME, namespace: o.namespace, labels },
      spec: {
        replicas: 1,
        selector: { matchLabels: labels },
        template: {
          metadata: { labels },
          spec: {
            serviceAccountName: RUNNER_NAME,
            enableServiceLinks: false,
            securityContext: RESTRICTED_POD,
            containers: [
              {
                name: 'serve',
                image: o.image,
                // The image's entry point is `runner.mjs serve` (container/Dockerfile's serve stage).
                args: ['--listen', `0.0.0.0:${SERVE_PORT}`, '--location', o.location, '--cluster-name', o.cluster, '--max-hold', `${holdSpan(o)}s`],
                ports: [{ name: SERVE_PORT_NAME, containerPort: SERVE_PORT, protocol: 'TCP' }],
                readinessProbe: healthy,
                livenessProbe: healthy,
                securityContext: restrictedContainer(1000),
                resources: { requests: { cpu: '250m', memory: '128Mi' }, limits: { memory: '256Mi' } },
              },
            ],
          },
        },
      },
    },
    {
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name: SERVE_NAME, namespace: o.namespace, labels },
      spec: { selector: labels, ports: [{ name: SERVE_PORT_NAME, port: SERVE_PORT, targetPort: SERVE_PORT_NAME, protocol: 'TCP' }] },
    },
    {
      apiVersion: 'networking.k8s.io/v1',
      kind: 'NetworkPolicy',
      metadata: { name: SERVE_NAME, namespace: o.namespace, labels },
      // Only the metrics port is reachable (from any namespace: Prometheus' is the cluster's choice); egress stays
      // open, the API server's address being the cluster's.
      spec: {
        podSelector: { matchLabels: labels },
        policyTypes: ['Ingress'],
        ingress: [{ from: [{ namespaceSelector: {} }], ports: [{ port: SERVE_PORT, protocol: 'TCP' }] }],
      },
    },
    ...monitor,
    ...monitoringExtras({ ...o, perNode: false }, SERVE_NAME, labels),
  ];
}
