/**
 * The REST endpoints real kubectl needs before it upgrades (client-go
 * discovery/discovery_client.go; kubectl pkg/cmd/exec, portforward): legacy
 * discovery, the pod, /version, pod lists
 * (as a Table for `kubectl get pods`) and SelfSubjectAccessReview.
 */
import { holdShapeCommand } from '../../src/probe/hold-shape.js';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { parseSelector } from '../../src/kube/target.js';
import { sendJson, sendStatus } from './status.js';
import type { EmulatorNode, EmulatorRbac, RbacObjects, TargetState, UpgradeRecord } from './options.js';
import { kubeletMetricsText, metricsText, serveRbacList } from './audit-endpoints.js';
import { type ObjectStore, readBodyBytes, storedGroups, storedResources } from './object-store.js';
import { KUBERNETES_PROTOBUF, decodeSelfSubjectAccessReview } from './protobuf.js';
import type { ResourceAttributes } from './request-info.js';
import { serveOpenApiV2, serveOpenApiV3 } from './openapi.js';

export interface RestContext {
  readonly namespace: string;
  readonly pod: string;
  readonly container: string;
  /** The manifest's terminal container is there too (EmulatorOptions.ttyContainer). */
  readonly ttyContainer: boolean;
  /** The target pods' containers in spec order, as the manifest's pod has them (main, echo, tty). */
  readonly containers: readonly string[];
  /** The pods carry the manifest's `kubectl.kubernetes.io/default-container` annotation (EmulatorOptions). */
  readonly defaultContainerAnnotation: boolean;
  /** Where the target pods are in their life (EmulatorOptions.targetState). */
  readonly targetState: TargetState;
  readonly podPorts: readonly number[];
  readonly serverVersion: string;
  readonly serverAddress: string;
  readonly rbac: EmulatorRbac;
  readonly startedAt: Date;
  readonly upgrades: () => readonly UpgradeRecord[];
  readonly rbacObjects: Required<RbacObjects>;
  readonly metricsForbidden: boolean;
  readonly rbacListForbidden: boolean;
  readonly nodeProxyForbidden: boolean;
  /** Whether the API server passes this node's WebSockets to its kubelet (1.36+, declared by the node). */
  readonly passesToKubelet: (node: string | undefined) => boolean;
  /** Every pod: the target first, then the per-node targets. */
  readonly pods: readonly EmulatorPod[];
  readonly nodes: readonly EmulatorNode[];
  /** What kubectl apply created. */
  readonly objects: ObjectStore;
  /** Whether the request's caller may do it (a service account by the applied RBAC, others by `rbac`). */
  readonly permits: (req: IncomingMessage, a: ResourceAttributes) => boolean;
  /** Keeps the parsed body of a request on its record (server.ts restRequests). */
  readonly recordBody?: (req: IncomingMessage, body: unknown) => void;
}

export interface EmulatorPod {
  readonly name: string;
  readonly node: string;
  readonly labels: Readonly<Record<string, string>>;
  readonly uid: string;
  readonly ip: string;
}

const SUBRESOURCE = (name: string, kind: string) => ({ name, singularName: '', namespaced: true, kind, verbs: ['create', 'get'] });

