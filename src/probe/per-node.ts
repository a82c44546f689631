/**
 * Per-node probing: one target pod on every node (`manifest --per-node`, a
 * DaemonSet), each probed over both transports, with its node's kubelet
 * version and whether the node declares ExtendWebSocketsToKubelet. From 1.36
 * the API server passes WebSockets to such nodes' kubelets instead of
 * translating them itself, so "exec fails only for pods on some nodes" is a
 * real failure shape; the summary names those nodes, and what sets them apart.
 */
import { errorCodeOf, errorMessage } from '../errors.js';
import { RestClient, minorVersion, serverVersion } from '../kube/rest.js';
import { NODE_TARGET_SELECTOR } from '../kube/target.js';
import { OPERATIONS, TRANSPORTS, type Operation, type Transport } from '../vocabulary.js';
import { runPlan, type RunOptions } from './runner.js';
import { StartPacer } from './start-pacer.js';
import type { ProbePlan, ProbeReport } from './types.js';
import { VERSION } from '../version.js';

/** At most this many nodes are probed at once (each runs its whole matrix concurrently). */
export const NODE_CONCURRENCY = 4;

export interface NodeTarget {
  readonly pod: string;
  readonly node: string;
  readonly kubeletVersion: string | null;
  /** The node declares ExtendWebSocketsToKubelet (its WebSockets go to its kubelet from 1.36); null when unknown. */
  readonly extendWebSockets: boolean | null;
}

export interface NodeResult extends NodeTarget {
  readonly report: ProbeReport;
}

export interface NodeFailureSummary {
  readonly operation: Operation;
  readonly transport: Transport;
  readonly probed: number;
  readonly failing: readonly {
    readonly node: string;
    readonly class: string;
    readonly kubeletVersion: string | null;
    readonly extendWebSockets: boolean | null;
  }[];
  /** One sentence, for the table and the log. */
  readonly text: string;
}

export interface PerNodeReport {
  readonly probeVersion: string;
  readonly location: string;
  readonly cluster: string;
  readonly selector: string;
  readonly nodes: readonly NodeResult[];
  readonly summary: readonly NodeFailureSummary[];
  /** Nodes with a target that were not probed (more than maxNodes). */
  readonly skippedNodes?: readonly string[];
  /** The operations × transports each node was (or was to be) probed with. */
  readonly operations: readonly Operation[];
  readonly transports: readonly Transport[];
  /** Why nothing was probed (no per-node target found, or it could not be listed). */
  readonly error?: string;
  /** Set when the targets could not be listed because the API server could not be reached (DIAL_REFUSED…): the main target's results say why. */
  readonly errorCode?: string;
}

export interface PerNodeOptions extends RunOptions {
  readonly selector?: string;
  /** Nodes probed at once. @default NODE_CONCURRENCY */
  readonly concurrency?: number;
  /** Probe at most this many nodes (the Lambda: one wave that fits its time budget); the rest are listed as skipped. */
  readonly maxNodes?: number;
}

type PodItem = { metadata?: { name?: string }; spec?: { nodeName?: string }; status?: { phase?: string } };
type NodeItem = { status?: { nodeInfo?: { kubeletVersion?: string }; declaredFeatures?: string[] } };

/** The Running per-node targets, and what each node says of itself (GET /api/v1/nodes/NAME, when allowed). */
export async function discoverNodeTargets(rest: RestClient, namespace: string, selector = NODE_TARGET_SELECTOR): Promise<NodeTarget[] | { error: string }> {
  const r = await rest.request('GET', `/api/v1/namespaces/${encodeURIComponent(namespace)}/pods?labelSelector=${encodeURIComponent(selector)}`);
  if (r.status !== 200)
    return { error: `listing pods labelled ${selector} in ${namespace} answered ${r.status}${r.kubeStatus ? `: ${r.kubeStatus.message}` : ''}` };
  const pods = ((r.body as { items?: PodItem[] } | undefined)?.items ?? []).filter(
    (p) => p.status?.phase === 'Running' && p.metadata?.name && p.spec?.nodeName,
  );
  return Promise.all(
    pods.map(async (p): Promise<NodeTarget> => {
      const node = p.spec!.nodeName!;
      const n = await rest.request('GET', `/api/v1/nodes/${encodeURIComponent(node)}`).catch(() => undefined);
      const item = n?.status === 200 ? (n.body as NodeItem) : undefined;
      return {
        pod: p.metadata!.name!,
        node,
        kubeletVersion: item?.status?.nodeInfo?.kubeletVersion ?? null,
        extendWebSockets: item ? (item.status?.declaredFeatures ?? []).includes('ExtendWebSocketsToKubelet') : null,
      };
    }),
  );
}

/** The class of a failed session, for the summary: its diagnosis code (what it means for the path). */
function failureClass(report: ProbeReport, operation: Operation, transport: Transport): string | undefined {
  const failed = report.results.filter((r) => r.operation === operation && r.transport === transport && !r.ok);
  if (failed.length === 0) return undefined;
  const verdicts = report.verdicts.filter((v) => v.operation === operation);
  const code = verdicts.flatMap((v) => v.diagnosis).find((d) => d.code !== 'silent-fallback' && d.code !== 'kubectl-breaks-today')?.code;
  return code ?? failed[0]!.errorCode ?? failed[0]!.upgrade.errorCode ?? 'failed';
}

