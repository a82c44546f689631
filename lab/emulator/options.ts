/** What the emulated API server can be told to be, and what it records. */
import type { TerminalSize } from './terminal.js';
import type { IncomingHttpHeaders } from 'node:http';
import type { ObjectSchema } from './object-store.js';
import type { ServiceAccountRef } from './rbac-authorizer.js';
import type { StreamFaults } from './stream-faults.js';

export type RbacModel = 'pre-1.35' | '1.35';

/**
 * Where the target pods are in their life: `running`; `unscheduled` (no node yet: the API server refuses every
 * upgrade, "does not have a host assigned"); `not-started` (on a node, its containers not yet running: the kubelet
 * refuses exec and attach, "container not found").
 */
export type TargetState = 'running' | 'unscheduled' | 'not-started';

export interface EmulatorFaults extends StreamFaults {
  /** Answer WebSocket upgrades with this status (a Kubernetes Status body) instead of 101. */
  readonly rejectWebSocket?: number;
  /** Answer SPDY upgrades with this status instead of 101. */
  readonly rejectSpdy?: number;
  /** Cut a streaming connection after this many seconds without a byte in either direction. */
  readonly idleCutSeconds?: number;
  /** How the idle cut ends the TCP connection. */
  readonly idleCutMode?: 'fin' | 'rst';
  /** Read the upgrade request and never answer it. */
  readonly noUpgradeAnswer?: boolean;
  /** Wait this long before writing the 101. */
  readonly upgradeDelayMs?: number;
}

/** What goes wrong when streaming to pods on one node (per-node probing, issue: ExtendWebSocketsToKubelet). */
export type NodeFault =
  /** The API server cannot reach this node's kubelet: every upgrade is answered 500 (error dialing backend). */
  | { readonly kind: 'refuse' }
  /**
   * The WebSocket is passed to this node's kubelet (1.36+, the node declares ExtendWebSocketsToKubelet) and its
   * CRI fails: 101, then an error Status on the error channel (cri-dockerd's scheme-less URL). SPDY is unaffected.
   */
  | { readonly kind: 'stream-error' }
  /** Streaming connections to this node's pods are cut (FIN) this long after the 101. */
  | { readonly kind: 'cut'; readonly afterSeconds: number }
  /** Bytes stop moving this long after the 101; the connection stays open. */
  | { readonly kind: 'black-hole'; readonly afterSeconds: number };

export interface EmulatorNode {
  readonly name: string;
  /** @default the server's version */
  readonly kubeletVersion?: string;
  /** Node.status.declaredFeatures, e.g. ['ExtendWebSocketsToKubelet']. */
  readonly declaredFeatures?: readonly string[];
  readonly fault?: NodeFault;
}

export interface EmulatorRbac {
  readonly model: RbacModel;
  /** Verbs the caller holds on pods/exec, pods/attach and pods/portforward. */
  readonly verbs: readonly ('get' | 'create')[];
}