export function podObject(ctx: RestContext, pod: EmulatorPod = ctx.pods[0]!): Record<string, unknown> {
  const started = ctx.startedAt.toISOString();
  const scheduled = ctx.targetState !== 'unscheduled';
  const running = ctx.targetState === 'running';
  const [main, echo, tty] = ctx.containers;
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name: pod.name,
      namespace: ctx.namespace,
      uid: pod.uid,
      creationTimestamp: started.replace(/\.\d+Z$/, 'Z'),
      labels: pod.labels,
      // As the manifest's pods: kubectl picks `main` without "Defaulted container" on stderr.
      ...(ctx.defaultContainerAnnotation ? { annotations: { 'kubectl.kubernetes.io/default-container': main } } : {}),
    },
    spec: {
      ...(scheduled ? { nodeName: pod.node } : {}),
      // The manifest's containers (src/cli/manifest-command.ts): cat, the TCP echo with the pod's ports, the terminal.
      containers: [
        { name: main, image: 'kube-stream-probe/target:lab', command: ['cat'], stdin: true },
        {
          name: echo,
          image: 'kube-stream-probe/echo:lab',
          ports: ctx.podPorts.map((p, i) => ({ name: i === 0 ? 'echo' : `echo-${p}`, containerPort: p, protocol: 'TCP' })),
        },
        // The manifest's terminal container: kubectl attach -t reads `tty` here (without it kubectl drops -t).
        ...(tty ? [{ name: tty, image: 'kube-stream-probe/target:lab', command: holdShapeCommand('tty'), stdin: true, tty: true }] : []),
      ],
    },
    status: scheduled
      ? {
          phase: running ? 'Running' : 'Pending',
          podIP: pod.ip,
          containerStatuses: ctx.containers.map((name) => ({
            name,
            ready: running,
            restartCount: 0,
            state: running ? { running: { startedAt: started } } : { waiting: { reason: 'ContainerCreating' } },
          })),
        }
      : {
          phase: 'Pending',
          conditions: [{ type: 'PodScheduled', status: 'False', reason: 'Unschedulable', message: '0/1 nodes are available.' }],
        },
  };
}

function podTable(ctx: RestContext, namespace: string): Record<string, unknown> {
  const rows =
    namespace === ctx.namespace || namespace === ''
      ? ctx.pods.map((p) => ({
          cells: [
            p.name,
            `${ctx.targetState === 'running' ? ctx.containers.length : 0}/${ctx.containers.length}`,
            ctx.targetState === 'running' ? 'Running' : 'Pending',
            0,
            age(ctx.startedAt),
          ],
          object: { kind: 'PartialObjectMetadata', apiVersion: 'meta.k8s.io/v1', metadata: (podObject(ctx, p) as { metadata: unknown }).metadata },
        }))
      : [];
  return {
    kind: 'Table',
    apiVersion: 'meta.k8s.io/v1',
    metadata: { resourceVersion: '1' },
    columnDefinitions: [
      { name: 'Name', type: 'string', format: 'name', description: 'Name', priority: 0 },
      { name: 'Ready', type: 'string', format: '', description: 'Ready containers', priority: 0 },
      { name: 'Status', type: 'string', format: '', description: 'Status', priority: 0 },
      { name: 'Restarts', type: 'string', format: '', description: 'Restarts', priority: 0 },
      { name: 'Age', type: 'string', format: '', description: 'Age', priority: 0 },
    ],
    rows,
  };
}

function age(since: Date): string {
  const s = Math.max(0, Math.round((Date.now() - since.getTime()) / 1000));
  return s < 120 ? `${s}s` : `${Math.round(s / 60)}m`;
}

