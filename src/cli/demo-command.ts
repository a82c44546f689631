/**
 * `kube-stream-probe demo` (`npm start`): the embedded lab, the full matrix
 * through each simulated hop, and the verdict table. No cluster, no AWS.
 */
import { OUTPUT_HELP, emit, outputFormat, renderStructured } from './output.js';
import { DEMO_HOLD_SECONDS, DEMO_PATHS } from '../../lab/demo.js';
import type { Hop } from '../../lab/hops/common.js';
import { Emulator } from '../../lab/emulator/server.js';
import { SecretRedactor } from '../kube/secrets.js';
import { runPlan } from '../probe/runner.js';
import type { SessionOptions } from '../probe/session.js';
import type { ProbeReport } from '../probe/types.js';
import { KEEPALIVES, OPERATIONS, TRANSPORTS } from '../vocabulary.js';
import { oneOf, parse } from './args.js';
import { KUBECTL_LEGEND, diagnosisText, resultsTable, verdictTable } from './format.js';
import type { CommandIO } from './io.js';
import { liveProgress } from './progress.js';

export const DEMO_HELP = `Usage: kube-stream-probe demo [flags]

Starts the emulated API server and simulated hops in-process, probes exec and
port-forward over SPDY and WebSocket through each (holds 0s and ${DEMO_HOLD_SECONDS}s, keepalive
kubectl and none), and prints the verdicts. Needs no cluster and no AWS.
Always exits 0 when the demo ran (it is meant to find broken paths).

Flags:
${OUTPUT_HELP}
  --details            also print every session's numbers
  -h, --help           this help
`;

/** What to do after the demo: the same probe against your own cluster, then the deployment. */
export const DEMO_NEXT_STEPS = [
  'Next steps:',
  '  1. Deploy the probe target in a cluster you reach through the hops you care about:',
  '       npm run -s cli -- manifest | kubectl apply -f -',
  '  2. Probe it from here, with kubectl\'s idle timeouts in mind (60 s nginx/ALB, 350 s NLB/NAT):',
  '       npm run -s cli -- run --hold 0s,65s,6m --keepalive kubectl,none -o html --out report.html',
  '  3. Probe it continuously from each network location: see "Deploy on AWS" in the README.',
].join('\n');

export interface DemoRun {
  readonly reports: { path: string; stands: string; report: ProbeReport }[];
}

/** Runs the whole demo matrix and stops everything it started. */
export async function runDemo(onProgress?: SessionOptions['onProgress'], signal?: AbortSignal): Promise<DemoRun> {
  const emulator = await Emulator.start();
  const hops: Hop[] = [];
  try {
    const paths = await Promise.all(
      DEMO_PATHS.map(async (p) => {
        const hop = await p.start(emulator.url);
        if (hop) hops.push(hop);
        return { path: p, url: hop?.url ?? emulator.url };
      }),
    );
    const reports = await Promise.all(
      paths.map(async ({ path, url }) => ({
        path: path.name,
        stands: path.stands,
        report: await runPlan(
          {
            location: 'demo',
            cluster: { name: path.name, connection: { server: url, upgradeTimeoutMs: 3000 }, namespace: emulator.namespace, pod: emulator.pod, container: emulator.container, port: 8080 },
            operations: OPERATIONS,
            transports: TRANSPORTS,
            keepalives: KEEPALIVES,
            holdsSeconds: [0, DEMO_HOLD_SECONDS],
            echoTimeoutMs: 3000,
          },
          { onProgress, skipPreflight: true, signal },
        ),
      })),
    );
    return { reports };
  } finally {
    await Promise.all(hops.map((h) => h.close()));
    await emulator.stop();
  }
}

export async function demoCommand(argv: readonly string[], io: CommandIO): Promise<number> {
  const { values } = parse(argv, { output: { type: 'string', short: 'o' }, out: { type: 'string' }, details: { type: 'boolean' }, help: { type: 'boolean', short: 'h' } });
  if (values.help) {
    io.out(DEMO_HELP);
    return 0;
  }
  const output = outputFormat(values.output);
  if (output === 'table') {
    io.out(`kube-stream-probe demo: the emulated API server, reached directly and through ${DEMO_PATHS.length - 1} simulated hops.\n`);
    for (const p of DEMO_PATHS) io.out(`  ${p.name.padEnd(24)} ${p.stands}\n`);
    io.out(`Probing exec and port-forward over SPDY and WebSocket, holds 0s and ${DEMO_HOLD_SECONDS}s, keepalive kubectl and none (about ${DEMO_HOLD_SECONDS + 4} s)...\n\n`);
  }
  const progress = io.interactive ? liveProgress((t) => io.err(t), DEMO_HOLD_SECONDS) : undefined;
  let run: DemoRun;
  try {
    run = await runDemo(progress?.onProgress, io.signal);
  } finally {
    progress?.stop();
  }
  const redactor = new SecretRedactor();
  if (output !== 'table') {
    emit(io, renderStructured(output, run.reports, run.reports.map((r) => ({ path: r.path, stands: r.stands, ...r.report })), redactor), values.out);
    return 0;
  }
  const text = [
    verdictTable(run.reports),
    KUBECTL_LEGEND,
    '',
    'How to read it: SPDY ok + WebSocket fail (websocket-broken) = a hop breaks WebSocket. Whether kubectl survives it',
    'today depends on how it fails: a refused upgrade makes kubectl fall back to SPDY silently (fallback), anything else',
    '(a refused CONNECT, a timeout, a session cut after the upgrade) breaks it now (BREAKS). Diagnoses below say what',
    'was seen and what to check.',
    '',
    diagnosisText(run.reports),
    ...(values.details ? ['', resultsTable(run.reports)] : []),
    '',
    DEMO_NEXT_STEPS,
    '',
  ].join('\n');
  emit(io, redactor.redact(text), values.out);
  return 0;
}
