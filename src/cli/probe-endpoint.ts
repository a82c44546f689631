/**
 * `serve`'s blackbox-style `/probe?target=…&hold=…`: one run of the engine per scrape, answered with that run's
 * data points as Prometheus metrics (the contract's names, prometheus.ts), as blackbox_exporter answers a
 * `/probe?target=…&module=…` (https://github.com/prometheus/blackbox_exporter#prometheus-configuration).
 *
 * - The target is a kubeconfig context (kubectl's `--context`); none means the current one, or the pod's own
 *   service account in a pod without a kubeconfig. The cluster label is the context's name.
 * - The run must end inside the scrape: Prometheus says its timeout in `X-Prometheus-Scrape-Timeout-Seconds`
 *   (blackbox_exporter reads the same header and subtracts an offset, 0.5 s by default). A hold that cannot fit is
 *   refused with 400 before anything is dialled; a run still going at the deadline is aborted and answered 503,
 *   so the target's `up` is 0 and the body says which scrape_timeout it needs.
 * - Scrapes of the same target and plan that arrive while one runs (two Prometheus replicas) share its result;
 *   at most `maxConcurrent` runs go at once, the rest wait their turn (an API server is not a load-test target).
 */
import { contextTarget } from '../probe/context-target.js';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { errorMessage, isProbeError } from '../errors.js';
import { connectionFor } from '../kube/credentials.js';
import { loadKubeconfigFor } from '../kube/kubeconfig.js';
import { IN_CLUSTER_CONTEXT } from '../kube/in-cluster.js';
import { SecretRedactor } from '../kube/secrets.js';
import { reportDatums } from '../metrics/datums.js';
import { prometheusRegistry } from '../metrics/prometheus.js';
import { runPlan } from '../probe/runner.js';
import type { ProbePlan, ProbeReport } from '../probe/types.js';
import { Checker } from '../config/checker.js';
import { RUN_OVERHEAD_SECONDS } from '../config/lambda-limits.js';
import { PLAN_FIELDS, PLAN_NAMES, holdSpan, parsePlan } from '../config/plan.js';
import type { RunPlan } from '../vocabulary.js';
import { Gauge } from 'prom-client';
import { exitCodeFor, renderReports } from './run-command.js';
import { EXIT } from './exit-codes.js';

/** What every /probe run shares: where the kubeconfig is, where this runs, the target pod. */
export interface ProbeEndpointOptions {
  readonly kubeconfig?: string;
  readonly env: NodeJS.ProcessEnv;
  readonly location: string;
  /** The cluster label when the target is the pod's own service account (its context is only "in-cluster"). */
  readonly inClusterName?: string;
  readonly namespace?: string;
  readonly pod?: string;
  readonly selector?: string;
  readonly container?: string;
  readonly port?: number;
  readonly skipPreflight?: boolean;
  /** The longest hold a scrape may ask for (seconds). */
  readonly maxHoldSeconds: number;
  /** The timeout when the scraper does not say one (seconds): Prometheus' default scrape_timeout is 10 s. */
  readonly defaultTimeoutSeconds: number;
  readonly maxConcurrent: number;
  /** Aborted when the server stops: runs in flight end `interrupted`. */
  readonly signal?: AbortSignal;
  /** One line per run, for the server's log (never a secret). */
  readonly log?: (line: string) => void;
}

/** Subtracted from the scraper's timeout so the answer is written before Prometheus gives up (blackbox's default). */
export const TIMEOUT_OFFSET_SECONDS = 0.5;

/** The shortest scrape_timeout a plan's run fits in (whole seconds): its longest hold, the run's overhead, the offset. */
export const scrapeTimeoutFor = (longestHoldSeconds: number): number => Math.ceil(longestHoldSeconds + RUN_OVERHEAD_SECONDS + TIMEOUT_OFFSET_SECONDS);

export type ProbeAnswer = { readonly status: number; readonly type: string; readonly body: string; readonly outcome: ProbeOutcome };
export type ProbeOutcome = 'measured' | 'refused' | 'timeout' | 'error';

interface ProbeRequest {
  readonly target?: string;
  /** blackbox_exporter's `debug=true`: the run's table (its log) above the metrics, as text. */
  readonly debug: boolean;
  readonly selection: RunPlan;
  readonly deadlineSeconds: number;
  readonly key: string;
}

const TEXT = 'text/plain; charset=utf-8';
const refused = (body: string): ProbeAnswer => ({ status: 400, type: TEXT, body: `${body}\n`, outcome: 'refused' });

