/**
 * `kube-stream-probe demo` (`npm start`): the embedded lab, the full matrix
 * through each simulated hop, and the verdict table. No cluster, no AWS.
 */
import { terminalSafe } from '../text.js';
import { TARGET_DEFAULTS } from '../kube/target.js';
import { fileURLToPath } from 'node:url';
import { startEmulatorWithKubeconfig } from '../../lab/emulator/kubeconfig.js';
import { probeError } from '../errors.js';
import { auditCommand } from './audit-command.js';
import { runCommand } from './run-command.js';
import { OUTPUT_HELP, emit, outputFormat, renderStructured } from './output.js';
import { DEMO_HOLD_SECONDS, DEMO_PATHS } from '../../lab/demo.js';
import type { Hop } from '../../lab/hops/common.js';
import { Emulator } from '../../lab/emulator/server.js';
import { SecretRedactor } from '../kube/secrets.js';
import { runPlan } from '../probe/runner.js';
import type { SessionOptions } from '../probe/session.js';
import type { ProbeReport } from '../probe/types.js';
import { DEFAULT_OPERATIONS, KEEPALIVES, TRANSPORTS } from '../vocabulary.js';
import { parse } from './args.js';
import { KUBECTL_LEGEND, diagnosisText, resultsTable, verdictTable } from './format.js';
import type { CommandIO } from './io.js';
import { liveProgress } from './progress.js';

