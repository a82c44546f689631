/**
 * What `kube-stream-probe audit` reads, served for the emulated server's
 * version: /metrics with the streaming feature gates (the stage and default
 * each had in that version) and the streaming counters (only the ones that
 * version has, counting the emulator's own upgrades), and the RBAC lists.
 */
import type { ServerResponse } from 'node:http';
import { minorVersion } from '../../src/kube/rest.js';
import { sendJson, sendStatus } from './status.js';
import type { EmulatorNode, EmulatorRbac, RbacObjects, UpgradeRecord } from './options.js';
import { ExecSubprotocol } from '../../src/streaming/channel/codec.js';
import { TUNNEL_PROTOCOL } from '../../src/streaming/portforward-spdy.js';

/** Gate → (minor it appeared, stage then, on by default then) and its later promotion (apiserver feature gates). */
const GATES: readonly { name: string; steps: readonly (readonly [number, string, boolean])[] }[] = [
  {
    name: 'TranslateStreamCloseWebsocketRequests',
    steps: [
      [29, 'ALPHA', false],
      [30, 'BETA', true],
    ],
  },
  {
    name: 'PortForwardWebsockets',
    steps: [
      [30, 'ALPHA', false],
      [31, 'BETA', true],
    ],
  },
  { name: 'AuthorizePodWebsocketUpgradeCreatePermission', steps: [[35, 'BETA', true]] },
  { name: 'ExtendWebSocketsToKubelet', steps: [[36, 'BETA', true]] },
];

/** The emulated server's minor version (a gitVersion that is not 1.x counts as the default, 1.33). */
export function minorOf(version: string): number {
  return minorVersion(version) ?? 33;
}

export function metricsText(version: string, upgrades: readonly UpgradeRecord[], passesToKubelet: (node: string | undefined) => boolean = () => false): string {
  const minor = minorOf(version);
  const lines: string[] = [
    '# HELP kubernetes_feature_enabled [BETA] This metric records the data about the stage and enablement of a k8s feature.',
    '# TYPE kubernetes_feature_enabled gauge',
  ];
  for (const g of GATES) {
    const step = [...g.steps].reverse().find(([since]) => minor >= since);
    if (step) lines.push(`kubernetes_feature_enabled{name="${g.name}",stage="${step[1]}"} ${step[2] ? 1 : 0}`);
  }
  // What the API server's own WebSocket handlers take: v5 exec and attach (the StreamTranslator, for requests that
  // offer v5.channel.k8s.io) and the port-forward tunnel (for requests that offer SPDY/3.1+portforward.k8s.io);
  // anything else (v4 exec, the legacy port-forward of SDK clients) the plain proxy passes to the kubelet, uncounted
  // here (apiserver pkg/registry/core/pod/rest/subresources.go: translator.NewTranslatingHandler).
  const ws = upgrades.filter(
    (u) => u.transport === 'websocket' && (u.operation === 'portforward' ? u.offered.includes(TUNNEL_PROTOCOL) : u.offered.includes(ExecSubprotocol.V5)),
  );
  const count = (records: readonly UpgradeRecord[], name: string, help: string) => {
    lines.push(`# HELP ${name} ${help}`, `# TYPE ${name} counter`);
    const byCode = new Map<number, number>();
    for (const r of records) byCode.set(r.status, (byCode.get(r.status) ?? 0) + 1);
    if (byCode.size === 0) byCode.set(101, 0);
    for (const [code, n] of [...byCode].sort((a, b) => a[0] - b[0])) lines.push(`${name}{code="${code}"} ${n}`);
  };
  if (minor >= 30)
    count(
      ws.filter((u) => u.operation === 'exec' || u.operation === 'attach'),
      'apiserver_stream_translator_requests_total',
      '[ALPHA] Total number of requests that were handled by the StreamTranslatorProxy, which processes streaming RemoteCommand/V5',
    );
  if (minor >= 31)
    count(
      ws.filter((u) => u.operation === 'portforward'),
      'apiserver_stream_tunnel_requests_total',
      '[ALPHA] Total number of requests that were handled by the StreamTunnelProxy, which processes streaming PortForward/V2',
    );
  if (minor >= 36) {
    const name = 'apiserver_websocket_streaming_requests_total';
    lines.push(`# HELP ${name} [ALPHA] Total number of WebSocket streaming requests, by subresource and how they were proxied`, `# TYPE ${name} counter`);
    for (const type of ['proxied_to_kubelet', 'translated_at_apiserver']) {
      const mine = ws.filter((u) => passesToKubelet(u.node) === (type === 'proxied_to_kubelet'));
      for (const sub of ['exec', 'attach', 'portforward'])
        lines.push(`${name}{proxy_type="${type}",subresource="${sub}"} ${mine.filter((u) => u.operation === sub).length}`);
    }
  }
  return lines.join('\n') + '\n';
}

