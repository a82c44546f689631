/** `kube-stream-probe audit`: the whole pre-upgrade audit, read-only, then the A/B of `run`. */
import { terminalSafe } from '../text.js';
import { contextTarget } from '../probe/context-target.js';
import { hostname } from 'node:os';
import { runAudit } from '../audit/audit.js';
import { auditHtml, auditText } from '../audit/format.js';
import { connectionFor } from '../kube/credentials.js';
import { loadKubeconfigFor } from '../kube/kubeconfig.js';
import { SecretRedactor } from '../kube/secrets.js';
import { EXIT } from './exit-codes.js';
import { exitCodeForSignal, type CommandIO } from './io.js';
import { PLAN_FLAGS, integer, parse, planFromFlags, targetFlags } from './args.js';
import { DEFAULT_MATRIX, READ_KEEPALIVES } from '../vocabulary.js';
import { emit, outputFormat } from './output.js';
import { holdToCross } from '../config/device-holds.js';

/** The audit's holds when --hold is not given: 0 s, and past nginx's and AWS ALB's 60 s idle timeout. */
export const AUDIT_HOLDS_SECONDS: readonly number[] = [0, holdToCross(60)];

export const AUDIT_HELP = `Usage: kube-stream-probe audit [flags]

The pre-upgrade audit, read-only, each finding with its evidence and what to do:
  - the server version and its streaming feature gates (from /metrics, when the
    caller may get it), and its own streaming counters, read per version
    (absent is not zero: a counter the version does not have is not read);
  - every Role/ClusterRole granting pods/exec, pods/attach or pods/portforward,
    whether it has create as well as get, and who is bound to it;
  - the kubectl clients on PATH and the kubeconfig's proxy (https + < 1.33 works
    only by falling back);
  - KUBECTL_REMOTE_COMMAND_WEBSOCKETS / KUBECTL_PORT_FORWARD_WEBSOCKETS left in
    the files under --scan (GA stops honouring them);
  - then the A/B of \`run\`, and one verdict: ready, ready after fixes (in order of
    likelihood), or blocked.

Flags:
  --kubeconfig, --context, -n/--namespace   as in kubectl (and run)
  --pod, --selector, --container, --port    the probe target, as in run
  --hold LIST, --keepalive LIST, --ops LIST, --transports LIST   the A/B, as in run (default hold 0s,65s: past
                           nginx's and AWS ALB's 60 s; NAT gateways and NLBs (350 s) need 6m; the verdict says
                           which idle timeouts its longest hold could not see)
  --scan DIR[,DIR…]        directories to search for the toggles (repeatable)
  --no-ab                  skip the A/B
  -o, --output FORMAT      table | json | html
  --out FILE               write the report to FILE instead of stdout
  -h, --help               this help

Exit codes: 0 ready, 1 ready after fixes, 3 blocked (could not establish), 2 usage;
130/143 interrupted.
`;

export async function auditCommand(argv: readonly string[], io: CommandIO): Promise<number> {
  const { values } = parse(argv, {
    ...PLAN_FLAGS,
    scan: { type: 'string', multiple: true },
    'no-ab': { type: 'boolean' },
    output: { type: 'string', short: 'o' },
    out: { type: 'string' },
    help: { type: 'boolean', short: 'h' },
  });
  if (values.help) {
    io.out(AUDIT_HELP);
    return 0;
  }
  const output = outputFormat(values.output);
  const redactor = new SecretRedactor();
  targetFlags(values);
  const ctx = loadKubeconfigFor(values.kubeconfig, io.env, { context: values.context, namespace: values.namespace });
  const connection = await connectionFor(ctx, { env: io.env, redactor });
  const report = await runAudit(ctx, connection, {
    scan: (values.scan ?? []).flatMap((s) => s.split(',')).filter(Boolean),
    pathEnv: io.env.PATH,
    skipAb: values['no-ab'],
    signal: io.signal,
    plan: {
      location: hostname(),
      cluster: contextTarget(ctx, { ...values, port: integer('port', values.port, 1, 65535) }),
      // Held past the commonest idle class by default (nginx's and AWS ALB's 60 s): an audit that holds 0 s sees no
      // idle timeout at all, and idle timeouts are half of what it is for (issue 53).
      ...planFromFlags(values, { ...DEFAULT_MATRIX, keepalives: READ_KEEPALIVES, holdsSeconds: AUDIT_HOLDS_SECONDS }),
    },
  });
  const text = output === 'json' ? JSON.stringify(report, null, 2) + '\n' : output === 'html' ? auditHtml(report) : auditText(report);
  emit(io, output === 'table' ? terminalSafe(redactor.redact(text)) : redactor.redact(text), values.out);
  if (io.signal?.aborted) return exitCodeForSignal(String(io.signal.reason));
  return report.verdict === 'ready' ? EXIT.CLEAN : report.verdict === 'ready-after-fixes' ? EXIT.BROKEN : EXIT.NOT_MEASURED;
}
