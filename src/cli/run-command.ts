/** `kube-stream-probe run`: probes a real cluster from a kubeconfig, kubectl-style flags. */
import { terminalSafe } from '../text.js';
import { contextTarget } from '../probe/context-target.js';
import { KUBECTL_CLIENTS } from '../probe/kubectl-clients.js';
import { hostname } from 'node:os';
import { connectionFor } from '../kube/credentials.js';
import { loadKubeconfigFor } from '../kube/kubeconfig.js';
import { SecretRedactor } from '../kube/secrets.js';
import { perNodeDatums, reportDatums } from '../metrics/datums.js';
import { describeChoice } from '../probe/container-choice.js';
import { runPlan } from '../probe/runner.js';
import { NODE_CONCURRENCY, runPerNode, type PerNodeReport } from '../probe/per-node.js';
import { NODE_TARGET_SELECTOR, TARGET_SELECTOR } from '../kube/target.js';
import { BROKEN_VERDICTS, type ProbePlan, type ProbeReport, type Verdict } from '../probe/types.js';
import { EXIT, EXIT_CODES_HELP } from './exit-codes.js';
import { DEFAULT_MATRIX, READ_KEEPALIVES, holdSpan, parseDurationSeconds } from '../vocabulary.js';
import { PLAN_FLAGS, integer, named, oneOf, parse, planFromFlags, targetFlags } from './args.js';
import { NAME_RULES } from '../config/rules.js';
import { KUBECTL_LEGEND, diagnosisText, reportHeader, resultsTable, table, verdictTable } from './format.js';
import { exitCodeForSignal, type CommandIO } from './io.js';
import { PLAIN_PROGRESS_SECONDS, liveProgress } from './progress.js';
import { wireLogger } from './wire-log.js';
import { publishDatums, publishTarget, withPublishOutcome, type Publish } from './publish.js';
import { OUTPUT_HELP, emit, outputFormat, renderStructured, type OutputFormat } from './output.js';

