/**
 * Which product a hop is, when the wire names it, and that product's fix.
 *
 * A refusal names its hop in the `Server` header (nginx, Apache, HAProxy's
 * error pages carry none, nghttpx, Caddy, envoy, tinyproxy, squid), in `Via`
 * (Varnish, squid) or in its error page ("Request blocked by Privoxy", HAProxy's
 * "Request forbidden by administrative rules", an ALB's "awselb"). Each fix is
 * the product's documented way (its source is given with it); when the product
 * is unknown the fix is the generic one.
 */
export type HopFix =
  /** The hop must pass the upgrade (WebSocket, and SPDY/3.1 for older clients). */
  | 'upgrade'
  /** The hop must allow the method/path (a rule refusing GET or upgrades on pods/exec|portforward). */
  | 'rule'
  /** A forward proxy must allow CONNECT to the API server's port. */
  | 'connect'
  /** The hop's idle timeout for upgraded connections. */
  | 'idle';

export interface HopProduct {
  readonly id: string;
  readonly name: string;
  /** What on the wire names it. */
  readonly match: { readonly server?: RegExp; readonly via?: RegExp; readonly body?: RegExp };
  readonly fixes: Partial<Record<HopFix, string>>;
  /** Where the fixes come from. */
  readonly source: string;
}

