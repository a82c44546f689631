/**
 * The emulated API server: real kubectl 1.29-1.36 can exec into and
 * port-forward to its pods over SPDY, WebSocket v5/v4 and the SPDY tunnel,
 * and every upgrade it sees is recorded (upgrade-record.ts) so tests can
 * assert what the client actually did on the wire; faults after the 101 are in
 * connection-faults.ts.
 */
import { TARGET_DEFAULTS } from '../../src/kube/target.js';
import { EventEmitter } from 'node:events';
import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import https from 'node:https';
import type net from 'node:net';
import { type WebSocket } from 'ws';
import { cutSocket } from './connection-faults.js';
import { upgradeRecord } from './upgrade-record.js';
import { startEchoServer, type EchoServer } from './echo-server.js';
import { upgradeSpdy, upgradeWebSocket, type UpgradeHost } from './upgrades.js';
import { PodFilesystem } from './pod-fs.js';
import { DEFAULTS, type EmulatorNode, type EmulatorOptions, type RbacObjects, type UpgradeRecord } from './options.js';
import { defaultRbacObjects, minorOf } from './audit-endpoints.js';
import { emulatorNodes, emulatorPods, POD_UID } from './pods.js';
import { type ForwardTarget } from './portforward-server.js';
import { ObjectStore } from './object-store.js';
import { LAB_USER, forbiddenMessage, rbacAllows, rbacSource, serviceAccountCaller, type RbacSource, type ServiceAccountRef } from './rbac-authorizer.js';
import { requestAttributes, type ResourceAttributes } from './request-info.js';
import { handleRest, type EmulatorPod, type RestContext } from './rest.js';
import { rawStatusReply, sendStatus } from './status.js';
import {
  chosenContainer,
  containerRule,
  kubeletRefusal,
  kubeletReply,
  podNotFound,
  podsForbidden,
  scheduledRule,
  UNNEGOTIATED_WEBSOCKET_REPLY,
  webSocketProtocol,
  type PodForRules,
} from './stream-rules.js';
import { TUNNEL_PROTOCOL } from '../../src/streaming/portforward-spdy.js';
import { ExecSubprotocol } from '../../src/streaming/channel/codec.js';

/** The manifest's TCP echo container (src/cli/manifest-command.ts). */
const ECHO_CONTAINER = 'echo';
import { emulatorTls, issueServerCertificate, type TlsMaterial } from './tls.js';
import { goCipherOrder } from '../../src/net/tls-ciphers.js';
import { errorCodeOf, errorMessage, probeError } from '../../src/errors.js';

export class Emulator extends EventEmitter {
  readonly upgrades: UpgradeRecord[] = [];
  /** Every REST request: method, URL, headers (the credential left out) and, for an access review, its body. */
  readonly restRequests: RestRecord[] = [];
  private readonly restRecords = new WeakMap<IncomingMessage, RestRecord>();
  url!: URL;
  tls: TlsMaterial | undefined;
  private server!: http.Server | https.Server;
  private echo!: EchoServer;
  private readonly sockets = new Set<net.Socket>();
  private seq = 0;
  private readonly wssClients = new Set<WebSocket>();
  private ctx!: RestContext;
  /** What `kubectl apply -f` created (namespaces, config maps, RBAC, workloads); the pods above are fixed. */
  objects!: ObjectStore;

  constructor(readonly options: EmulatorOptions = {}) {
    super();
  }

  static async start(options: EmulatorOptions = {}): Promise<Emulator> {
    const e = new Emulator(options);
    await e.start();
    return e;
  }

  get namespace(): string {
    return this.options.namespace ?? DEFAULTS.namespace;
  }
  get pod(): string {
    return this.options.pod ?? DEFAULTS.pod;
  }
  /** The target pod's containers, as the manifest's: the probe's (cat), the TCP echo and (unless `ttyContainer: false`) the terminal. */
  get containers(): string[] {
    return [this.container, ECHO_CONTAINER, ...(this.options.ttyContainer === false ? [] : [TARGET_DEFAULTS.ttyContainer])];
  }

  get container(): string {
    return this.options.container ?? DEFAULTS.container;
  }
  get podPorts(): readonly number[] {
    return this.options.podPorts ?? DEFAULTS.podPorts;
  }
  /** The pod's filesystem (in memory): what `kubectl cp` writes and reads. */
  readonly fs = new PodFilesystem();

  /** The nodes: the configured ones, or one healthy lab-node. */
  get nodes(): readonly EmulatorNode[] {
    return emulatorNodes(this.options.nodes);
  }

  /** The target on the first node, then (with nodes configured) one per-node target on each; built once. */
  get pods(): readonly EmulatorPod[] {
    return (this.podList ??= emulatorPods(this.pod, this.options.nodes));
  }
  private podList: readonly EmulatorPod[] | undefined;

