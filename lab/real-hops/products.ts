/**
 * More real hop products from Debian, each with the misconfiguration that
 * breaks kubectl's streaming the way it does in the field (docs/hops.md):
 * Apache httpd (mod_proxy_http without or with only `upgrade=websocket`, a
 * method rule), Varnish (upgrades not piped, or only WebSocket piped),
 * nghttpx (an HTTP/2 front), Privoxy (CONNECT only to 443), and a verb ACL in
 * nginx and HAProxy. Started with their own config on a free loopback port,
 * stopped by pid (process-hop.ts).
 */
import { startRealHop, type RealHop } from './process-hop.js';

export type ApacheVariant =
  /** `ProxyPass` without `upgrade=`: mod_proxy_http forwards the request without its Upgrade. */
  | 'no-upgrade'
  /** `upgrade=websocket`: WebSocket is tunnelled, SPDY/3.1's Upgrade is dropped. */
  | 'websocket-only'
  /** Upgrades tunnelled (`upgrade=ANY`), but GET refused on exec/portforward: a verb rule written for SPDY. */
  | 'verb-acl';

// Debian's apache2 has unixd and log_config built in; these are the loadable ones a reverse proxy needs.
const APACHE_MODULES = ['mpm_event', 'authz_core', 'authz_host', 'proxy', 'proxy_http'];

export function startApache(variant: ApacheVariant, upstreamPort: number): Promise<RealHop> {
  const upstream = `http://127.0.0.1:${upstreamPort}/`;
  const pass =
    variant === 'no-upgrade'
      ? `ProxyPass "/" "${upstream}"`
      : variant === 'websocket-only'
        ? `ProxyPass "/" "${upstream}" upgrade=websocket`
        : `ProxyPass "/" "${upstream}" upgrade=ANY`;
  return startRealHop({
    name: `apache-${variant}`,
    binary: 'apache2',
    debianPackage: 'apache2',
    files: (dir, [port]) => ({
      'httpd.conf': [
        `ServerRoot "${dir}"`,
        ...APACHE_MODULES.map((m) => `LoadModule ${m}_module /usr/lib/apache2/modules/mod_${m}.so`),
        `Listen 127.0.0.1:${port}`,
        'ServerName 127.0.0.1',
        'User www-data',
        'Group www-data',
        `PidFile "${dir}/httpd.pid"`,
        `ErrorLog "${dir}/error.log"`,
        'LogFormat "%h %r %>s" short',
        `CustomLog "${dir}/access.log" short`,
        `Mutex file:${dir} default`,
        'ProxyRequests Off',
        'ProxyTimeout 600',
        ...(variant === 'verb-acl'
          ? ['<LocationMatch "/(exec|portforward)$">', '  <Limit GET>', '    Require all denied', '  </Limit>', '</LocationMatch>']
          : []),
        pass,
        '',
      ].join('\n'),
    }),
    args: (dir) => ['-X', '-f', `${dir}/httpd.conf`],
  });
}

export type VarnishVariant =
  /** Varnish's built-in VCL: upgrades are neither piped nor passed on (hop-by-hop headers are dropped). */
  | 'default'
  /** Only `Upgrade: websocket` is piped (the Varnish docs' example): SPDY/3.1 is not. */
  | 'pipe-websocket'
  /** Every upgrade piped to the backend (the fix). */
  | 'pipe-upgrades';

export function startVarnish(variant: VarnishVariant, upstreamPort: number): Promise<RealHop> {
  const pipeWhen = variant === 'pipe-websocket' ? 'req.http.upgrade ~ "(?i)websocket"' : variant === 'pipe-upgrades' ? 'req.http.upgrade' : undefined;
  return startRealHop({
    name: `varnish-${variant}`,
    binary: 'varnishd',
    debianPackage: 'varnish',
    files: (_dir, [port]) => ({
      'default.vcl': [
        'vcl 4.1;',
        `backend api { .host = "127.0.0.1"; .port = "${upstreamPort}"; }`,
        ...(pipeWhen
          ? [
              `sub vcl_recv { if (${pipeWhen}) { return (pipe); } }`,
              'sub vcl_pipe { if (req.http.upgrade) { set bereq.http.upgrade = req.http.upgrade; set bereq.http.connection = req.http.connection; } }',
            ]
          : []),
        '',
      ].join('\n'),
      port: String(port),
    }),
    args: (dir, [port]) => ['-F', '-f', `${dir}/default.vcl`, '-a', `127.0.0.1:${port}`, '-n', dir, '-s', 'malloc,16m', '-T', 'none', '-p', 'pipe_timeout=600'],
  });
}

/**
 * nghttpx as a front. `http1`: HTTP/1.1 on both legs (it tunnels any upgrade). `h2-leg`: a real HTTP/2 leg, as a
 * cloud front or mesh builds one: nghttpx A (HTTP/1.1 in) talks HTTP/2 to nghttpx B (h2c in, HTTP/1.1 to the API
 * server). WebSocket crosses it as an RFC 8441 extended CONNECT; SPDY/3.1 has no HTTP/2 mapping, so its Upgrade is
 * dropped and the API server sees a plain POST.
 */
export async function startNghttpx(variant: 'http1' | 'h2-leg', upstreamPort: number): Promise<RealHop> {
  const one = (name: string, backend: string) =>
    startRealHop({
      name,
      binary: 'nghttpx',
      debianPackage: 'nghttp2-proxy',
      files: (dir) => ({
        'nghttpx.conf': [`pid-file=${dir}/nghttpx.pid`, `errorlog-file=${dir}/error.log`, `accesslog-file=${dir}/access.log`, 'workers=1', ''].join('\n'),
      }),
      args: (dir, [port]) => [
        `--conf=${dir}/nghttpx.conf`,
        `--frontend=127.0.0.1,${port};no-tls`,
        `--backend=${backend}`,
        '--backend-read-timeout=600',
        '--frontend-read-timeout=600',
      ],
    });
  if (variant === 'http1') return one('nghttpx', `127.0.0.1,${upstreamPort}`);
  const inner = await one('nghttpx-h2-inner', `127.0.0.1,${upstreamPort}`);
  try {
    const outer = await one('nghttpx-h2-outer', `127.0.0.1,${inner.port};;proto=h2`);
    return { ...outer, stop: async () => (await outer.stop(), await inner.stop()), log: () => `${outer.log()}\n${inner.log()}` };
  } catch (err) {
    await inner.stop();
    throw err;
  }
}

/** Privoxy as the forward proxy; with `connectPorts`, a `limit-connect` action that allows CONNECT to those ports only (Privoxy's own default allows every port). */
export function startPrivoxy(o: { readonly connectPorts?: readonly number[] } = {}): Promise<RealHop> {
  return startRealHop({
    name: 'privoxy',
    binary: 'privoxy',
    debianPackage: 'privoxy',
    files: (dir, [port]) => ({
      config: [
        `confdir ${dir}`,
        `logdir ${dir}`,
        `listen-address 127.0.0.1:${port}`,
        'toggle 1',
        'enable-remote-toggle 0',
        ...(o.connectPorts ? ['actionsfile ports.action'] : []),
        '',
      ].join('\n'),
      ...(o.connectPorts ? { 'ports.action': `{+limit-connect{${o.connectPorts.join(',')}}}\n/\n` } : {}),
    }),
    args: (dir) => ['--no-daemon', `${dir}/config`],
  });
}