export const DEMO_HELP = `Usage: kube-stream-probe demo [flags]

Starts the emulated API server and simulated hops in-process, probes exec and
port-forward over SPDY and WebSocket through each (holds 0s and ${DEMO_HOLD_SECONDS}s, keepalive
kubectl and none), and prints the verdicts. Needs no cluster and no AWS.
Always exits 0 when the demo ran (it is meant to find broken paths).

\`demo nodes\` (npm start -- nodes) probes every node of an emulated 1.36 cluster
whose node-b passes WebSockets to a kubelet with a failing runtime (the one
bad node), node-c's kubelet is unreachable and node-d's streams are cut after 3 s.

\`demo audit\` (npm start -- audit) runs \`kube-stream-probe audit\` against the emulator
playing a 1.35 API server whose RBAC has a get-only role, with the toggles of
lab/fixtures/audit-scan in its scan.

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
  // In the namespace step 1 deploys it to (manifest's default), not the context's.
  "  2. Probe it from here, with kubectl's idle timeouts in mind (60 s nginx/ALB, 350 s NLB/NAT):",
  `       npm run -s cli -- run -n ${TARGET_DEFAULTS.namespace} --hold 0s,65s,6m --keepalive kubectl,none -o html --out report.html`,
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
            cluster: {
              name: path.name,
              connection: { server: url, upgradeTimeoutMs: 3000 },
              namespace: emulator.namespace,
              pod: emulator.pod,
              // No container: the probe names it as kubectl does (container-choice.ts), as in a user's run.
              port: 8080,
            },
            operations: DEFAULT_OPERATIONS,
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
  const { values, positionals } = parse(
    argv,
    { output: { type: 'string', short: 'o' }, out: { type: 'string' }, details: { type: 'boolean' }, help: { type: 'boolean', short: 'h' } },
    true,
  );
  if (values.help) {
    io.out(DEMO_HELP);
    return 0;
  }
  if (positionals[0] === 'audit')
    return auditDemo(
      argv.filter((a) => a !== 'audit'),
      io,
    );
  if (positionals[0] === 'nodes')
    return nodesDemo(
      argv.filter((a) => a !== 'nodes'),
      io,
    );
  if (positionals.length) throw probeError('USAGE', `unexpected argument "${positionals[0]}" (they are "audit" and "nodes")`, { field: 'argv' });
  const output = outputFormat(values.output);
  if (output === 'table') {
    io.out(`kube-stream-probe demo: the emulated API server, reached directly and through ${DEMO_PATHS.length - 1} simulated hops.\n`);
    for (const p of DEMO_PATHS) io.out(`  ${p.name.padEnd(24)} ${p.stands}\n`);
    io.out(
      `Probing exec and port-forward over SPDY and WebSocket, holds 0s and ${DEMO_HOLD_SECONDS}s, keepalive kubectl and none, and SDK-client sessions for WS-only (about ${DEMO_HOLD_SECONDS + 4} s)...\n\n`,
    );
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
    emit(
      io,
      renderStructured(
        output,
        run.reports,
        run.reports.map((r) => ({ path: r.path, stands: r.stands, ...r.report })),
        redactor,
      ),
      values.out,
    );
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
  emit(io, terminalSafe(redactor.redact(text)), values.out);
  return 0;
}

/** No -o / --output among the flags: the table, which gets a line saying what runs. */
const tableOutput = (argv: readonly string[]) => !argv.includes('-o') && !argv.some((a) => a.startsWith('--output'));

/** The scan fixture: the toggles in a Dockerfile, a workflow, a shell profile and a manifest. */
const AUDIT_FIXTURE = fileURLToPath(new URL('../../lab/fixtures/audit-scan', import.meta.url));

/** `demo audit`: the audit against the emulator as a 1.35 server with a get-only role, scanning the fixture. */
async function auditDemo(argv: readonly string[], io: CommandIO): Promise<number> {
  const lab = await startEmulatorWithKubeconfig({
    tls: true,
    token: 'demo-audit-token-0001',
    serverVersion: 'v1.35.0',
    rbacObjects: {
      clusterRoles: [
        { metadata: { name: 'developers-exec' }, rules: [{ apiGroups: [''], resources: ['pods/exec', 'pods/portforward'], verbs: ['get'] }] },
        {
          metadata: { name: 'sre-streaming' },
          rules: [{ apiGroups: [''], resources: ['pods/exec', 'pods/attach', 'pods/portforward'], verbs: ['get', 'create'] }],
        },
      ],
      clusterRoleBindings: [
        { metadata: { name: 'developers-exec' }, roleRef: { kind: 'ClusterRole', name: 'developers-exec' }, subjects: [{ kind: 'Group', name: 'developers' }] },
        { metadata: { name: 'sre-streaming' }, roleRef: { kind: 'ClusterRole', name: 'sre-streaming' }, subjects: [{ kind: 'Group', name: 'sre' }] },
      ],
      roles: [],
      roleBindings: [],
    },
  });
  try {
    if (tableOutput(argv)) {
      io.out(
        'kube-stream-probe demo audit: the emulator as a 1.35 API server, a get-only developers role, and lab/fixtures/audit-scan scanned for toggles.\n\n',
      );
    }
    // The lab's path has no idle timeout to find: the demo holds 0 s (and says so), not the audit's 65 s.
    const holds = argv.some((a) => a === '--hold' || a.startsWith('--hold=')) ? [] : ['--hold', '0s'];
    return await auditCommand(['--kubeconfig', lab.kubeconfig, '--scan', AUDIT_FIXTURE, ...holds, ...argv], io);
  } finally {
    await lab.stop();
  }
}

/** `demo nodes`: per-node probing of an emulated 1.36 cluster with one bad node among healthy ones. */
async function nodesDemo(argv: readonly string[], io: CommandIO): Promise<number> {
  const lab = await startEmulatorWithKubeconfig({
    tls: true,
    token: 'demo-nodes-token-0001',
    serverVersion: 'v1.36.0',
    nodes: [
      { name: 'node-a', declaredFeatures: ['ExtendWebSocketsToKubelet'] },
      { name: 'node-b', declaredFeatures: ['ExtendWebSocketsToKubelet'], fault: { kind: 'stream-error' } },
      { name: 'node-c', fault: { kind: 'refuse' } },
      { name: 'node-d', kubeletVersion: 'v1.35.2', fault: { kind: 'cut', afterSeconds: 3 } },
    ],
  });
  try {
    if (tableOutput(argv)) {
      io.out('kube-stream-probe demo nodes: a 1.36 cluster of four nodes, one per fault, probed node by node (about 6 s)...\n\n');
    }
    await runCommand(['--kubeconfig', lab.kubeconfig, '--per-node', '--hold', '0s,5s', ...argv], io);
    return 0;
  } finally {
    await lab.stop();
  }
}