  /** The pod's echo server, where every forwarded port lands (for a direct TCP baseline). */
  get echoPort(): number {
    return this.echo.port;
  }
  get echoConnections(): number {
    return this.echo.connections;
  }
  /** Connections open now: clients' to the API server, and forwarded ones to the pod's port. */
  get openConnections(): { readonly api: number; readonly pod: number } {
    return { api: this.sockets.size, pod: this.echo.open };
  }

  async start(): Promise<void> {
    const o = this.options;
    this.echo = o.externalEchoPort ? externalEcho(o.externalEchoPort) : await startEchoServer();
    const handler = (req: IncomingMessage, res: ServerResponse) => void this.onRequest(req, res);
    if (o.tls) {
      this.tls = emulatorTls();
      const served = o.serverCertificateSans ? issueServerCertificate(o.serverCertificateSans) : this.tls;
      // HTTP/1.1 only (no ALPN h2): both upgrade paths need it.
      this.server = https.createServer(
        {
          cert: served.certPem,
          key: served.keyPem,
          ALPNProtocols: ['http/1.1'],
          // A kube-apiserver (Go) picks the TLS 1.3 suite by its own order, AES-128-GCM first, for any client that
          // puts an AES-GCM suite first (Node, Python, Go on AES hardware); Node's server would pick by Node's order,
          // AES-256-GCM first. (Go gives a client that puts ChaCha20 first ChaCha20; this server gives it AES-128-GCM.)
          ciphers: goCipherOrder(),
          honorCipherOrder: true,
          ...(o.clientCertAuth ? { requestCert: true, rejectUnauthorized: false, ca: [this.tls.caPem] } : {}),
        },
        handler,
      );
    } else {
      this.server = http.createServer(handler);
    }
    this.server.on('upgrade', (req: IncomingMessage, socket: net.Socket, head: Buffer) => this.onUpgrade(req, socket, head));
    this.server.on('connection', (s: net.Socket) => {
      this.sockets.add(s);
      s.on('close', () => this.sockets.delete(s));
    });
    const host = o.host ?? DEFAULTS.host;
    try {
      await new Promise<void>((resolve, reject) => {
        this.server.once('error', reject);
        this.server.listen(o.port ?? 0, host, () => resolve());
      });
    } catch (err) {
      // A port in use (EADDRINUSE) or an address not ours: nothing of the emulator may keep running.
      await this.echo.close();
      throw probeError('USAGE', `the emulator cannot listen on ${host}:${o.port ?? 0} (${errorCodeOf(err) ?? errorMessage(err)})`, { field: 'port' }, err);
    }
    const port = (this.server.address() as net.AddressInfo).port;
    const hostPart = host.includes(':') ? `[${host}]` : host;
    this.url = new URL(`${o.tls ? 'https' : 'http'}://${hostPart}:${port}`);
    this.ctx = {
      namespace: this.namespace,
      pod: this.pod,
      container: this.container,
      ttyContainer: o.ttyContainer !== false,
      containers: this.containers,
      defaultContainerAnnotation: o.defaultContainerAnnotation !== false,
      targetState: o.targetState ?? 'running',
      podPorts: this.podPorts,
      serverVersion: o.serverVersion ?? DEFAULTS.serverVersion,
      serverAddress: `${hostPart}:${port}`,
      rbac: o.rbac ?? DEFAULTS.rbac,
      startedAt: new Date(),
      upgrades: () => this.upgrades,
      rbacObjects: { ...defaultRbacObjects(o.rbac ?? DEFAULTS.rbac), ...(o.rbacObjects ?? {}) } as Required<RbacObjects>,
      metricsForbidden: o.metricsForbidden === true,
      rbacListForbidden: o.rbacListForbidden === true,
      nodeProxyForbidden: o.nodeProxyForbidden === true,
      passesToKubelet: (node) => this.passesWebSocketToKubelet(node),
      pods: this.pods,
      nodes: this.nodes,
      objects: (this.objects = new ObjectStore([this.namespace], o.objectSchema)),
      permits: (req, a) => this.permits(req, a),
      recordBody: (req, body) => {
        const r = this.restRecords.get(req);
        if (r) r.body = body;
      },
    };
  }

  async stop(): Promise<void> {
    for (const c of this.wssClients) c.terminate();
    for (const s of this.sockets) s.destroy();
    await new Promise<void>((r) => this.server.close(() => r()));
    await this.echo.close();
  }

  /** The service account whose token the request bears (options.serviceAccountTokens), if any. */
  serviceAccountOf(req: IncomingMessage): ServiceAccountRef | undefined {
    const m = /^Bearer (.+)$/.exec(req.headers.authorization ?? '');
    return m ? this.options.serviceAccountTokens?.[m[1]!] : undefined;
  }

