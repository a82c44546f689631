/**
 * The lab's real hops as paths to the emulated API server, each the misconfiguration (or timer) that breaks streaming
 * in the field: one catalogue, so the kubectl-model proof and the WebSocket-only client proof go through the same
 * hops configured the same way. A path says how it starts, how a client reaches the API server through it (`server`,
 * a `proxy`, the CA to trust), and its idle timer when it has one a test can outwait.
 */
import type { Emulator } from '../../lab/emulator/server.js';
import { runPlan } from '../../src/probe/runner.js';
import type { ProbeReport } from '../../src/probe/types.js';
import type { RealHop } from '../../lab/real-hops/process-hop.js';
import { startApache, startNghttpx, startPrivoxy, startVarnish } from '../../lab/real-hops/products.js';
import { startDante, startMitmproxy, startSquid, startTinyproxy } from '../../lab/real-hops/proxies.js';
import { startHaproxy, startNginx } from '../../lab/real-hops/reverse-proxies.js';

/** The idle timer of the lab's timed hops (nginx proxy_read_timeout, haproxy timeouts), seconds. */
export const LAB_IDLE_SECONDS = 7;

export interface Route {
  readonly server: URL;
  readonly proxy?: URL;
  /** The CA the client must trust for `server` (a TLS-intercepting proxy's). */
  readonly ca?: string;
}

export interface HopPath {
  readonly name: string;
  /** Needs an emulator serving TLS (the hop intercepts it). */
  readonly tls?: boolean;
  start(emulator: Emulator): Promise<RealHop>;
  route(hop: RealHop, emulator: Emulator): Route;
  /** The hop's idle timer, seconds, when one bites within a test's hold. */
  readonly idleSeconds?: number;
}

const port = (e: Emulator) => Number(e.url.port);
/** A reverse proxy: the client's server is the hop. */
const through = (h: RealHop): Route => ({ server: new URL(`http://127.0.0.1:${h.port}`) });
/** A forward proxy: the kubeconfig's proxy-url. */
const viaProxy = (h: RealHop, e: Emulator): Route => ({ server: e.url, proxy: new URL(`http://127.0.0.1:${h.port}`) });

export const HOP_PATHS = {
  nginxRefuseWebSocket: { name: 'nginx refusing WebSocket (403)', start: (e) => startNginx({ kind: 'refuse-websocket' }, port(e)), route: through },
  nginxRefuseSpdy: { name: 'nginx refusing SPDY (403)', start: (e) => startNginx({ kind: 'refuse-spdy' }, port(e)), route: through },
  squidDenyConnect: {
    name: 'squid refusing CONNECT to the API server port',
    start: (e) => startSquid({ denyConnectPorts: [port(e)] }),
    route: viaProxy,
  },
  nginxIdle: {
    name: `nginx proxy_read_timeout ${LAB_IDLE_SECONDS}s`,
    start: (e) => startNginx({ kind: 'upgrade-ok', readTimeoutSeconds: LAB_IDLE_SECONDS }, port(e)),
    route: through,
    idleSeconds: LAB_IDLE_SECONDS,
  },
  haproxyTcp: {
    name: `haproxy tcp, ${LAB_IDLE_SECONDS}s timeouts`,
    start: (e) => startHaproxy({ kind: 'tcp', timeoutSeconds: LAB_IDLE_SECONDS }, port(e)),
    route: through,
    idleSeconds: LAB_IDLE_SECONDS,
  },
  nginxVerbAcl: { name: 'nginx verb ACL (GET refused on exec/portforward)', start: (e) => startNginx({ kind: 'verb-acl' }, port(e)), route: through },
  haproxyVerbAcl: { name: 'haproxy verb ACL (http-request deny on GET)', start: (e) => startHaproxy({ kind: 'verb-acl' }, port(e)), route: through },
  apacheNoUpgrade: { name: 'apache ProxyPass without upgrade=', start: (e) => startApache('no-upgrade', port(e)), route: through },
  apacheWebSocketOnly: { name: 'apache upgrade=websocket only', start: (e) => startApache('websocket-only', port(e)), route: through },
  apacheVerbAcl: { name: 'apache verb ACL (<Limit GET>)', start: (e) => startApache('verb-acl', port(e)), route: through },
  varnishDefault: { name: 'varnish without piping upgrades', start: (e) => startVarnish('default', port(e)), route: through },
  varnishPipeWebSocket: { name: 'varnish piping only websocket', start: (e) => startVarnish('pipe-websocket', port(e)), route: through },
  nghttpxH2Leg: { name: 'nghttpx with an HTTP/2 leg', start: (e) => startNghttpx('h2-leg', port(e)), route: through },
  tinyproxy443: { name: 'tinyproxy with ConnectPort 443 only', start: () => startTinyproxy({ connectPorts: [443] }), route: viaProxy },
  privoxy443: { name: 'privoxy with limit-connect{443}', start: () => startPrivoxy({ connectPorts: [443] }), route: viaProxy },
  haproxyHttpTunnel: {
    name: `haproxy mode http, timeout tunnel ${LAB_IDLE_SECONDS}s`,
    start: (e) => startHaproxy({ kind: 'http-tunnel', tunnelTimeoutSeconds: LAB_IDLE_SECONDS }, port(e)),
    route: through,
    idleSeconds: LAB_IDLE_SECONDS,
  },
  squid: { name: 'squid (CONNECT allowed)', start: () => startSquid(), route: viaProxy },
  squidIdle: { name: 'squid read_timeout 4s', start: () => startSquid({ readTimeoutSeconds: 4 }), route: viaProxy, idleSeconds: 4 },
  dante: {
    name: 'dante (SOCKS5)',
    start: () => startDante(),
    route: (h, e) => ({ server: e.url, proxy: new URL(`socks5://127.0.0.1:${h.port}`) }),
  },
  mitmproxy: {
    name: 'mitmproxy intercepting TLS',
    tls: true,
    start: (e) => startMitmproxy(e.tls!.caPem),
    route: (h, e) => ({ ...viaProxy(h, e), ca: (h as RealHop & { caPem(): string }).caPem() }),
  },
} satisfies Record<string, HopPath>;

/** Our probe through a path: exec and port-forward over both transports, kubectl's keepalive, one hold. */
export function probeThrough(route: Route, name: string, holdSeconds: number): Promise<ProbeReport> {
  const { server, proxy } = route;
  return runPlan(
    {
      location: 'lab',
      cluster: {
        name,
        connection: { server, proxy: proxy ? { url: proxy } : undefined, upgradeTimeoutMs: 4000 },
        namespace: 'default',
        pod: 'probe-target',
        port: 8080,
      },
      operations: ['exec', 'portforward'],
      transports: ['websocket', 'spdy'],
      keepalives: ['kubectl'],
      holdsSeconds: [holdSeconds],
      echoTimeoutMs: 3000,
    },
    { skipPreflight: true },
  );
}
