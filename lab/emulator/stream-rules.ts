/**
 * What kube-apiserver and the kubelet refuse on the streaming subresources (exec, attach, portforward), in the order
 * they refuse it, with the status and the words they use. The emulator is the probe's opponent: wherever it accepts
 * what a real cluster refuses, a green test proves nothing, so every rule here is read from the source it names.
 *
 * The order (server.ts applies it): authentication (401) → the authorization filter (403, the verb from the method:
 * GET is `get`, POST is `create`) → the subresource's Connect: from 1.35 the `create` check on a GET upgrade
 * (`podsForbidden`) → the pod (`pods "X" not found`, 404) → the container (exec, attach: `containerRule`) → the
 * node (`scheduledRule`) → the upgrade-aware proxy (no Upgrade header: 400 "Upgrade request required",
 * server.ts onRequest) → the kubelet (`kubeletRefusal`: the streams asked for, the ports of a legacy WebSocket
 * port-forward, a container that is not running) and the subprotocols (`webSocketProtocol`).
 */
import { TUNNEL_PROTOCOL } from '../../src/streaming/portforward-spdy.js';
import { ExecSubprotocol } from '../../src/streaming/channel/codec.js';

/** A refusal the API server writes itself: a Kubernetes Status. */
export interface StatusRefusal {
  readonly kind: 'status';
  readonly code: number;
  readonly message: string;
  /** Status.details, when the API server's error carries them (NewForbidden, NewNotFound). */
  readonly details?: Readonly<Record<string, unknown>>;
}

/**
 * A refusal the kubelet writes and the API server's upgrade-aware proxy copies to the client as it is (apimachinery
 * pkg/util/proxy/upgradeaware.go tryUpgrade: a backend reply that is not 101 is written back raw): plain text, no
 * Status. Over WebSocket v5 the API server's stream translator has already answered 101 and reports it on the error
 * channel instead (`translatorStatus`).
 */
export interface KubeletRefusal {
  readonly kind: 'kubelet';
  readonly code: number;
  readonly text: string;
}

export type Refusal = StatusRefusal | KubeletRefusal;

/** The pod as the rules read it: its containers in spec order, its node and whether its containers run. */
export interface PodForRules {
  readonly name: string;
  /** spec.initContainers, spec.containers, spec.ephemeralContainers names: podutil.VisitContainers' order. */
  readonly initContainers?: readonly string[];
  readonly containers: readonly string[];
  /** spec.nodeName; empty before scheduling. */
  readonly node: string;
  /** Whether its containers have started (status.containerStatuses[].state.running). */
  readonly running: boolean;
}

/**
 * The 1.35 `create` check on a GET upgrade (pkg/registry/core/pod/rest/subresources.go Connect →
 * ensureAuthorizedForVerb, kubernetes#133515, feature AuthorizePodWebsocketUpgradeCreatePermission): the error is
 * apierrors.NewForbidden(GroupResource{"", "pods"}, name, errors.New(reason)) and RBAC gives no reason for a denial,
 * so the message ends after "forbidden: ". Unlike the authorization filter's 403 it names neither user nor verb.
 */
export function podsForbidden(pod: string): StatusRefusal {
  return { kind: 'status', code: 403, message: `pods "${pod}" is forbidden: `, details: { name: pod, kind: 'pods' } };
}

/** getPod's NotFound (apimachinery api/errors NewNotFound(GroupResource{"", "pods"}, name)). */
export function podNotFound(pod: string): StatusRefusal {
  return { kind: 'status', code: 404, message: `pods "${pod}" not found`, details: { name: pod, kind: 'pods' } };
}

/**
 * exec's and attach's container (pkg/registry/core/pod/strategy.go validateContainer, called by streamLocation for
 * ExecLocation and AttachLocation): none named is the pod's only container, or a 400 listing every container
 * (podutil.VisitContainers: init, regular, ephemeral; Go's %s of a []string, `[a b c]`); a named one must be one of
 * them. Port-forward names no container (PortForwardLocation).
 */