export const RUN_HELP = `Usage: kube-stream-probe run [flags]

Opens exec and port-forward sessions to a probe target pod over SPDY and
WebSocket, holds them idle, checks they still work, and prints the A/B
verdict per operation and hold (SPDY ok + WebSocket fails = a hop breaks
WebSocket), with what kubectl ${KUBECTL_CLIENTS.filter((c) => c.id !== 'websocket-only')
  .map((c) => c.label)
  .join(', ')}, and clients without a fallback, would do there.

Flags:
  --kubeconfig PATH     kubeconfig (default: $KUBECONFIG's files merged as kubectl merges them,
                        then ~/.kube/config; inside a pod with neither, its service account,
                        mounted at KSP_SERVICE_ACCOUNT_DIR or the default path)
  --context NAME        kubeconfig context (default current-context)
  -n, --namespace NS    target namespace (default the context's, else default)
  --pod NAME            target pod running cat with a TCP echo port (default: the first
                        Running pod labelled ${TARGET_SELECTOR}, which
                        \`kube-stream-probe manifest\` deploys as probe-target-0)
  --selector K=V,...    find the target pod by these labels instead
  --container NAME      target container (default: as kubectl picks it, the pod's
                        kubectl.kubernetes.io/default-container annotation, else its first)
  --port N              the pod's TCP echo port for port-forward (default 8080)
  --ops LIST            exec,portforward,attach (default exec,portforward): attach joins the target's
                        own process (kubectl attach, run -it, debug --attach) on exec's channels
  --transports LIST     websocket,spdy (default both)
  --hold LIST           idle holds, e.g. 0s,65s,6m (default 0s)
  --keepalive LIST      kubectl,none,sdk: kubectl's pings; none at all (the path's idle timer); sdk: as
                        WebSocket-only SDK clients hold (no pings, their subprotocols, port-forward over the
                        kubelet's legacy protocol), which the WS-only column is read from (default kubectl,sdk)
  --hold-shape LIST     silent,output,input,tty: what moves during exec holds (default silent): output = the
                        pod writes a line every 2 s and the client nothing (tail -f); input = the client
                        writes every 2 s and the pod nothing. Each shape is its own row; a hop with one
                        idle timer per direction cuts output or input while silent survives; tty = a
                        terminal session (exec and attach, any hold): sized as kubectl sizes it, resized
                        after the hold, the size checked through the terminal each time
  --tty                 every exec and attach session with a terminal (kubectl exec -it / attach -it):
                        --hold-shape tty. attach joins the target's tty container (tty: true)
  --transfer SIZE       also stream SIZE bytes (8MiB, 64MiB; at most 1GiB) through exec (stdin → cat →
                        stdout, then the exit status: the kubectl cp path) and port-forward, on each
                        transport, byte-exact: MiB/s, first byte, longest stall, lost tail (default off)
  --transfer-shape LIST echo,upload,download,small: how the transfer moves, each its own row (default
                        echo): upload = into the pod only (kubectl cp file pod:, the pod counts what
                        arrived), download = out of it only (kubectl cp pod:file .), small = both ways in
                        512-byte writes (cp of many small files); port-forward carries echo and small
  --location NAME       where this runs, for results (default the host name)
  --cluster-name NAME   the cluster's name in results and metrics (default the kubeconfig context's;
                        in a pod it is only "in-cluster")
  --fail-on CLIENTS      which clients a broken path exits 1 for: kubectl (default: rows held as kubectl
                        holds, with its pings), websocket-only (SDK clients and browser terminals: the
                        WS-only column, and WebSocket on rows without pings), or any
  --exit-zero-on-finding
                        a broken path exits 0 (the results and metrics carry it): for schedulers that
                        treat a non-zero exit as the job failing; 2, 3 and 4 still fail
${OUTPUT_HELP}
  --follow-up-budget DURATION
                        how long the run may add sessions after its holds when they raise a question
                        they cannot answer: a device forgot an idle flow (the ladder brackets its idle
                        timeout), or a cut that pings did not prevent (a session writing data tells a
                        lifetime cap from a timer that counts only data); 0s: none (default: the longest
                        hold plus 10 s, at least 30 s)
  --echo-timeout MS     how long one echo may take (default 5000)
  --upgrade-timeout MS  request written to 101 (default 15000)
  --no-preflight        skip the RBAC SelfSubjectAccessReview preflight
  --per-node            probe the per-node targets (\`manifest --per-node\`, a DaemonSet labelled
                        ${NODE_TARGET_SELECTOR}) on every node, ${NODE_CONCURRENCY} nodes at a time,
                        and name the nodes where an operation fails (kubelet version, whether the
                        node declares ExtendWebSocketsToKubelet)
  -v, --wire-log        show each request and reply (line and headers) and the SPDY control frames
                        (stream headers, pings) on stderr, timestamped, credentials masked: what
                        kubectl -v=7/-v=8 shows; kubectl's own -v=N (--v=N, -v N) is taken as this
                        from 6 up, and ignored below
  --publish TARGET      none | cloudwatch | emf | prometheus: also publish the metrics (namespace
                        KubeStreamProbe); emf prints Embedded Metric Format lines on stderr for a log
                        shipper; cloudwatch uses the standard AWS credential chain and region;
                        prometheus pushes them (kube_stream_probe_*) to --pushgateway
  --pushgateway URL     the Prometheus Pushgateway for --publish prometheus (user:password@ in the URL
                        is sent as basic auth); each cluster's run replaces its own group
  -h, --help            this help

${EXIT_CODES_HELP}
`;

/** Which clients a non-zero exit is about (--fail-on). */
export const FAIL_ON = ['kubectl', 'websocket-only', 'any'] as const;
export type FailOn = (typeof FAIL_ON)[number];

/**
 * Whether a verdict is a finding for the clients --fail-on names:
 * - kubectl: a row held as kubectl holds (with its pings) broke on a transport — kubectl of some version uses it
 *   (≤1.29 SPDY, 1.31+ WebSocket first); a row without pings is not how kubectl holds, so it is no kubectl finding;
 * - websocket-only: the clients without a fallback and without pings (SDK clients, browser terminals): the WS-only
 *   forecast breaks, or WebSocket failed on a row held without pings;
 * - any: either.
 */
export function failsFor(v: Verdict, failOn: FailOn): boolean {
  const kubectl = v.keepalive === 'kubectl' && BROKEN_VERDICTS.includes(v.verdict);
  const wsOnly = v.kubectl?.find((k) => k.client === 'websocket-only')?.outcome === 'breaks' || (v.keepalive === 'none' && v.websocket === 'fail');
  return failOn === 'kubectl' ? kubectl : failOn === 'websocket-only' ? wsOnly : wsOnly || BROKEN_VERDICTS.includes(v.verdict);
}