export const HOP_PRODUCTS: readonly HopProduct[] = [
  {
    id: 'nginx',
    name: 'nginx',
    match: { server: /^nginx|openresty/i, body: /<center>nginx/i },
    fixes: {
      upgrade:
        'in the location that proxies the API server: `proxy_http_version 1.1; proxy_set_header Upgrade $http_upgrade; proxy_set_header Connection $connection_upgrade;` (with `map $http_upgrade $connection_upgrade { default upgrade; "" close; }`) and `proxy_buffering off;`',
      rule: 'find the `deny`, `limit_except` or `if ($request_method …) { return 403; }` that applies to pods/exec and pods/portforward, and allow GET with `Upgrade: websocket` as well as POST',
      idle: '`proxy_read_timeout` and `proxy_send_timeout` (60 s by default) in that location',
    },
    source: 'nginx.org/en/docs/http/websocket.html; nginx.org/en/docs/http/ngx_http_proxy_module.html',
  },
  {
    id: 'apache',
    name: 'Apache httpd',
    match: { server: /^apache/i, body: /<address>apache/i },
    fixes: {
      upgrade:
        'Apache 2.4.47+: add `upgrade=ANY` to the `ProxyPass` of the API server so mod_proxy_http tunnels both upgrades (`upgrade=websocket` passes WebSocket only, and drops the SPDY/3.1 upgrade of kubectl ≤1.29 and 1.30 port-forward); older Apache: mod_proxy_wstunnel with a `ws://` ProxyPass for WebSocket',
      rule: 'find the `<Limit>`/`<LimitExcept>`, `Require` or mod_security rule that refuses GET (or upgrades) on pods/exec and pods/portforward, and allow GET with `Upgrade: websocket` as well as POST',
      idle: '`ProxyTimeout` (or `timeout=` on the ProxyPass) for tunnelled upgrades',
    },
    source: 'httpd.apache.org/docs/2.4/mod/mod_proxy.html#protoupgrade; httpd.apache.org/docs/2.4/mod/mod_proxy_wstunnel.html',
  },
  {
    id: 'varnish',
    name: 'Varnish',
    match: { server: /varnish/i, via: /varnish/i, body: /varnish cache server/i },
    fixes: {
      upgrade:
        'Varnish does not tunnel upgrades itself: pipe them to the backend, `sub vcl_recv { if (req.http.upgrade) { return (pipe); } }` and `sub vcl_pipe { if (req.http.upgrade) { set bereq.http.upgrade = req.http.upgrade; set bereq.http.connection = req.http.connection; } }`',
      rule: 'find the `vcl_recv` rule that returns a synthetic error for GET (or upgrades) on pods/exec and pods/portforward',
      idle: '`pipe_timeout` (a piped upgrade ends after it is idle that long)',
    },
    source: 'varnish-cache.org/docs/trunk/users-guide/vcl-example-websockets.html; varnish-cache.org/docs/trunk/reference/varnishd.html#pipe-timeout',
  },
  {
    id: 'haproxy',
    name: 'HAProxy',
    match: { server: /haproxy/i, body: /request forbidden by administrative rules|haproxy/i },
    fixes: {
      upgrade:
        "mode http passes upgrades by itself: remove any `http-request del-header Upgrade`/`Connection` or `option httpclose` that strips them, and do not force `proto h2` on the API server's backend",
      rule: 'find the `http-request deny` (an ACL on `method GET` or on `hdr(upgrade)`) that matches pods/exec and pods/portforward, and allow GET with `Upgrade: websocket` as well as POST',
      idle: '`timeout tunnel` (upgraded connections), or `timeout client`/`timeout server` in mode tcp',
    },
    source: 'docs.haproxy.org/2.8/configuration.html#4-timeout%20tunnel; docs.haproxy.org/2.8/configuration.html#4.2-http-request',
  },
  {
    id: 'envoy',
    name: 'Envoy (Istio, Contour, Gateway API implementations)',
    match: { server: /envoy|istio/i, body: /upstream connect error|no healthy upstream|RBAC: access denied/i },
    fixes: {
      upgrade:
        'the HTTP connection manager needs `upgrade_configs: [{upgrade_type: websocket}, {upgrade_type: spdy/3.1}]` (Istio: WebSocket is on; SPDY/3.1 needs an EnvoyFilter adding that upgrade type), no buffer filter on the route, and an HTTP/1.1 (not h2) cluster protocol to the API server unless it speaks RFC 8441',
      rule: 'find the RBAC filter or AuthorizationPolicy that allows POST but not GET on pods/exec and pods/portforward',
      idle: '`idle_timeout` of the route / `stream_idle_timeout` of the connection manager (Istio: 1 h)',
    },
    source: 'envoyproxy.io/docs/envoy/latest/intro/arch_overview/http/upgrades; istio.io/latest/docs/ops/configuration/traffic-management/protocol-selection/',
  },
  {
    id: 'caddy',
    name: 'Caddy',
    match: { server: /^caddy/i },
    fixes: {
      upgrade: "`reverse_proxy` passes upgrades over HTTP/1.1 by itself: do not set `transport http { versions h2 }` (or h2c) for the API server's upstream",
      rule: 'find the `respond`/`abort` matcher on method GET or the Upgrade header for pods/exec and pods/portforward',
      idle: '`stream_timeout` / `stream_close_delay` of `reverse_proxy`',
    },
    source: 'caddyserver.com/docs/caddyfile/directives/reverse_proxy',
  },
  {
    id: 'traefik',
    name: 'Traefik',
    match: { server: /traefik/i },
    fixes: {
      upgrade: "Traefik passes WebSocket by itself; SPDY/3.1 needs an HTTP/1.1 backend (not `h2c://`): check the service's `serversTransport` and scheme",
      rule: 'find the middleware (IPAllowList, ForwardAuth, a plugin) that refuses GET on pods/exec and pods/portforward',
      idle: '`respondingTimeouts.idleTimeout` of the entry point (180 s by default)',
    },
    source: 'doc.traefik.io/traefik/routing/entrypoints/#respondingtimeouts',
  },
  {
    id: 'nghttpx',
    name: 'nghttpx (an HTTP/2 front)',
    match: { server: /nghttpx/i },
    fixes: {
      upgrade:
        'an HTTP/2 leg carries WebSocket (RFC 8441 extended CONNECT) but SPDY/3.1 has no HTTP/2 mapping: give the API server an HTTP/1.1 backend (`--backend=HOST,PORT` without `;proto=h2`) so both upgrades reach it',
      idle: '`--frontend-read-timeout` / `--backend-read-timeout`',
    },
    source: 'nghttp2.org/documentation/nghttpx.1.html; RFC 8441',
  },
  {
    id: 'squid',
    name: 'Squid',
    match: { server: /squid/i, via: /squid/i, body: /squid/i },
    fixes: {
      connect:
        "the stock squid.conf refuses CONNECT to any port but 443 (`http_access deny CONNECT !SSL_ports`): add the API server's port to the `SSL_ports` ACL (e.g. `acl SSL_ports port 6443`) or an `http_access allow CONNECT` rule for its address above that line",
      upgrade:
        'as a forward proxy Squid tunnels HTTPS with CONNECT; for an http:// API server it must not strip `Upgrade` (`http_upgrade_request_protocols WebSocket allow all` and `SPDY/3.1`, Squid 5+)',
      idle: '`read_timeout` / `client_idle_pconn_timeout` for tunnels',
    },
    source: 'squid-cache.org/Doc/config/http_access/; squid-cache.org/Doc/config/http_upgrade_request_protocols/',
  },
  {
    id: 'tinyproxy',
    name: 'tinyproxy',
    match: { server: /tinyproxy/i, body: /tinyproxy/i },
    fixes: {
      connect:
        "when tinyproxy.conf has `ConnectPort` lines, CONNECT is allowed only to those ports (the shipped file has 443 and 563 as commented examples): add one for the API server's port, e.g. `ConnectPort 6443`",
      idle: '`Timeout` (idle seconds before a connection is closed)',
    },
    source: 'tinyproxy.github.io/ (tinyproxy.conf(5): ConnectPort, Timeout)',
  },
  {
    id: 'privoxy',
    name: 'Privoxy',
    match: { server: /privoxy/i, body: /privoxy/i },
    fixes: {
      connect:
        "a `limit-connect` action (often `{+limit-connect{443}}`) limits CONNECT to the ports it lists: add the API server's port, e.g. `{+limit-connect{443,6443}}`, in the actions file that sets it",
    },
    source: 'privoxy.org/user-manual/actions-file.html#LIMIT-CONNECT',
  },
  {
    id: 'aws-alb',
    name: 'an AWS Application Load Balancer',
    match: { server: /awselb/i, body: /awselb/i },
    fixes: {
      upgrade:
        "an ALB passes WebSocket upgrades to HTTP/1.1 targets: check the target group's protocol version (HTTP1, not HTTP2/gRPC); SPDY/3.1 is not carried by an ALB, use an NLB (TCP/TLS) for the API server",
      rule: 'find the listener rule or AWS WAF rule that refuses GET on pods/exec and pods/portforward',
      idle: 'the load balancer attribute `idle_timeout.timeout_seconds` (60 s by default, up to 4000)',
    },
    source:
      'docs.aws.amazon.com/elasticloadbalancing/latest/application/load-balancer-listeners.html (WebSockets); .../application-load-balancers.html#connection-idle-timeout',
  },
  {
    id: 'cloudflare',
    name: 'Cloudflare',
    match: { server: /cloudflare/i, body: /cloudflare/i },
    fixes: { upgrade: 'enable WebSockets for the zone; SPDY/3.1 upgrades are not proxied: bypass Cloudflare for the API server (DNS only)' },
    source: 'developers.cloudflare.com/network/websockets/',
  },
];