/** The query's plan, or a 400 naming what was wrong (the run flags' own checks, in the query's words). */
export function probeRequest(url: URL, headers: IncomingMessage['headers'], options: ProbeEndpointOptions): ProbeRequest | ProbeAnswer {
  // The run flags' plan (config/plan.ts), in the query's words: `hold "6x" is not a duration`.
  const c: Checker = new Checker('', { code: 'USAGE' });
  let sel: RunPlan;
  let target: string | undefined;
  let debug = false;
  try {
    const query: Record<string, string> = {};
    for (const name of new Set(url.searchParams.keys())) {
      const all = url.searchParams.getAll(name);
      if (all.length > 1) c.fail(name, `is given ${all.length} times; give it once (a list is comma-separated)`);
      query[name] = all[0]!;
    }
    const q = c.only(query, '', ['target', 'debug', ...PLAN_FIELDS.map((f) => PLAN_NAMES.query[f])], 'parameter');
    target = (q.target as string | undefined) || undefined;
    if (q.debug !== undefined && q.debug !== 'true' && q.debug !== 'false') c.fail('debug', `${JSON.stringify(q.debug)} is not true or false`);
    debug = q.debug === 'true';
    const raw = Object.fromEntries(PLAN_FIELDS.map((f) => [f, q[PLAN_NAMES.query[f]]]));
    sel = parsePlan({ checker: c, names: PLAN_NAMES.query, commaLists: true }, raw);
  } catch (err) {
    if (!isProbeError(err, 'USAGE')) throw err;
    return refused(errorMessage(err));
  }
  const longest = holdSpan(sel);
  if (longest > options.maxHoldSeconds) return refused(`hold: ${longest} s is longer than this server allows (--max-hold ${options.maxHoldSeconds} s)`);
  const header = headers['x-prometheus-scrape-timeout-seconds'];
  const said = typeof header === 'string' ? Number(header) : Number.NaN;
  const timeout = Number.isFinite(said) && said > 0 ? said : options.defaultTimeoutSeconds;
  const deadlineSeconds = timeout - TIMEOUT_OFFSET_SECONDS;
  const needs = longest + RUN_OVERHEAD_SECONDS;
  if (needs > deadlineSeconds)
    return refused(
      `hold: a ${longest} s hold needs about ${needs} s and the scrape allows ${timeout} s` +
        ` (${Number.isFinite(said) && said > 0 ? 'X-Prometheus-Scrape-Timeout-Seconds' : 'no scrape timeout said: --default-timeout'});` +
        ` set scrape_timeout (and scrape_interval) to at least ${scrapeTimeoutFor(longest)}s for this job`,
    );
  const key = JSON.stringify([target ?? '', sel, debug]);
  return { target, debug, selection: sel, deadlineSeconds, key };
}

/**
 * The Prometheus job that scrapes `serve` blackbox-style: each static target is a kubeconfig context, moved into
 * `?target=` and kept as `instance`; the address scraped is the exporter's. The help prints it; the test runs it.
 */
export function probeScrapeConfig(job: {
  readonly exporter: string;
  readonly targets: readonly string[];
  readonly hold: string;
  readonly interval: string;
  readonly timeout: string;
  readonly name?: string;
}): string {
  return [
    `- job_name: ${job.name ?? 'kube-stream-probe'}`,
    '  metrics_path: /probe',
    `  params: { hold: [${job.hold}] }`,
    `  scrape_interval: ${job.interval}`,
    `  scrape_timeout: ${job.timeout}`,
    `  static_configs: [{ targets: [${job.targets.join(', ')}] }]`,
    '  relabel_configs:',
    '    - { source_labels: [__address__], target_label: __param_target }',
    '    - { source_labels: [__param_target], target_label: instance }',
    `    - { target_label: __address__, replacement: '${job.exporter}' }`,
    '',
  ].join('\n');
}

/** A counting semaphore: at most `n` runs at once, the rest in arrival order. */
class Turns {
  private active = 0;
  private readonly waiting: (() => void)[] = [];
  constructor(private readonly n: number) {}
  async run<T>(f: () => Promise<T>): Promise<T> {
    if (this.active >= this.n) await new Promise<void>((r) => this.waiting.push(r));
    this.active++;
    try {
      return await f();
    } finally {
      this.active--;
      this.waiting.shift()?.();
    }
  }
}