  /**
   * Whether the caller may do it, by the one RBAC model (rbac-authorizer.ts): a service account by the RBAC
   * `kubectl apply` stored, the kubeconfig's user by the objects options.rbac stands for (its verbs on pods'
   * streaming subresources, get and list on pods).
   */
  private permits(req: IncomingMessage, a: ResourceAttributes): boolean {
    const sa = this.serviceAccountOf(req);
    return sa ? rbacAllows(this.objects, serviceAccountCaller(sa), a) : rbacAllows(this.userRbac, LAB_USER, a);
  }

  /** The kubeconfig user's RBAC: options.rbac as the objects it stands for. */
  private get userRbac(): RbacSource {
    return rbacSource(defaultRbacObjects(this.ctx.rbac));
  }

  private authorized(req: IncomingMessage): boolean {
    if (this.serviceAccountOf(req)) return true;
    const token = this.options.token;
    if (this.options.clientCertAuth && (req.socket as import('node:tls').TLSSocket).authorized) return true;
    if (this.options.clientCertAuth && !token) return false;
    return !token || req.headers.authorization === `Bearer ${token}`;
  }

  private async onRequest(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const headers = { ...req.headers };
    delete headers.authorization;
    const record: RestRecord = { method: req.method ?? '', path: req.url ?? '', headers };
    this.restRequests.push(record);
    this.restRecords.set(req, record);
    if (!this.authorized(req)) return sendStatus(res, 401, 'Unauthorized');
    // A streaming path reached without an Upgrade header (e.g. a hop stripped it).
    if (/\/(exec|attach|portforward)(\?|$)/.test(req.url ?? '')) {
      return sendStatus(res, 400, 'Upgrade request required');
    }
    const sa = this.serviceAccountOf(req);
    if (sa) {
      const url = new URL(req.url ?? '/', 'http://x');
      const attrs = requestAttributes(req.method ?? 'GET', url.pathname.replace(/\/+$/, '') || '/', url.searchParams);
      if (!rbacAllows(this.objects, serviceAccountCaller(sa), attrs)) return sendStatus(res, 403, forbiddenMessage(serviceAccountCaller(sa), attrs));
    }
    try {
      await handleRest(req, res, this.ctx);
    } catch {
      if (!res.headersSent) sendStatus(res, 500, 'internal error');
    }
  }

