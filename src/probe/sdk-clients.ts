/**
 * The WebSocket-only clients the `websocket-only` forecast speaks for, as the wire shows them, and the session that
 * behaves like them (keepalive `sdk`: session-channel.ts). None of them falls back to SPDY; the two kinds differ in
 * what keeps a held session alive:
 *
 * - SDK clients and browser terminals send no pings (they answer the server's, which the API server never sends), so
 *   any hop whose idle timer is shorter than a user's silence cuts them, where kubectl's pings keep kubectl alive;
 *   and they port-forward over the kubelet's legacy WebSocket protocol, which the API server proxies to the kubelet
 *   (apiserver PortForwardREST.Connect: translator.NewTranslatingHandler tunnels only requests offering
 *   SPDY/3.1+portforward.k8s.io), not the KEP-4006 tunnel.
 * - Tools built on client-go ≥ 0.36 speak kubectl's WebSocket path, pings included, but lost the fallback (the
 *   upgrade error type moved to k8s.io/streaming: piraeus-operator#1036, troubleshoot#2037): their forecast is
 *   kubectl's WebSocket session without the fallback.
 *
 * Measured with @kubernetes/client-node 1.4.0 and Debian's python3-kubernetes 22.6 (the lab's real hops and a logging
 * relay; test/lab/sdk-clients.test.ts runs client-node through every real hop of the lab, and the Python client
 * through those without a forward proxy).
 */

/** What @kubernetes/client-node offers for exec and port-forward alike (src/web-socket-handler.ts, `protocols`). */
export const SDK_WEBSOCKET_PROTOCOLS = ['v5.channel.k8s.io', 'v4.channel.k8s.io', 'v3.channel.k8s.io', 'v2.channel.k8s.io', 'channel.k8s.io'] as const;

export interface WebSocketOnlyFamily {
  readonly name: string;
  /** What it sends and speaks. */
  readonly wire: string;
  /** Its own rule about proxies. */
  readonly proxy: string;
  readonly source: string;
}

export const WEBSOCKET_ONLY_FAMILIES: readonly WebSocketOnlyFamily[] = [
  {
    name: 'the JavaScript client (@kubernetes/client-node)',
    wire: 'offers v5.channel.k8s.io down to channel.k8s.io for exec and port-forward; no pings (answers the server’s); exec gets v5 and ends stdin with [255, 0]; port-forward over the kubelet’s legacy WebSocket protocol (v4.channel.k8s.io: data channel 2i and error channel 2i+1, each starting with the port, one WebSocket per port and connection)',
    proxy: 'honours kubeconfig proxy-url with CONNECT, even to an http:// server; refuses an http:// server unless insecure-skip-tls-verify is set',
    source: 'kubernetes-client/javascript 1.4.0 src/web-socket-handler.ts and src/portforward.ts; measured (test/lab/sdk-clients.test.ts)',
  },
  {
    name: 'the Python client (kubernetes)',
    wire: 'offers only v4.channel.k8s.io (booleans in the query as True/False, stdin in text frames, no way to close stdin); no pings; port-forward over the legacy protocol',
    proxy: 'does not read kubeconfig proxy-url (22.6), and its websocket-client bypasses any proxy for localhost: behind a corporate proxy it goes direct',
    source: 'kubernetes-client/python 22.6 kubernetes/stream/ws_client.py; measured (test/lab/sdk-clients.test.ts, lab/python-client.py)',
  },
  {
    name: 'browser terminals',
    wire: 'the browser’s WebSocket API cannot send a ping frame, so they send none unless the page writes data; where they need text frames, the base64 subprotocols (v4.base64.channel.k8s.io, base64.channel.k8s.io)',
    proxy: 'the browser’s own proxy settings, not the kubeconfig’s',
    source: 'WHATWG WebSocket API (no ping method); apiserver wsstream base64 subprotocols',
  },
  {
    name: 'tools on client-go ≥ 0.36',
    wire: 'kubectl’s WebSocket path (v5 exec with pings every 5 s, the SPDY tunnel for port-forward with pings every 10 s) without its fallback to SPDY',
    proxy: 'as kubectl',
    source: 'the upgrade error type moved to k8s.io/streaming, so apimachinery IsUpgradeFailure no longer matches it: piraeus-operator#1036, troubleshoot#2037',
  },
];

/** The families in a line: the forecast's `source`. */
export function webSocketOnlySource(): string {
  return WEBSOCKET_ONLY_FAMILIES.map((f) => `${f.name}: ${f.wire}; proxies: ${f.proxy} (${f.source})`).join('; ');
}

/** The families as a Markdown table: docs/hops.md holds exactly this (test/unit/sdk-clients-doc.test.ts). */
export function familiesTable(): string {
  const cell = (t: string) => t.replace(/\|/g, '\\|');
  return [
    '| client | what it sends and speaks | its own rule about proxies | source |',
    '|---|---|---|---|',
    ...WEBSOCKET_ONLY_FAMILIES.map((f) => `| ${cell(f.name)} | ${cell(f.wire)} | ${cell(f.proxy)} | ${cell(f.source)} |`),
  ].join('\n');
}