/** The /probe handler: parse, share or queue, run, answer. Never throws: every outcome is an answer. */
export function probeEndpoint(options: ProbeEndpointOptions) {
  const inFlight = new Map<string, Promise<ProbeAnswer>>();
  const turns = new Turns(options.maxConcurrent);

  async function measure(req: ProbeRequest): Promise<ProbeAnswer> {
    const redactor = new SecretRedactor();
    const startedMs = performance.now();
    const deadline = AbortSignal.timeout(req.deadlineSeconds * 1000);
    const signal = options.signal ? AbortSignal.any([options.signal, deadline]) : deadline;
    let plan: ProbePlan;
    try {
      const ctx = loadKubeconfigFor(options.kubeconfig, options.env, { context: req.target, namespace: options.namespace });
      plan = {
        location: options.location,
        cluster: {
          ...contextTarget(ctx, { ...options, name: ctx.contextName === IN_CLUSTER_CONTEXT ? options.inClusterName : undefined }),
          connection: await connectionFor(ctx, { env: options.env, redactor }),
        },
        ...req.selection,
      };
    } catch (err) {
      // A target that is no context of the kubeconfig is the scrape's mistake (400); a kubeconfig or credentials
      // that fail are the server's (500). Both say why.
      const status = isProbeError(err, 'KUBECONFIG_INVALID') && err.context.field === 'contexts' ? 400 : 500;
      return { status, type: TEXT, body: `${redactor.redact(errorMessage(err))}\n`, outcome: status === 400 ? 'refused' : 'error' };
    }
    // Follow-up sessions (a forgotten flow's ladder, an activity check) only in the scrape's time left, with room to answer.
    const report: ProbeReport = await runPlan(plan, {
      skipPreflight: options.skipPreflight,
      signal,
      followUpUntilMs: startedMs + (req.deadlineSeconds - RUN_OVERHEAD_SECONDS) * 1000,
    });
    if (signal.aborted) {
      const why =
        deadline.aborted && !options.signal?.aborted
          ? `the run did not finish inside the scrape's ${req.deadlineSeconds + TIMEOUT_OFFSET_SECONDS} s: raise scrape_timeout for this job, or probe a shorter hold`
          : 'the server is stopping';
      return { status: 503, type: TEXT, body: `${why}; nothing was measured for ${plan.cluster.name}\n`, outcome: 'timeout' };
    }
    const registry = prometheusRegistry(reportDatums(report));
    // blackbox_exporter's two gauges (prober/handler.go), so its dashboards and alerts read this exporter too.
    new Gauge({
      name: 'probe_success',
      help: "1 when the run found nothing that breaks kubectl (run's exit 0 with --fail-on kubectl), 0 when it found a broken path or could not measure",
      registers: [registry],
    }).set(exitCodeFor([report], 'kubectl') === EXIT.CLEAN ? 1 : 0);
    new Gauge({ name: 'probe_duration_seconds', help: 'how long the run took, in seconds', registers: [registry] }).set(
      Math.round(performance.now() - startedMs) / 1000,
    );
    const metrics = await registry.metrics();
    if (req.debug)
      // blackbox_exporter's debug page: what the probe did, then the metrics a scrape would have stored.
      return {
        status: 200,
        type: TEXT,
        body: redactor.redact(`Logs for the probe:\n${renderReports([{ report }], 'table', redactor)}\n\nMetrics that would have been returned:\n${metrics}`),
        outcome: 'measured',
      };
    return { status: 200, type: 'text/plain; version=0.0.4; charset=utf-8', body: redactor.redact(metrics), outcome: 'measured' };
  }

  return async (url: URL, headers: IncomingMessage['headers']): Promise<ProbeAnswer> => {
    let req: ProbeRequest | ProbeAnswer;
    try {
      req = probeRequest(url, headers, options);
    } catch (err) {
      return refused(errorMessage(err));
    }
    if ('status' in req) return req;
    const shared = inFlight.get(req.key);
    if (shared !== undefined) return shared;
    const t0 = performance.now();
    const p = turns
      .run(() => measure(req))
      .catch(
        (err): ProbeAnswer => ({ status: 500, type: TEXT, body: `the probe failed: ${new SecretRedactor().redact(errorMessage(err))}\n`, outcome: 'error' }),
      )
      .finally(() => inFlight.delete(req.key));
    inFlight.set(req.key, p);
    const answer = await p;
    options.log?.(
      JSON.stringify({
        msg: 'probe',
        target: req.target ?? '(current context)',
        status: answer.status,
        outcome: answer.outcome,
        ms: Math.round(performance.now() - t0),
      }),
    );
    return answer;
  };
}

export function answer(res: ServerResponse, a: { status: number; type: string; body: string }): void {
  res.writeHead(a.status, { 'content-type': a.type, 'cache-control': 'no-store' });
  res.end(a.body);
}
