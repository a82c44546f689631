/**
 * Forward proxies the probe goes through: squid (HTTP CONNECT), dante
 * (SOCKS5), and haproxy terminating TLS in front of squid (an https:// proxy).
 */
import { startRealHop, type RealHop } from './process-hop.js';

export interface SquidOptions {
  /** Refuse CONNECT to these ports with 403 (a proxy policy). */
  readonly denyConnectPorts?: readonly number[];
  /** squid's read_timeout / client-side idle limit for tunnels, seconds. */
  readonly readTimeoutSeconds?: number;
}

export function startSquid(o: SquidOptions = {}): Promise<RealHop> {
  return startRealHop({
    name: 'squid',
    binary: 'squid',
    debianPackage: 'squid',
    files: (dir, [port]) => ({
      'squid.conf': [
        `http_port 127.0.0.1:${port}`,
        'acl CONNECT method CONNECT',
        ...(o.denyConnectPorts?.length ? [`acl denied_ports port ${o.denyConnectPorts.join(' ')}`, 'http_access deny CONNECT denied_ports'] : []),
        'http_access allow all',
        'cache deny all',
        'shutdown_lifetime 0 seconds',
        ...(o.readTimeoutSeconds ? [`read_timeout ${o.readTimeoutSeconds} seconds`, `client_idle_pconn_timeout ${o.readTimeoutSeconds} seconds`] : []),
        `access_log stdio:${dir}/access.log`,
        `cache_log ${dir}/cache.log`,
        `pid_filename ${dir}/squid.pid`,
        `coredump_dir ${dir}`,
        'dns_v4_first on',
        '',
      ].join('\n'),
    }),
    // A service name of its own (-n): squids started at the same moment would otherwise race for the same shared
    // memory segment (/squid-cf__metadata.shm: "File exists").
    args: (dir, [port]) => ['-N', '-n', `ksp${port}`, '-f', `${dir}/squid.conf`],
  });
}

export function startDante(): Promise<RealHop> {
  return startRealHop({
    name: 'dante',
    binary: 'danted',
    debianPackage: 'dante-server',
    files: (dir, [port]) => ({
      'danted.conf': [
        `logoutput: ${dir}/danted.log`,
        `internal: 127.0.0.1 port = ${port}`,
        'external: 127.0.0.1',
        'clientmethod: none',
        'socksmethod: none',
        'user.privileged: root',
        'user.unprivileged: nobody',
        'client pass { from: 127.0.0.0/8 to: 0.0.0.0/0 }',
        'socks pass { from: 127.0.0.0/8 to: 0.0.0.0/0 }',
        '',
      ].join('\n'),
    }),
    args: (dir) => ['-f', `${dir}/danted.conf`, '-p', `${dir}/danted.pid`],
  });
}

export interface TinyproxyOptions {
  /** Allow CONNECT only to these ports (tinyproxy answers others with 403); default: every port. */
  readonly connectPorts?: readonly number[];
  /** Require Proxy-Authorization: Basic for this user and password (tinyproxy's BasicAuth). */
  readonly basicAuth?: { readonly user: string; readonly password: string };
}

/** tinyproxy: a small HTTP forward proxy (CONNECT, and absolute-URI requests for http:// servers). */
export function startTinyproxy(o: TinyproxyOptions = {}): Promise<RealHop> {
  return startRealHop({
    name: 'tinyproxy',
    binary: 'tinyproxy',
    debianPackage: 'tinyproxy',
    files: (dir, [port]) => ({
      'tinyproxy.conf': [
        `Port ${port}`,
        'Listen 127.0.0.1',
        'Timeout 600',
        'MaxClients 100',
        'Allow 127.0.0.1',
        'LogLevel Info',
        `LogFile "${dir}/tinyproxy.log"`,
        `PidFile "${dir}/tinyproxy.pid"`,
        'DisableViaHeader Yes',
        ...(o.connectPorts ?? []).map((p) => `ConnectPort ${p}`),
        ...(o.basicAuth ? [`BasicAuth ${o.basicAuth.user} ${o.basicAuth.password}`] : []),
        '',
      ].join('\n'),
    }),
    args: (dir) => ['-d', '-c', `${dir}/tinyproxy.conf`],
  });
}

/** haproxy terminating TLS and relaying to an HTTP proxy: a proxy-url of https://. */
export function startTlsFront(name: string, backendPort: number, certAndKeyPem: string, extraDefaults: readonly string[] = []): Promise<RealHop> {
  return startRealHop({
    name,
    binary: 'haproxy',
    debianPackage: 'haproxy',
    files: (_dir, [port]) => ({
      'cert.pem': certAndKeyPem,
      'haproxy.cfg': [
        'global',
        '  maxconn 256',
        'defaults',
        '  mode tcp',
        '  timeout connect 5s',
        '  timeout client 1h',
        '  timeout server 1h',
        ...extraDefaults.map((l) => `  ${l}`),
        `frontend tls_in`,
        `  bind 127.0.0.1:${port} ssl crt cert.pem`,
        '  default_backend out',
        'backend out',
        `  server s1 127.0.0.1:${backendPort}`,
        '',
      ].join('\n'),
    }),
    args: (dir) => ['-db', '-f', `${dir}/haproxy.cfg`],
  });
}

/**
 * A mitmproxy addon that drops what a client sends on the Kubernetes channel protocols' resize channel (4: the first
 * byte of a binary message, or the character "4" of a base64 one): a WebSocket-inspecting hop that loses terminal
 * resizes. SPDY it passes as an opaque stream after the 101, so it cannot touch the resize stream there.
 */
const DROP_RESIZE_ADDON = `def websocket_message(flow):
    m = flow.websocket.messages[-1]
    if m.from_client and m.content[:1] == (b"4" if m.is_text else b"\\x04"):
        m.drop()
`;

/**
 * mitmproxy as a TLS-intercepting forward proxy: it terminates the client's
 * TLS with its own CA (which the kubeconfig must trust), so it sees plaintext
 * HTTP: an L7 hop. Upstream it trusts the lab CA.
 */
export async function startMitmproxy(upstreamCaPem: string, o: { readonly dropResize?: boolean } = {}): Promise<RealHop & { caPem(): string }> {
  const hop = await startRealHop({
    name: o.dropResize ? 'mitmproxy-drop-resize' : 'mitmproxy',
    binary: 'mitmdump',
    debianPackage: 'mitmproxy',
    files: () => ({ 'upstream-ca.pem': upstreamCaPem, ...(o.dropResize ? { 'drop-resize.py': DROP_RESIZE_ADDON } : {}) }),
    args: (dir, [port]) => [
      ...(o.dropResize ? ['-s', `${dir}/drop-resize.py`] : []),
      '--mode',
      'regular',
      '--listen-host',
      '127.0.0.1',
      '--listen-port',
      String(port),
      '--set',
      `confdir=${dir}/conf`,
      '--set',
      `ssl_verify_upstream_trusted_ca=${dir}/upstream-ca.pem`,
      '--set',
      'termlog_verbosity=warn',
      '--set',
      'flow_detail=0',
    ],
    env: { HOME: '/tmp' },
  });
  const { readFileSync } = await import('node:fs');
  return { ...hop, caPem: () => readFileSync(`${hop.dir}/conf/mitmproxy-ca-cert.pem`, 'utf8') };
}
