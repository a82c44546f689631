/**
 * The kubelets' own count of WebSocket streams passed through to them (from 1.36, ExtendWebSocketsToKubelet):
 * `kubelet_websocket_streaming_requests_total{subresource}`, read through the API server's node proxy
 * (`GET /api/v1/nodes/NAME/proxy/metrics`) where the caller may. Only kubelets of 1.36 or later are read: below
 * that the counter does not exist (absent is not zero), and their nodes/proxy is never touched.
 *
 * nodes/proxy is as strong as exec on every pod of the node (it reaches the whole kubelet API): a 403 is
 * reported with that warning, never as a finding to "fix" by granting it.
 */
import { minorVersion, type RestClient } from '../kube/rest.js';
import { errorMessage } from '../errors.js';
import { parseMetrics } from './prometheus.js';

export const KUBELET_COUNTER = 'kubelet_websocket_streaming_requests_total';
const KUBELET_COUNTER_SINCE = 36;
/** Nodes read at most, in name order (a large fleet is sampled, and says so). */
export const KUBELET_AUDIT_MAX_NODES = 20;

export interface KubeletReading {
  readonly node: string;
  readonly kubeletVersion: string | null;
  /**
   * read: counted; not-in-version: the kubelet predates the counter (not read); not-seen: 1.36+ but no sample —
   * a labelled counter shows only once a stream was counted, so no WebSocket stream has been passed to this
   * kubelet since it started (or it does not expose the counter).
   */
  readonly state: 'read' | 'not-in-version' | 'not-seen';
  readonly total: number | null;
  readonly bySubresource: Readonly<Record<string, number>>;
}

export interface KubeletAudit {
  /** read: every listed node's state is known; forbidden/failed: see detail (nothing, or only part, was read). */
  readonly state: 'read' | 'forbidden' | 'failed';
  readonly detail?: string;
  readonly nodes: readonly KubeletReading[];
  /** Nodes beyond KUBELET_AUDIT_MAX_NODES, not read. */
  readonly skippedNodes: readonly string[];
}

type NodeItem = { metadata?: { name?: string }; status?: { nodeInfo?: { kubeletVersion?: string } } };

export async function readKubeletCounters(rest: RestClient, maxNodes = KUBELET_AUDIT_MAX_NODES): Promise<KubeletAudit> {
  let items: NodeItem[];
  try {
    const r = await rest.request('GET', '/api/v1/nodes');
    if (r.status === 401 || r.status === 403)
      return {
        state: 'forbidden',
        detail: `${r.status} on list nodes: the kubelet counters need list on nodes (and get on nodes/proxy)`,
        nodes: [],
        skippedNodes: [],
      };
    if (r.status !== 200) return { state: 'failed', detail: `list nodes answered ${r.status}`, nodes: [], skippedNodes: [] };
    items = ((r.body as { items?: NodeItem[] } | undefined)?.items ?? []).filter((n) => n.metadata?.name);
  } catch (err) {
    return { state: 'failed', detail: errorMessage(err), nodes: [], skippedNodes: [] };
  }
  const sorted = [...items].sort((a, b) => a.metadata!.name!.localeCompare(b.metadata!.name!));
  const nodes: KubeletReading[] = [];
  for (const n of sorted.slice(0, maxNodes)) {
    const node = n.metadata!.name!;
    const kubeletVersion = n.status?.nodeInfo?.kubeletVersion ?? null;
    const minor = minorVersion(kubeletVersion);
    if (minor !== null && minor < KUBELET_COUNTER_SINCE) {
      nodes.push({ node, kubeletVersion, state: 'not-in-version', total: null, bySubresource: {} });
      continue;
    }
    let r;
    try {
      r = await rest.request('GET', `/api/v1/nodes/${encodeURIComponent(node)}/proxy/metrics`, undefined, undefined, { accept: 'text/plain', fullText: true });
    } catch (err) {
      return { state: 'failed', detail: `GET nodes/${node}/proxy/metrics: ${errorMessage(err)}`, nodes, skippedNodes: [] };
    }
    if (r.status === 401 || r.status === 403) {
      return {
        state: 'forbidden',
        detail: `${r.status} on get nodes/proxy (node ${node}): the kubelet counters are not read. nodes/proxy reaches the whole kubelet API, as strong as exec on every pod of the node: grant it to the audit only if your policy allows, or read ${KUBELET_COUNTER} from your own Prometheus.`,
        nodes,
        skippedNodes: [],
      };
    }
    if (r.status !== 200) return { state: 'failed', detail: `GET nodes/${node}/proxy/metrics answered ${r.status}`, nodes, skippedNodes: [] };
    const samples = parseMetrics(r.fullText ?? '').filter((s) => s.name === KUBELET_COUNTER);
    if (samples.length === 0) {
      nodes.push({ node, kubeletVersion, state: 'not-seen', total: null, bySubresource: {} });
      continue;
    }
    const bySubresource: Record<string, number> = {};
    for (const s of samples) bySubresource[s.labels.subresource ?? '?'] = (bySubresource[s.labels.subresource ?? '?'] ?? 0) + s.value;
    nodes.push({ node, kubeletVersion, state: 'read', total: samples.reduce((t, s) => t + s.value, 0), bySubresource });
  }
  return { state: 'read', nodes, skippedNodes: sorted.slice(maxNodes).map((n) => n.metadata!.name!) };
}