export function containerRule(pod: PodForRules, container: string | null): StatusRefusal | undefined {
  const all = [...(pod.initContainers ?? []), ...pod.containers];
  if (container === null || container === '') {
    if (pod.containers.length === 1) return undefined;
    if (pod.containers.length === 0) return badRequest(`a container name must be specified for pod ${pod.name}`);
    return badRequest(`a container name must be specified for pod ${pod.name}, choose one of: [${all.join(' ')}]`);
  }
  return all.includes(container) ? undefined : badRequest(`container ${container} is not valid for pod ${pod.name}`);
}

/** The container the request runs in: the named one, or the pod's only one (validateContainer's default). */
export function chosenContainer(pod: PodForRules, container: string | null): string {
  return container || pod.containers[0]!;
}

/** A pod the scheduler has not placed (strategy.go streamLocation and PortForwardLocation: no nodeName). */
export function scheduledRule(pod: PodForRules): StatusRefusal | undefined {
  return pod.node ? undefined : badRequest(`pod ${pod.name} does not have a host assigned`);
}

/**
 * What the kubelet refuses before it upgrades, as its reply (copied raw by the API server's proxy):
 * - exec and attach without one of stdin, stdout, stderr: 400 (k8s.io/kubelet pkg/cri/streaming/remotecommand
 *   httpstream.go NewOptions, "you must specify at least 1 of stdin, stdout, stderr"; the kubelet's server answers
 *   its error with 400);
 * - a container that has not started: the kubelet finds no running container (pkg/kubelet GetExec/GetAttach:
 *   `container not found ("NAME")`), a plain error that streaming.WriteError (k8s.io/kubelet pkg/cri/streaming
 *   errors.go) answers 500 — what kubectl prints as "unable to upgrade connection: container not found (…)";
 * - a WebSocket port-forward on the kubelet's own protocol (not the API server's tunnel): the `ports` query
 *   (k8s.io/kubelet pkg/cri/streaming/portforward/websocket.go NewV4Options): required, not empty, each a port > 0.
 */
export function kubeletRefusal(
  subresource: 'exec' | 'attach' | 'portforward',
  query: URLSearchParams,
  pod: PodForRules,
  container: string,
  legacyWebSocketPortForward: boolean,
): KubeletRefusal | undefined {
  if (subresource === 'portforward') return legacyWebSocketPortForward ? portsRule(query) : undefined;
  // The API server passes the flags on to the kubelet as 1 (strategy.go streamParams); its conversion reads
  // "true"/"1"/any non-false value as true (execRequestFrom's flag).
  const flag = (n: string) => {
    const v = query.get(n);
    return v !== null && v !== '0' && v.toLowerCase() !== 'false';
  };
  if (!flag('stdin') && !flag('stdout') && !flag('stderr')) return kubelet(400, 'you must specify at least 1 of stdin, stdout, stderr');
  if (!pod.running) return kubelet(500, `container not found ("${container}")`);
  return undefined;
}

function portsRule(query: URLSearchParams): KubeletRefusal | undefined {
  const values = query.getAll('ports');
  if (values.length === 0) return kubelet(400, 'query parameter "ports" is required');
  for (const value of values) {
    if (value === '') return kubelet(400, 'query parameter "ports" cannot be empty');
    for (const p of value.split(',')) {
      // strconv.ParseUint(p, 10, 16): decimal digits only, at most 65535.
      if (!/^\d+$/.test(p) || Number(p) > 65535) return kubelet(400, `unable to parse "${value}" as a port: ${parseUintError(p)}`);
      if (Number(p) < 1) return kubelet(400, `port "${value}" must be > 0`);
    }
  }
  return undefined;
}

/** Go's strconv.ParseUint error text for a port that is not one. */
function parseUintError(p: string): string {
  return /^\d+$/.test(p) ? `strconv.ParseUint: parsing "${p}": value out of range` : `strconv.ParseUint: parsing "${p}": invalid syntax`;
}