export function summarizeNodes(nodes: readonly NodeResult[], serverMinor: number | null): NodeFailureSummary[] {
  const out: NodeFailureSummary[] = [];
  for (const operation of OPERATIONS) {
    for (const transport of TRANSPORTS) {
      const probed = nodes.filter((n) => n.report.results.some((r) => r.operation === operation && r.transport === transport));
      if (probed.length === 0) continue;
      const failing = probed.flatMap((n) => {
        const c = failureClass(n.report, operation, transport);
        return c ? [{ node: n.node, class: c, kubeletVersion: n.kubeletVersion, extendWebSockets: n.extendWebSockets }] : [];
      });
      const what = `${transport === 'websocket' ? 'WebSocket' : 'SPDY'} ${operation}`;
      let text: string;
      if (failing.length === 0) text = `${what} works on all ${probed.length} nodes`;
      else if (failing.length === probed.length)
        text = `${what} fails on every node (${failing.map((f) => `${f.node}: ${f.class}`).join(', ')}): not a per-node problem`;
      else {
        const why = failing
          .map((f) => `${f.node} (kubelet ${f.kubeletVersion ?? '?'}${f.extendWebSockets ? ', declares ExtendWebSocketsToKubelet' : ''}): ${f.class}`)
          .join('; ');
        const passthrough =
          transport === 'websocket' && (serverMinor ?? 0) >= 36 && failing.every((f) => f.extendWebSockets) && probed.some((n) => !n.extendWebSockets);
        text = `${what} fails only on ${failing.length} of ${probed.length} nodes: ${why}${passthrough ? '. Those nodes get the WebSocket passed through to their kubelet; the others are translated at the API server' : ''}`;
      }
      out.push({ operation, transport, probed: probed.length, failing, text });
    }
  }
  return out;
}

/**
 * Probes every per-node target with `plan`'s matrix, NODE_CONCURRENCY nodes at a time; the RBAC preflight
 * runs once (it is the same for every pod of the DaemonSet).
 */
export async function runPerNode(plan: ProbePlan, options: PerNodeOptions = {}): Promise<PerNodeReport> {
  const selector = options.selector ?? NODE_TARGET_SELECTOR;
  const rest = new RestClient(plan.cluster.connection);
  let targets: NodeTarget[] | { error: string; errorCode?: string };
  let serverMinor: number | null = null;
  try {
    // An unreachable API server is a result, not an exception: it must not take the main target's down with it.
    targets = await discoverNodeTargets(rest, plan.cluster.namespace, selector).catch((err: unknown) => ({
      error: `the per-node targets could not be listed: ${errorMessage(err)}`,
      errorCode: errorCodeOf(err),
    }));
    if (!('error' in targets)) serverMinor = minorVersion((await serverVersion(rest)).version?.gitVersion);
  } finally {
    await rest.close();
  }
  const base = {
    probeVersion: VERSION,
    location: plan.location,
    cluster: plan.cluster.name,
    selector,
    operations: plan.operations,
    transports: plan.transports,
  };
  if ('error' in targets) return { ...base, nodes: [], summary: [], ...targets };
  if (targets.length === 0)
    return {
      ...base,
      nodes: [],
      summary: [],
      error: `no Running pod labelled ${selector} in ${plan.cluster.namespace}: deploy them with \`kube-stream-probe manifest --per-node\``,
    };
  const results: NodeResult[] = [];
  const sorted = [...targets].sort((a, b) => a.node.localeCompare(b.node));
  const queue = sorted.slice(0, options.maxNodes ?? sorted.length);
  // The nodes' sessions share this process's CPU: one pacer for all of them (start-pacer.ts).
  const pacer = options.pacer === null ? null : (options.pacer ?? new StartPacer());
  const skippedNodes = sorted.slice(queue.length).map((t) => t.node);
  let first = true;
  const worker = async () => {
    for (let t = queue.shift(); t; t = queue.shift()) {
      if (options.signal?.aborted) return;
      const skipPreflight = options.skipPreflight || !first;
      first = false;
      // Per node the question is "does streaming to this node's pods work": no transfer, no shaped holds (N × 64 MiB
      // would cost more than it tells), for the CLI and the Lambda alike.
      // Transfers, shaped holds and SDK clients' sessions are the main target's questions, not a node's.
      const keepalives = plan.keepalives.filter((k) => k !== 'sdk');
      const nodePlan: ProbePlan = {
        ...plan,
        cluster: { ...plan.cluster, pod: t.pod },
        keepalives: keepalives.length ? keepalives : ['kubectl'],
        transferBytes: undefined,
        holdShapes: undefined,
        transferShapes: undefined,
      };
      // A node's path is the cluster's path to its kubelet: the main target's run asks the follow-up questions.
      const report = await runPlan(nodePlan, { ...options, skipPreflight, pacer, followUpBudgetMs: 0 });
      results.push({ ...t, report });
    }
  };
  await Promise.all(Array.from({ length: Math.min(options.concurrency ?? NODE_CONCURRENCY, queue.length) }, worker));
  results.sort((a, b) => a.node.localeCompare(b.node));
  return { ...base, nodes: results, summary: summarizeNodes(results, serverMinor), ...(skippedNodes.length ? { skippedNodes } : {}) };
}
