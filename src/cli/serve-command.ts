/**
 * `kube-stream-probe serve`: a long-running exporter for Prometheus, in the shape of blackbox_exporter. `/probe`
 * runs the engine once per scrape (probe-endpoint.ts) and answers with the run's metrics; `/metrics` is the
 * exporter's own (process, and its probes by outcome); `/-/healthy` for liveness. The CronJob with a Pushgateway
 * (`manifest --runner cronjob`) is the other way in; this one suits a team whose Prometheus already scrapes
 * blackbox-style targets.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { hostname } from 'node:os';
import { Counter, Gauge, Registry, collectDefaultMetrics } from 'prom-client';
import { VERSION } from '../version.js';
import { TODAYS_KUBECTL_LABEL } from '../probe/kubectl-clients.js';
import { errorMessage, probeError } from '../errors.js';
import { TARGET_DEFAULTS } from '../kube/target.js';
import { PROMETHEUS_PREFIX } from '../metrics/prometheus.js';
import { MAX_HOLD_SECONDS, parseDurationSeconds } from '../vocabulary.js';
import { integer, named, parse } from './args.js';
import { NAME_RULES } from '../config/rules.js';
import { EXIT } from './exit-codes.js';
import { exitCodeForSignal, type CommandIO } from './io.js';
import { RUN_OVERHEAD_SECONDS } from '../config/lambda-limits.js';
import { answer, probeEndpoint, probeScrapeConfig } from './probe-endpoint.js';

export const SERVE_DEFAULT_PORT = 9465;

export const SERVE_HELP = `Usage: kube-stream-probe serve [flags]

A Prometheus exporter in blackbox_exporter's shape. Each scrape of
/probe?target=CONTEXT&hold=65s runs exec and port-forward over SPDY and
WebSocket against that kubeconfig context (none: the current one, or in a pod
the pod's service account) and answers with the run's metrics
(kube_stream_probe_*, the same as --publish prometheus). /metrics is the
exporter's own; /-/healthy answers 200.

/probe parameters (the run flags' values): target, hold, ops, transports,
keepalive, hold_shape, transfer; debug=true answers the run's table and then
the metrics, as text (blackbox_exporter's debug). Each answer has
blackbox_exporter's probe_success (1: nothing breaks kubectl) and
probe_duration_seconds beside kube_stream_probe_*; /metrics has
kube_stream_probe_info and kube_stream_probe_last_run_timestamp_seconds. The run must fit the scrape: Prometheus sends
its scrape_timeout, and a hold that cannot fit is refused (400) with the
scrape_timeout it needs; a run still going then is stopped (503, up = 0).

Prometheus job (the targets are kubeconfig contexts; a 65 s hold needs about 71 s):
${probeScrapeConfig({ exporter: `kube-stream-probe:${SERVE_DEFAULT_PORT}`, targets: ['prod-eu', 'prod-us'], hold: '65s', interval: '5m', timeout: '90s' })
  .trimEnd()
  .replace(/^/gm, '  ')}

Flags:
  --listen HOST:PORT    where to listen (default 127.0.0.1:9465; in a pod 0.0.0.0:9465)
  --kubeconfig PATH     kubeconfig whose contexts are the targets (default as in run)
  --location NAME       the location label (default the host name)
  --cluster-name NAME   the cluster label when the target is the pod's own service account (its
                        context is only "in-cluster"); a kubeconfig's contexts keep their names
  -n, --namespace NS    target namespace (default each context's)
  --pod, --selector, --container, --port
                        the target pod, as in run (default: the pod labelled for the probe)
  --max-hold DURATION   the longest hold a scrape may ask for (default 10m)
  --default-timeout DURATION
                        the scrape timeout when the scraper says none (default 10s)
  --max-concurrent N    runs at once; more scrapes wait their turn (default 4); the same
                        target and plan scraped while it runs share the run
  --no-preflight        skip the RBAC SelfSubjectAccessReview preflight
  -h, --help            this help
`;

function listenAddress(value: string | undefined): { host: string; port: number } {
  if (value === undefined) return { host: '127.0.0.1', port: SERVE_DEFAULT_PORT };
  const m = /^(\[[0-9a-fA-F:]+\]|[^:]*):(\d+)$/.exec(value);
  const port = m ? Number(m[2]) : Number.NaN;
  if (!m || !Number.isInteger(port) || port > 65535)
    throw probeError('USAGE', `--listen: "${value}" is not HOST:PORT (e.g. 0.0.0.0:${SERVE_DEFAULT_PORT})`, { field: 'listen' });
  return { host: m[1]!.replace(/^\[|\]$/g, '') || '0.0.0.0', port };
}

const seconds = (flag: string, value: string | undefined, fallback: number) => (value === undefined ? fallback : parseDurationSeconds(`--${flag}`, value));

export async function serveCommand(argv: readonly string[], io: CommandIO, onListening?: (address: AddressInfo) => void): Promise<number> {
  const { values } = parse(argv, {
    listen: { type: 'string' },
    kubeconfig: { type: 'string' },
    location: { type: 'string' },
    'cluster-name': { type: 'string' },
    namespace: { type: 'string', short: 'n' },
    pod: { type: 'string' },
    selector: { type: 'string' },
    container: { type: 'string' },
    port: { type: 'string' },
    'max-hold': { type: 'string' },
    'default-timeout': { type: 'string' },
    'max-concurrent': { type: 'string' },
    'no-preflight': { type: 'boolean' },
    help: { type: 'boolean', short: 'h' },
  });
  if (values.help) {
    io.out(SERVE_HELP);
    return 0;
  }
  const { host, port } = listenAddress(values.listen);
  const maxHoldSeconds = seconds('max-hold', values['max-hold'], 600);
  if (maxHoldSeconds > MAX_HOLD_SECONDS)
    throw probeError('USAGE', `--max-hold: longer than the longest hold any runner accepts (${MAX_HOLD_SECONDS / 3600} h)`, { field: 'max-hold' });
  const defaultTimeoutSeconds = seconds('default-timeout', values['default-timeout'], 10);
  if (defaultTimeoutSeconds < RUN_OVERHEAD_SECONDS + 1)
    throw probeError('USAGE', `--default-timeout: at least ${RUN_OVERHEAD_SECONDS + 1}s (a run with no hold needs about ${RUN_OVERHEAD_SECONDS} s)`, {
      field: 'default-timeout',
    });

  const own = new Registry();
  collectDefaultMetrics({ register: own, prefix: `${PROMETHEUS_PREFIX}_exporter_` });
  const probes = new Counter({
    name: `${PROMETHEUS_PREFIX}_exporter_probes_total`,
    help: '/probe scrapes answered, by outcome: measured (200), refused (400: a bad target or query), timeout (503), error (500)',
    labelNames: ['outcome'],
    registers: [own],
  });
  for (const outcome of ['measured', 'refused', 'timeout', 'error']) probes.inc({ outcome }, 0);
  // Prometheus' info-metric convention: what is running, as labels on a constant 1.
  new Gauge({
    name: `${PROMETHEUS_PREFIX}_info`,
    help: "the exporter's version and the kubectl the verdicts call today's",
    labelNames: ['version', 'todays_kubectl'],
    registers: [own],
  }).set({ version: VERSION, todays_kubectl: TODAYS_KUBECTL_LABEL }, 1);
  const lastRun = new Gauge({
    name: `${PROMETHEUS_PREFIX}_last_run_timestamp_seconds`,
    help: 'when each target was last measured (a /probe answered 200), Unix time in seconds: alert on time() minus it',
    labelNames: ['target'],
    registers: [own],
  });

  const stopping = new AbortController();
  const probe = probeEndpoint({
    kubeconfig: values.kubeconfig,
    env: io.env,
    location: named('location', values.location, NAME_RULES.label) ?? hostname(),
    inClusterName: named('cluster-name', values['cluster-name'], NAME_RULES.label),
    namespace: values.namespace,
    pod: values.pod,
    selector: values.selector,
    container: values.container,
    port: integer('port', values.port, 1, 65535) ?? TARGET_DEFAULTS.port,
    skipPreflight: values['no-preflight'],
    maxHoldSeconds,
    defaultTimeoutSeconds,
    maxConcurrent: integer('max-concurrent', values['max-concurrent'], 1, 64) ?? 4,
    signal: stopping.signal,
    log: (l) => io.err(`${l}\n`),
  });

  const server = http.createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://exporter');
    if (req.method !== 'GET' && req.method !== 'HEAD') return answer(res, { status: 405, type: 'text/plain', body: 'GET only\n' });
    if (url.pathname === '/probe') {
      probe(url, req.headers).then(
        (a) => {
          probes.inc({ outcome: a.outcome });
          if (a.outcome === 'measured') lastRun.set({ target: url.searchParams.get('target') ?? '' }, Date.now() / 1000);
          answer(res, a);
        },
        (err) => answer(res, { status: 500, type: 'text/plain', body: `${errorMessage(err)}\n` }),
      );
      return;
    }
    if (url.pathname === '/metrics') {
      own.metrics().then(
        (body) => answer(res, { status: 200, type: own.contentType, body }),
        (err) => answer(res, { status: 500, type: 'text/plain', body: `${errorMessage(err)}\n` }),
      );
      return;
    }
    if (url.pathname === '/-/healthy') return answer(res, { status: 200, type: 'text/plain', body: 'OK\n' });
    if (url.pathname === '/')
      return answer(res, {
        status: 200,
        type: 'text/plain; charset=utf-8',
        body: 'kube-stream-probe exporter: /probe?target=CONTEXT&hold=65s, /metrics, /-/healthy (kube-stream-probe serve --help)\n',
      });
    answer(res, { status: 404, type: 'text/plain', body: 'not found: /probe, /metrics, /-/healthy\n' });
  });
  // A scrape never sends a body, and a long hold keeps the socket open: the server's default timeouts stay off it.
  server.requestTimeout = 0;
  try {
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, host, () => resolve());
    });
  } catch (err) {
    io.err(`kube-stream-probe serve: cannot listen on ${host}:${port} (${(err as NodeJS.ErrnoException).code ?? errorMessage(err)})\n`);
    return EXIT.USAGE;
  }
  const address = server.address() as AddressInfo;
  io.err(`kube-stream-probe serve: listening on http://${address.address}:${address.port} (/probe, /metrics)\n`);
  onListening?.(address);
  const signal = io.signal;
  if (!signal) return 0;
  await new Promise<void>((r) => (signal.aborted ? r() : signal.addEventListener('abort', () => r(), { once: true })));
  stopping.abort('stopping');
  await new Promise<void>((r) => {
    server.close(() => r());
    server.closeIdleConnections();
  });
  return exitCodeForSignal(String(signal.reason));
}