  private onUpgrade(req: IncomingMessage, socket: net.Socket, head: Buffer): void {
    socket.on('error', () => undefined);
    const url = new URL(req.url ?? '/', 'http://x');
    const m = /^\/api\/v1\/namespaces\/([^/]+)\/pods\/([^/]+)\/(exec|attach|portforward)$/.exec(url.pathname);
    const rec = upgradeRecord(req, url, ++this.seq, this.options.clientCertAuth === true);
    const isWs = rec.transport === 'websocket';
    this.upgrades.push(rec);
    this.emit('upgrade', rec);
    const refuse = (code: number, message: string, extra?: Record<string, string>, details?: Record<string, unknown>) => {
      rec.status = code;
      socket.end(rawStatusReply(code, message, extra, details));
    };
    const faults = this.options.faults ?? {};
    if (faults.noUpgradeAnswer) {
      rec.status = -1; // never answered
      return;
    }
    if (!this.authorized(req)) return refuse(401, 'Unauthorized');
    if (!m) return refuse(404, 'the server could not find the requested resource');
    const sub = m[3] as 'exec' | 'attach' | 'portforward';
    // The authorization filter, before the handler looks for the pod (k8s.io/apiserver endpoints/filters/authorization.go):
    // the verb from the method (RequestInfoFactory: GET is "get", POST is "create"), its 403 naming the user and verb.
    const attrs = (verb: string): ResourceAttributes => ({
      resourceRequest: true,
      verb,
      apiGroup: '',
      resource: 'pods',
      subresource: sub,
      namespace: m[1],
      name: m[2],
    });
    const sa = this.serviceAccountOf(req);
    const caller = sa ? serviceAccountCaller(sa) : LAB_USER;
    const verb = req.method === 'POST' ? 'create' : 'get';
    if (!this.permits(req, attrs(verb))) return refuse(403, forbiddenMessage(caller, attrs(verb)), undefined, { name: m[2], kind: 'pods' });
    // 1.35+: the subresource's Connect also requires "create" on a GET upgrade (stream-rules.ts podsForbidden).
    if (verb === 'get' && this.ctx.rbac.model === '1.35' && !this.permits(req, attrs('create'))) {
      const f = podsForbidden(m[2]!);
      return refuse(f.code, f.message, undefined, f.details);
    }
    const pod = m[1] === this.namespace ? this.pods.find((p) => p.name === m[2]) : undefined;
    if (!pod) {
      const f = podNotFound(m[2]!);
      return refuse(f.code, f.message, undefined, f.details);
    }
    const node = this.nodes.find((n) => n.name === pod.node);
    rec.node = pod.node;
    const rulesPod = this.rulesPod(pod);
    const named = url.searchParams.get('container');
    // The pod's REST handler (strategy.go streamLocation / PortForwardLocation): the container, then the node.
    const located = (sub === 'portforward' ? undefined : containerRule(rulesPod, named)) ?? scheduledRule(rulesPod);
    if (located) return refuse(located.code, located.message);
    if (node?.fault?.kind === 'refuse') {
      // The API server proxies to the kubelet on this node and cannot reach it (a network policy, a firewall).
      return refuse(500, `error dialing backend: dial tcp ${pod.ip.replace(/\.10$/, '.1')}:10250: connect: connection timed out`);
    }
    if (isWs && faults.rejectWebSocket) return refuse(faults.rejectWebSocket, 'WebSocket upgrades are refused by the lab (fault rejectWebSocket)');
    if (!isWs && faults.rejectSpdy) return refuse(faults.rejectSpdy, 'SPDY upgrades are refused by the lab (fault rejectSpdy)');
    let protocol: string | undefined;
    if (isWs) {
      protocol = webSocketProtocol(sub, rec.offered);
      if (protocol === undefined) {
        rec.status = 403;
        return void socket.end(UNNEGOTIATED_WEBSOCKET_REPLY);
      }
    }
    // The kubelet's refusals: written back raw, except behind the v5 translator, which has answered 101 already.
    const legacyWsPortForward = isWs && sub === 'portforward' && protocol !== TUNNEL_PROTOCOL;
    const kubelet = kubeletRefusal(sub, url.searchParams, rulesPod, chosenContainer(rulesPod, named), legacyWsPortForward);
    if (kubelet && protocol !== ExecSubprotocol.V5) {
      rec.status = kubelet.code;
      return void socket.end(kubeletReply(kubelet));
    }
    const go = () =>
      isWs
        ? upgradeWebSocket(this.upgradeHost(), req, socket, head, rec, sub, url, protocol!, kubelet)
        : upgradeSpdy(this.upgradeHost(), req, socket, head, rec, sub, url);
    if (faults.upgradeDelayMs) setTimeout(go, faults.upgradeDelayMs);
    else go();
  }

  /** A pod as the streaming rules read it (stream-rules.ts). */
  private rulesPod(pod: EmulatorPod): PodForRules {
    const state = this.ctx.targetState;
    return { name: pod.name, containers: this.containers, node: state === 'unscheduled' ? '' : pod.node, running: state === 'running' };
  }

  private forwardTarget(): ForwardTarget {
    return {
      podPorts: this.podPorts,
      echoPort: this.echo.port,
      podUid: POD_UID,
      echoInStream: this.options.echoInStream ?? false,
      faults: this.options.faults,
    };
  }

  /** Whether the API server passes this node's WebSockets to its kubelet (1.36+, and the node declares it). */
  private passesWebSocketToKubelet(nodeName: string | undefined): boolean {
    const node = this.nodes.find((n) => n.name === nodeName);
    return minorOf(this.ctx.serverVersion) >= 36 && (node?.declaredFeatures ?? []).includes('ExtendWebSocketsToKubelet');
  }

  /** What the upgrade handlers (upgrades.ts) need of the server. */
  private upgradeHost(): UpgradeHost {
    return {
      options: this.options,
      nodes: this.nodes,
      fs: this.fs,
      forwardTarget: () => this.forwardTarget(),
      ended: (rec, cause) => this.ended(rec, cause),
      passesWebSocketToKubelet: (node) => this.passesWebSocketToKubelet(node),
      track: (ws) => {
        this.wssClients.add(ws);
        ws.on('close', () => this.wssClients.delete(ws));
      },
    };
  }

  private ended(rec: UpgradeRecord, cause: string): void {
    if (rec.endedAt !== undefined) return;
    rec.endedAt = performance.now();
    rec.endCause = cause;
    this.emit('ended', rec);
  }
}

/** One REST request as the emulator saw it (tests compare the probe's with real kubectl's). */
export interface RestRecord {
  readonly method: string;
  /** The request target: path and query. */
  readonly path: string;
  readonly headers: IncomingMessage['headers'];
  /** The parsed body of a POST the emulator read (an access review). */
  body?: unknown;
}

/** An echo server in another process: only its port is known here. */
function externalEcho(port: number): EchoServer {
  return { port, connections: 0, open: 0, close: async () => undefined };
}

export { cutSocket };