/**
 * A kubelet's /metrics (through the API server's node proxy): from 1.36 `kubelet_websocket_streaming_requests_total`
 * counts the WebSocket streams the API server passed to it, one sample per subresource seen (a labelled counter
 * shows nothing before its first count). Older kubelets do not have it.
 */
export function kubeletMetricsText(node: EmulatorNode, serverVersion: string, upgrades: readonly UpgradeRecord[], passedThrough: boolean): string {
  const lines = [
    "# HELP kubelet_node_name [ALPHA] The node's name. The count is always 1.",
    '# TYPE kubelet_node_name gauge',
    `kubelet_node_name{node="${node.name}"} 1`,
  ];
  if (minorOf(node.kubeletVersion ?? serverVersion) < 36) return lines.join('\n') + '\n';
  const name = 'kubelet_websocket_streaming_requests_total';
  lines.push(`# HELP ${name} [ALPHA] Total number of WebSocket streaming requests served by the kubelet, by subresource`, `# TYPE ${name} counter`);
  const mine = passedThrough ? upgrades.filter((u) => u.transport === 'websocket' && u.node === node.name && u.status === 101) : [];
  for (const sub of ['exec', 'attach', 'portforward']) {
    const n = mine.filter((u) => u.operation === sub).length;
    if (n > 0) lines.push(`${name}{subresource="${sub}"} ${n}`);
  }
  return lines.join('\n') + '\n';
}

/** The lab's default RBAC: one ClusterRole with the caller's streaming verbs, bound to the lab users. */
export function defaultRbacObjects(rbac: EmulatorRbac): Required<RbacObjects> {
  return {
    clusterRoles: [
      {
        metadata: { name: 'lab-streaming' },
        rules: [
          { apiGroups: [''], resources: ['pods/exec', 'pods/attach', 'pods/portforward'], verbs: [...rbac.verbs] },
          { apiGroups: [''], resources: ['pods'], verbs: ['get', 'list'] },
        ],
      },
    ],
    roles: [],
    clusterRoleBindings: [
      {
        metadata: { name: 'lab-streaming' },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'lab-streaming' },
        subjects: [{ kind: 'Group', name: 'lab-users' }],
      },
    ],
    roleBindings: [],
  };
}

const RBAC_KINDS: Record<string, [keyof RbacObjects, string]> = {
  clusterroles: ['clusterRoles', 'ClusterRoleList'],
  roles: ['roles', 'RoleList'],
  clusterrolebindings: ['clusterRoleBindings', 'ClusterRoleBindingList'],
  rolebindings: ['roleBindings', 'RoleBindingList'],
};

/** GET /apis/rbac.authorization.k8s.io/v1/<kind>: true when it answered. */
export function serveRbacList(path: string, res: ServerResponse, objects: Required<RbacObjects>, forbidden: boolean): boolean {
  const m = /^\/apis\/rbac\.authorization\.k8s\.io\/v1\/(clusterroles|roles|clusterrolebindings|rolebindings)$/.exec(path);
  if (!m) return false;
  if (forbidden) {
    sendStatus(
      res,
      403,
      `${m[1]}.rbac.authorization.k8s.io is forbidden: User "lab" cannot list resource "${m[1]}" in API group "rbac.authorization.k8s.io" at the cluster scope`,
    );
    return true;
  }
  const [key, kind] = RBAC_KINDS[m[1]!]!;
  sendJson(res, 200, { kind, apiVersion: 'rbac.authorization.k8s.io/v1', metadata: { resourceVersion: '1' }, items: objects[key] });
  return true;
}