export interface EmulatorOptions {
  readonly host?: string;
  readonly port?: number;
  readonly tls?: boolean;
  /** With tls: serve a certificate (signed by the lab CA) with exactly these subjectAltNames, e.g. ['IP:127.0.0.1']. */
  readonly serverCertificateSans?: readonly string[];
  /** Bearer token required on every request; none means anonymous access. */
  readonly token?: string;
  /** With tls: also accept a client certificate signed by the lab CA instead of the token. */
  readonly clientCertAuth?: boolean;
  readonly namespace?: string;
  readonly pod?: string;
  readonly container?: string;
  /** false: the target pod has no `tty` container (deployed before the manifest added it). @default true */
  readonly ttyContainer?: boolean;
  /**
   * false: the pods lack the manifest's `kubectl.kubernetes.io/default-container` annotation, so a client that
   * names no container defaults to the first (kubectl prints "Defaulted container …"). @default true
   */
  readonly defaultContainerAnnotation?: boolean;
  /** @default 'running' */
  readonly targetState?: TargetState;
  /** Container ports the pod declares; all are forwarded to the in-process echo server. */
  readonly podPorts?: readonly number[];
  /** gitVersion reported by /version. */
  readonly serverVersion?: string;
  readonly faults?: EmulatorFaults;
  readonly rbac?: EmulatorRbac;
  /** SPDY exec protocols the "kubelet" supports, in its order; the real one lacks v5. */
  readonly spdyExecProtocols?: readonly string[];
  /** Delay after a WebSocket exec 101 before the first message, like a real kubelet round trip. */
  readonly wsFirstMessageDelayMs?: number;
  /** Roles, cluster roles and bindings the RBAC lists return (default: one ClusterRole with `rbac.verbs`). */
  readonly rbacObjects?: RbacObjects;
  /** Answer 403 to GET /metrics (a caller without get on the non-resource URL). */
  readonly metricsForbidden?: boolean;
  /** Answer 403 to the RBAC lists. */
  readonly rbacListForbidden?: boolean;
  /** Answer 403 to GET nodes/NAME/proxy/… (a caller without get on nodes/proxy, as most should be). */
  readonly nodeProxyForbidden?: boolean;
  /**
   * Forward the pod's ports to this TCP echo port on 127.0.0.1 (another process) instead of an echo server
   * in this process: the throughput benchmark keeps the echo's CPU out of the emulator's. @default - in-process
   */
  readonly externalEchoPort?: number;
  /**
   * The pod's ports answer inside the emulator: each forwarded connection's data stream is echoed back as it
   * arrives, with no TCP hop to a pod. The throughput benchmark's server: one TCP connection from the client,
   * as in its direct-TCP baseline, so the comparison measures the streaming protocol on both ends and not a
   * relay hop that no client controls. @default false (forwarded over TCP to the echo server)
   */
  readonly echoInStream?: boolean;
  /**
   * Nodes, each with a per-node target pod `probe-node-<node>` (label app.kubernetes.io/name=kube-stream-probe-node,
   * as `manifest --per-node` deploys); the main target runs on the first. @default - one node, lab-node
   */
  readonly nodes?: readonly EmulatorNode[];
  /**
   * Which fields the kinds `kubectl apply` creates have and what is valid (the tests inject Kubernetes'
   * OpenAPI-generated models). @default - only names and namespaces are checked
   */
  readonly objectSchema?: ObjectSchema;
  /**
   * Bearer tokens of service accounts. A request bearing one is that service account, authorized by the RBAC
   * objects `kubectl apply` stored (rbac-authorizer.ts) rather than by `rbac`; other callers are unaffected.
   */
  readonly serviceAccountTokens?: Readonly<Record<string, ServiceAccountRef>>;
}

/** RBAC objects as the API returns them (metadata, rules, roleRef, subjects). */
export interface RbacObjects {
  readonly clusterRoles?: readonly object[];
  readonly roles?: readonly object[];
  readonly clusterRoleBindings?: readonly object[];
  readonly roleBindings?: readonly object[];
}

export type UpgradeTransport = 'spdy' | 'websocket';

/** One upgrade request as the emulator saw it. */
export interface UpgradeRecord {
  readonly seq: number;
  readonly method: string;
  readonly path: string;
  readonly query: string;
  readonly operation: 'exec' | 'attach' | 'portforward' | 'other';
  readonly transport: UpgradeTransport;
  /** X-Stream-Protocol-Version values or Sec-WebSocket-Protocol offers, in order. */
  readonly offered: readonly string[];
  /** Request headers, minus Authorization. */
  readonly headers: IncomingHttpHeaders;
  readonly rawHeaderNames: readonly string[];
  /** The node the target pod runs on. */
  node?: string;
  status: number;
  subprotocol?: string;
  /** performance.now() when the 101 was written (the emulator's own clock). */
  wrote101At?: number;
  /** exec and attach: the terminal sizes the client sent (resize channel or stream), in order. */
  resizes?: readonly TerminalSize[];
  /** What credential came with the upgrade, and a fingerprint (sha256 prefix) of it; never the credential. */
  readonly credential: {
    readonly kind: 'none' | 'bearer' | 'eks-token' | 'basic' | 'client-cert';
    readonly fingerprint?: string;
    /** EKS tokens: the STS host and region they were presigned for. */
    readonly stsHost?: string;
    readonly region?: string;
  };
  /** Keepalive pings received from the client (SPDY PINGs with odd ids, WebSocket pings). */
  pingsReceived: number;
  /** Headers of the SPDY streams the client opened, in order. */
  readonly streams: Array<Readonly<Record<string, string>>>;
  endedAt?: number;
  endCause?: string;
}

export const DEFAULTS = {
  host: '127.0.0.1',
  namespace: 'default',
  pod: 'probe-target',
  container: 'main',
  podPorts: [8080],
  serverVersion: 'v1.33.1',
  rbac: { model: 'pre-1.35', verbs: ['get', 'create'] } as EmulatorRbac,
  spdyExecProtocols: ['v4.channel.k8s.io', 'v3.channel.k8s.io', 'v2.channel.k8s.io', 'channel.k8s.io'],
} as const;