/** The product a reply names, with the evidence (the header or the words that named it). */
export function identifyHop(reply: {
  readonly server?: string;
  readonly via?: string;
  readonly bodyPrefix?: string;
}): { readonly product: HopProduct; readonly evidence: string } | undefined {
  for (const p of HOP_PRODUCTS) {
    if (reply.server && p.match.server?.test(reply.server)) return { product: p, evidence: `Server: ${reply.server}` };
    if (reply.via && p.match.via?.test(reply.via)) return { product: p, evidence: `Via: ${reply.via}` };
  }
  for (const p of HOP_PRODUCTS) {
    const m = reply.bodyPrefix ? p.match.body?.exec(reply.bodyPrefix) : null;
    if (m) return { product: p, evidence: `its page says "${m[0]}"` };
  }
  return undefined;
}

/** Generic fixes, when the product is unknown. */
const GENERIC: Readonly<Record<HopFix, string>> = {
  upgrade:
    "it must pass `Connection: Upgrade` and `Upgrade` end to end over HTTP/1.1 and answer with the API server's 101 (for WebSocket: GET with `Upgrade: websocket`; for SPDY: POST with `Upgrade: SPDY/3.1`)",
  rule: 'find the rule (WAF, ACL, policy) that refuses GET (or upgrades) on pods/exec and pods/portforward and allow GET with `Upgrade: websocket` as well as POST',
  connect: "allow CONNECT to the API server's host and port in the proxy",
  idle: 'its idle timeout for upgraded connections',
};

/** The fix for a hop, its product's when the reply names one, else the generic one; with where it comes from. */
export function hopFix(kind: HopFix, hop: ReturnType<typeof identifyHop>): string {
  const own = hop?.product.fixes[kind];
  if (own) return `${hop!.product.name} (${hop!.evidence}): ${own} (${hop!.product.source}).`;
  const generic = GENERIC[kind];
  return hop ? `${hop.product.name} (${hop.evidence}): ${generic}.` : `${generic[0]!.toUpperCase()}${generic.slice(1)}.`;
}