/**
 * The subprotocol a WebSocket upgrade gets, or undefined when nothing it offered is served:
 * - exec/attach: an offer with v5.channel.k8s.io goes to the API server's stream translator, which speaks only v5
 *   (subresources.go: NewTranslatingHandler with wsstream.IsWebSocketRequestWithStreamCloseProtocol); any other
 *   goes through to the kubelet, whose server takes the first offered of "", channel.k8s.io, base64.channel.k8s.io,
 *   v4.channel.k8s.io, v4.base64.channel.k8s.io (k8s.io/kubelet remotecommand/websocket.go createWebSocketStreams;
 *   wsstream's handshake picks in the client's order);
 * - portforward: SPDY/3.1+portforward.k8s.io goes to the API server's tunnel (IsWebSocketRequestWithTunnelingProtocol);
 *   any other to the kubelet's own protocol: "", v4.channel.k8s.io, v4.base64.channel.k8s.io (portforward/websocket.go).
 * `''` is the answer to an offer of none (no Sec-WebSocket-Protocol in the 101).
 */
export function webSocketProtocol(subresource: 'exec' | 'attach' | 'portforward', offered: readonly string[]): string | undefined {
  if (subresource === 'portforward') {
    if (offered.includes(TUNNEL_PROTOCOL)) return TUNNEL_PROTOCOL;
    return offered.length === 0 ? '' : offered.find((p) => (KUBELET_PORTFORWARD_WS as readonly string[]).includes(p));
  }
  if (offered.includes(ExecSubprotocol.V5)) return ExecSubprotocol.V5;
  return offered.length === 0 ? '' : offered.find((p) => (KUBELET_EXEC_WS as readonly string[]).includes(p));
}

const KUBELET_EXEC_WS = [ExecSubprotocol.V1, ExecSubprotocol.BASE64, ExecSubprotocol.V4, ExecSubprotocol.V4_BASE64] as const;
const KUBELET_PORTFORWARD_WS = [ExecSubprotocol.V4, ExecSubprotocol.V4_BASE64] as const;

/**
 * The reply to a WebSocket offer nothing serves: wsstream's handshake fails inside golang.org/x/net/websocket's
 * server, which answers `403 Forbidden` with no header and no body (websocket/server.go newServerConn: a Handshake
 * error sets code = http.StatusForbidden), and the API server's proxy copies it as it is.
 */
export const UNNEGOTIATED_WEBSOCKET_REPLY = 'HTTP/1.1 403 Forbidden\r\n\r\n';

/**
 * What the v5 translator writes on the error channel after its 101 when the kubelet refused its SPDY upgrade
 * (apiserver pkg/util/proxy/streamtranslator.go: the SPDY executor's error is not a StatusError — client-go's
 * "unable to upgrade connection: BODY" for a non-Status reply — so it is apierrors.NewInternalError(err)).
 */
export function translatorStatus(refusal: KubeletRefusal): string {
  const message = `Internal error occurred: unable to upgrade connection: ${refusal.text}`;
  return JSON.stringify({
    metadata: {},
    status: 'Failure',
    message,
    reason: 'InternalError',
    details: { causes: [{ message: `unable to upgrade connection: ${refusal.text}` }] },
    code: 500,
  });
}

/** The kubelet's plain-text reply as the client receives it (go-restful WriteError; Go sniffs text/plain). */
export function kubeletReply(r: KubeletRefusal): string {
  const reason = { 400: 'Bad Request', 404: 'Not Found', 500: 'Internal Server Error' }[r.code] ?? 'Error';
  return [
    `HTTP/1.1 ${r.code} ${reason}`,
    'Content-Type: text/plain; charset=utf-8',
    `Content-Length: ${Buffer.byteLength(r.text)}`,
    'Connection: close',
    '',
    r.text,
  ].join('\r\n');
}

function badRequest(message: string): StatusRefusal {
  return { kind: 'status', code: 400, message };
}

function kubelet(code: number, text: string): KubeletRefusal {
  return { kind: 'kubelet', code, text };
}