/**
 * 1 when a broken path was found for the clients --fail-on names (it wins: it is a finding); else 3 when something
 * could not be measured (the API server unreachable included: `audit` is blocked by it, with the same 3); else 0.
 */
export function exitCodeFor(reports: readonly ProbeReport[], failOn: FailOn = 'kubectl'): number {
  const all = reports.flatMap((r) => r.verdicts);
  if (all.some((v) => failsFor(v, failOn))) return EXIT.BROKEN;
  if (all.some((v) => v.verdict === 'not-measured' || v.verdict === 'unreachable')) return EXIT.NOT_MEASURED;
  return EXIT.CLEAN;
}

export function renderReports(reports: readonly { path?: string; report: ProbeReport }[], output: OutputFormat, redactor: SecretRedactor): string {
  if (output !== 'table') {
    const doc = reports.length === 1 && reports[0]!.path === undefined ? reports[0]!.report : reports.map((r) => ({ path: r.path, ...r.report }));
    return renderStructured(output, reports, doc, redactor);
  }
  const parts = [
    ...reports.filter((r) => r.path === undefined).map((r) => reportHeader(r.report)),
    verdictTable(reports),
    KUBECTL_LEGEND,
    '',
    diagnosisText(reports),
    '',
    resultsTable(reports),
    '',
  ];
  return terminalSafe(redactor.redact(parts.filter((p, i, a) => !(p === '' && a[i - 1] === '')).join('\n'))) + '\n';
}

export function printReports(
  io: CommandIO,
  reports: readonly { path?: string; report: ProbeReport }[],
  output: OutputFormat,
  redactor: SecretRedactor,
  out?: string,
): void {
  emit(io, renderReports(reports, output, redactor), out);
}

export async function runCommand(argv: readonly string[], io: CommandIO): Promise<number> {
  const { values } = parse(argv, {
    ...PLAN_FLAGS,
    location: { type: 'string' },
    'cluster-name': { type: 'string' },
    'exit-zero-on-finding': { type: 'boolean' },
    'fail-on': { type: 'string' },
    output: { type: 'string', short: 'o' },
    'echo-timeout': { type: 'string' },
    'upgrade-timeout': { type: 'string' },
    'follow-up-budget': { type: 'string' },
    'no-preflight': { type: 'boolean' },
    publish: { type: 'string' },
    pushgateway: { type: 'string' },
    'wire-log': { type: 'boolean', short: 'v' },
    'per-node': { type: 'boolean' },
    out: { type: 'string' },
    help: { type: 'boolean', short: 'h' },
  });
  if (values.help) {
    io.out(RUN_HELP);
    return 0;
  }
  const output = outputFormat(values.output);
  const publish = publishTarget(values.publish, values.pushgateway);
  const sel = planFromFlags(values, { ...DEFAULT_MATRIX, keepalives: READ_KEEPALIVES });
  const redactor = new SecretRedactor();
  targetFlags(values);
  const location = named('location', values.location, NAME_RULES.label) ?? hostname();
  const clusterLabel = named('cluster-name', values['cluster-name'], NAME_RULES.label);
  const ctx = loadKubeconfigFor(values.kubeconfig, io.env, { context: values.context, namespace: values.namespace });
  const wireLog = values['wire-log'] ? wireLogger((t) => io.err(t), redactor) : undefined;
  const connection = { ...(await connectionFor(ctx, { env: io.env, redactor })), ...(wireLog ? { wireLog } : {}) };
  const plan: ProbePlan = {
    location,
    cluster: {
      ...contextTarget(ctx, { ...values, name: clusterLabel, port: integer('port', values.port, 1, 65535) }),
      connection: { ...connection, upgradeTimeoutMs: integer('upgrade-timeout', values['upgrade-timeout'], 100, 600_000) },
    },
    ...sel,
    echoTimeoutMs: integer('echo-timeout', values['echo-timeout'], 100, 600_000),
  };
  const findings = (code: number) => (values['exit-zero-on-finding'] && code === EXIT.BROKEN ? EXIT.CLEAN : code);
  const failOn = oneOf('fail-on', values['fail-on'], FAIL_ON, 'kubectl');
  if (values['per-node'])
    return perNodeRun(io, plan, output, redactor, values.out, publish, { skipPreflight: values['no-preflight'], signal: io.signal, findings, failOn });
  const longest = holdSpan(sel);
  // A terminal redraws a line each second from 5 s holds; a pipe or CI log gets a line every 10 s (progress.ts).
  const progress =
    io.interactive && longest >= 5
      ? liveProgress((t) => io.err(t), longest)
      : !io.interactive && longest > PLAIN_PROGRESS_SECONDS
        ? liveProgress((t) => io.err(t), longest, false)
        : undefined;
  let report: ProbeReport;
  try {
    const budget = values['follow-up-budget'];
    report = await runPlan(plan, {
      onProgress: progress?.onProgress,
      // kubectl's own line when it defaults to the first of several containers; -v says which container and why.
      onTarget: (t) => {
        if (t.kubectlSays) io.err(`${terminalSafe(redactor.redact(t.kubectlSays))}\n`);
        if (wireLog) io.err(`${terminalSafe(redactor.redact(describeChoice(t.pod, t)))}\n`);
      },
      skipPreflight: values['no-preflight'],
      signal: io.signal,
      ...(budget === undefined ? {} : { followUpBudgetMs: parseDurationSeconds('--follow-up-budget', budget) * 1000 }),
    });
  } finally {
    progress?.stop();
  }
  printReports(io, [{ report }], output, redactor, values.out);
  if (io.signal?.aborted) {
    io.err(`kube-stream-probe run: interrupted (${String(io.signal.reason)}); unfinished sessions are marked interrupted, nothing was published\n`);
    return exitCodeForSignal(String(io.signal.reason));
  }
  const delivered = await publishDatums(io, publish, reportDatums(report), plan);
  return withPublishOutcome(findings(exitCodeFor([report], failOn)), delivered);
}