export async function handleRest(req: IncomingMessage, res: ServerResponse, ctx: RestContext): Promise<void> {
  const url = new URL(req.url ?? '/', 'http://x');
  const p = url.pathname.replace(/\/+$/, '') || '/';
  const get = req.method === 'GET';
  if (get && p === '/version') {
    const m = /^v(\d+)\.(\d+)/.exec(ctx.serverVersion);
    return sendJson(res, 200, {
      major: m?.[1] ?? '1',
      minor: m?.[2] ?? '33',
      gitVersion: ctx.serverVersion,
      gitCommit: 'kube-stream-probe-lab',
      gitTreeState: 'clean',
      buildDate: ctx.startedAt.toISOString(),
      goVersion: 'go1.24',
      compiler: 'gc',
      platform: 'linux/amd64',
    });
  }
  if (get && p === '/metrics') {
    if (ctx.metricsForbidden) return sendStatus(res, 403, 'forbidden: User "lab" cannot get path "/metrics"');
    res.writeHead(200, { 'Content-Type': 'text/plain; version=0.0.4; charset=utf-8' });
    res.end(metricsText(ctx.serverVersion, ctx.upgrades(), ctx.passesToKubelet));
    return;
  }
  if (get && serveRbacList(p, res, ctx.rbacObjects, ctx.rbacListForbidden)) return;
  if (get && p === '/api') {
    return sendJson(res, 200, {
      kind: 'APIVersions',
      versions: ['v1'],
      serverAddressByClientCIDRs: [{ clientCIDR: '0.0.0.0/0', serverAddress: ctx.serverAddress }],
    });
  }
  if (get && p === '/apis') {
    const gv = { groupVersion: 'authorization.k8s.io/v1', version: 'v1' };
    const groups = [{ name: 'authorization.k8s.io', versions: [gv] }, ...storedGroups()];
    return sendJson(res, 200, {
      kind: 'APIGroupList',
      apiVersion: 'v1',
      groups: groups.map((g) => ({ ...g, preferredVersion: g.versions[0] })),
    });
  }
  if (get && p === '/api/v1') {
    return sendJson(res, 200, {
      kind: 'APIResourceList',
      groupVersion: 'v1',
      resources: [
        { name: 'pods', singularName: 'pod', namespaced: true, kind: 'Pod', verbs: ['get', 'list'], shortNames: ['po'], categories: ['all'] },
        SUBRESOURCE('pods/exec', 'PodExecOptions'),
        SUBRESOURCE('pods/attach', 'PodAttachOptions'),
        SUBRESOURCE('pods/portforward', 'PodPortForwardOptions'),
        { name: 'nodes', singularName: 'node', namespaced: false, kind: 'Node', verbs: ['get', 'list'], shortNames: ['no'] },
        ...storedResources('', 'v1'),
      ],
    });
  }
  if (get && p === '/apis/authorization.k8s.io/v1') {
    return sendJson(res, 200, {
      kind: 'APIResourceList',
      apiVersion: 'v1',
      groupVersion: 'authorization.k8s.io/v1',
      resources: [
        { name: 'selfsubjectaccessreviews', singularName: 'selfsubjectaccessreview', namespaced: false, kind: 'SelfSubjectAccessReview', verbs: ['create'] },
      ],
    });
  }
  const storedGv = /^\/apis\/([^/]+)\/([^/]+)$/.exec(p);
  if (get && storedGv && storedGroups().some((g) => g.name === storedGv[1] && g.versions.some((v) => v.version === storedGv[2]))) {
    return sendJson(res, 200, {
      kind: 'APIResourceList',
      apiVersion: 'v1',
      groupVersion: `${storedGv[1]}/${storedGv[2]}`,
      resources: storedResources(storedGv[1]!, storedGv[2]!),
    });
  }
  if (get && (serveOpenApiV3(p, res, ctx.serverVersion) || serveOpenApiV2(p, res, ctx.serverVersion))) return;
  if (req.method === 'POST' && p === '/apis/authorization.k8s.io/v1/selfsubjectaccessreviews') {
    let review: {
      spec?: { resourceAttributes?: { verb?: string; group?: string; resource?: string; subresource?: string; namespace?: string; name?: string } };
    };
    try {
      const body = await readBodyBytes(req);
      // kubectl's typed client sends protobuf (protobuf.ts); the probe and the SDK clients JSON.
      review = (
        String(req.headers['content-type'] ?? '').startsWith(KUBERNETES_PROTOBUF) ? decodeSelfSubjectAccessReview(body) : JSON.parse(body.toString('utf8'))
      ) as typeof review;
      ctx.recordBody?.(req, review);
    } catch {
      return sendStatus(res, 400, 'the SelfSubjectAccessReview body is neither valid JSON nor Kubernetes protobuf');
    }
    const attrs = review.spec?.resourceAttributes;
    if (!attrs?.verb) return sendStatus(res, 400, 'spec.resourceAttributes.verb is required');
    const ok = ctx.permits(req, {
      resourceRequest: true,
      verb: attrs.verb,
      apiGroup: attrs.group ?? '',
      resource: attrs.resource ?? '',
      subresource: attrs.subresource || undefined,
      namespace: attrs.namespace || undefined,
      name: attrs.name || undefined,
    });
    return sendJson(res, 201, {
      kind: 'SelfSubjectAccessReview',
      apiVersion: 'authorization.k8s.io/v1',
      metadata: {},
      spec: review.spec,
      status: ok
        ? { allowed: true, reason: 'lab RBAC allows it' }
        : { allowed: false, reason: `lab RBAC does not grant ${attrs.verb} on pods/${attrs.subresource ?? ''}` },
    });
  }
  if (get && p === '/api/v1/nodes')
    return sendJson(res, 200, { kind: 'NodeList', apiVersion: 'v1', metadata: { resourceVersion: '1' }, items: ctx.nodes.map((n) => nodeObject(ctx, n)) });
  const kubeletMetrics = /^\/api\/v1\/nodes\/([^/]+)\/proxy\/metrics$/.exec(p);
  if (get && kubeletMetrics) {
    if (ctx.nodeProxyForbidden)
      return sendStatus(
        res,
        403,
        `nodes "${kubeletMetrics[1]}" is forbidden: User "lab" cannot get resource "nodes/proxy" in API group "" at the cluster scope`,
      );
    const n = ctx.nodes.find((x) => x.name === kubeletMetrics[1]);
    if (!n) return sendStatus(res, 404, `nodes "${kubeletMetrics[1]}" not found`);
    res.writeHead(200, { 'Content-Type': 'text/plain; version=0.0.4; charset=utf-8' });
    res.end(kubeletMetricsText(n, ctx.serverVersion, ctx.upgrades(), ctx.passesToKubelet(n.name)));
    return;
  }
  const node = /^\/api\/v1\/nodes\/([^/]+)$/.exec(p);
  if (get && node) {
    const n = ctx.nodes.find((x) => x.name === node[1]);
    return n ? sendJson(res, 200, nodeObject(ctx, n)) : sendStatus(res, 404, `nodes "${node[1]}" not found`);
  }
  const podList = /^\/api\/v1(?:\/namespaces\/([^/]+))?\/pods$/.exec(p);
  if (get && podList) {
    const ns = podList[1] ?? '';
    if (/as=Table/.test(String(req.headers.accept ?? ''))) return sendJson(res, 200, podTable(ctx, ns));
    const wanted = parseSelector(url.searchParams.get('labelSelector') ?? '');
    const items = ns === '' || ns === ctx.namespace ? ctx.pods.filter((p) => wanted.every(([k, v]) => p.labels[k] === v)).map((p) => podObject(ctx, p)) : [];
    return sendJson(res, 200, { kind: 'PodList', apiVersion: 'v1', metadata: { resourceVersion: '1' }, items });
  }
  const pod = /^\/api\/v1\/namespaces\/([^/]+)\/pods\/([^/]+)$/.exec(p);
  if (get && pod) {
    const found = ctx.pods.find((p) => p.name === pod[2]);
    if (pod[1] === ctx.namespace && found) return sendJson(res, 200, podObject(ctx, found));
    return sendStatus(res, 404, `pods "${pod[2]}" not found`);
  }
  if (await ctx.objects.handle(req, res, p, url.searchParams)) return;
  return sendStatus(res, 404, 'the server could not find the requested resource');
}

/** A Node as the API returns it: its kubelet version and the features it declares (1.36 NodeDeclaredFeatures). */
function nodeObject(ctx: RestContext, n: EmulatorNode): Record<string, unknown> {
  return {
    apiVersion: 'v1',
    kind: 'Node',
    metadata: { name: n.name, labels: { 'kubernetes.io/hostname': n.name } },
    status: {
      nodeInfo: {
        kubeletVersion: n.kubeletVersion ?? ctx.serverVersion,
        containerRuntimeVersion: 'containerd://2.1.0',
        osImage: 'lab',
        architecture: 'amd64',
        operatingSystem: 'linux',
      },
      declaredFeatures: [...(n.declaredFeatures ?? [])],
      conditions: [{ type: 'Ready', status: 'True' }],
    },
  };
}