/** `run --per-node`: every node's target, a table per node, and the nodes an operation fails on. */
async function perNodeRun(
  io: CommandIO,
  plan: ProbePlan,
  output: OutputFormat,
  redactor: SecretRedactor,
  out: string | undefined,
  publish: Publish,
  options: { skipPreflight?: boolean; signal?: AbortSignal; findings: (code: number) => number; failOn: FailOn },
): Promise<number> {
  const report = await runPerNode(plan, options);
  if (output === 'table') {
    const cells = (n: PerNodeReport['nodes'][number]) =>
      report.summary.map((s) => {
        const f = s.failing.find((x) => x.node === n.node);
        return f ? `FAIL ${f.class}` : 'ok';
      });
    const text = report.error
      ? `per-node probing found nothing to probe: ${report.error}\n`
      : [
          table(
            ['NODE', 'POD', 'KUBELET', 'WS TO KUBELET', ...report.summary.map((s) => `${s.operation.toUpperCase()} ${s.transport.toUpperCase()}`)],
            report.nodes.map((n) => [
              n.node,
              n.pod,
              n.kubeletVersion ?? '?',
              n.extendWebSockets === null ? '?' : n.extendWebSockets ? 'declared' : 'no',
              ...cells(n),
            ]),
          ),
          '',
          ...report.summary.map((s) => `- ${s.text}`),
          '',
          diagnosisText(report.nodes.map((n) => ({ path: n.node, report: n.report }))),
          '',
        ].join('\n');
    emit(io, terminalSafe(redactor.redact(text)), out);
  } else
    emit(
      io,
      renderStructured(
        output,
        report.nodes.map((n) => ({ path: n.node, report: n.report })),
        report,
        redactor,
      ),
      out,
    );
  // Interrupted, nothing is published (as in run): unfinished nodes would count as not failing.
  if (io.signal?.aborted) return exitCodeForSignal(String(io.signal.reason));
  const delivered = await publishDatums(io, publish, perNodeDatums(report), plan, true);
  if (report.error) return EXIT.NOT_MEASURED;
  const code = report.summary.some((s) => s.failing.length > 0)
    ? EXIT.BROKEN
    : exitCodeFor(
        report.nodes.map((n) => n.report),
        options.failOn,
      );
  return withPublishOutcome(options.findings(code), delivered);
}
