/**
 * Real reverse proxies in front of the emulated API server, one config per
 * known failure (docs/hops.md): nginx and haproxy from Debian's packages.
 */
import { existsSync } from 'node:fs';
import { HopMissingError, startRealHop, type RealHop } from './process-hop.js';

export type NginxVariant =
  /** Correct WebSocket proxying, with a short proxy_read_timeout (the idle cut). */
  | { readonly kind: 'upgrade-ok'; readonly readTimeoutSeconds: number }
  /** A plain proxy_pass: no `proxy_set_header Upgrade/Connection`, HTTP/1.0 upstream. */
  | { readonly kind: 'no-upgrade-headers' }
  /** Upgrades proxied, but SPDY refused by policy (a WebSocket-only gateway). */
  | { readonly kind: 'refuse-spdy' }
  /** Upgrades proxied, but WebSocket refused with nginx's own 403 (a WAF rule against WebSocket). */
  | { readonly kind: 'refuse-websocket' }
  /** Upgrades proxied, but GET refused on exec/portforward (a method rule written when kubectl spoke only SPDY). */
  | { readonly kind: 'verb-acl' }
  /** Only …/exec and …/portforward allowed among the pod subresources (an allow-list written for those two): attach gets nginx's 403. */
  | { readonly kind: 'exec-only' };

export function nginxServerBlock(variant: NginxVariant, upstreamPort: number): string[] {
  const upgrade = [
    'proxy_http_version 1.1;',
    'proxy_set_header Upgrade $http_upgrade;',
    'proxy_set_header Connection $connection_upgrade;',
    'proxy_buffering off;',
  ];
  switch (variant.kind) {
    case 'upgrade-ok':
      return [
        ...upgrade,
        `proxy_read_timeout ${variant.readTimeoutSeconds}s;`,
        `proxy_send_timeout ${variant.readTimeoutSeconds}s;`,
        `proxy_pass http://127.0.0.1:${upstreamPort};`,
      ];
    case 'no-upgrade-headers':
      return [`proxy_pass http://127.0.0.1:${upstreamPort};`];
    case 'refuse-spdy':
      return ['if ($http_upgrade ~* "spdy") { return 403; }', ...upgrade, `proxy_pass http://127.0.0.1:${upstreamPort};`];
    case 'refuse-websocket':
      return ['if ($http_upgrade ~* "websocket") { return 403; }', ...upgrade, `proxy_pass http://127.0.0.1:${upstreamPort};`];
    case 'exec-only':
      return ['if ($uri ~ "/pods/[^/]+/attach$") { return 403; }', ...upgrade, `proxy_pass http://127.0.0.1:${upstreamPort};`];
    case 'verb-acl':
      return [
        'set $streaming "";',
        'if ($uri ~ "/(exec|portforward)$") { set $streaming "S"; }',
        'if ($request_method = GET) { set $streaming "${streaming}G"; }',
        'if ($streaming = "SG") { return 403; }',
        ...upgrade,
        `proxy_pass http://127.0.0.1:${upstreamPort};`,
      ];
  }
}

/** nginx's main context for a hop of ours: in the foreground, one process, its pid and log in the hop's dir. */
const nginxMain = (dir: string) => [
  'daemon off;',
  'master_process off;',
  'worker_processes 1;',
  `pid ${dir}/nginx.pid;`,
  `error_log ${dir}/error.log warn;`,
  'events { worker_connections 512; }',
];

export function startNginx(variant: NginxVariant, upstreamPort: number): Promise<RealHop> {
  return startRealHop({
    name: `nginx-${variant.kind}`,
    binary: 'nginx',
    debianPackage: 'nginx-light',
    files: (dir, [port]) => ({
      'nginx.conf': [
        ...nginxMain(dir),
        'http {',
        `  access_log ${dir}/access.log;`,
        `  client_body_temp_path ${dir}/body; proxy_temp_path ${dir}/proxy;`,
        `  fastcgi_temp_path ${dir}/fcgi; uwsgi_temp_path ${dir}/uwsgi; scgi_temp_path ${dir}/scgi;`,
        '  map $http_upgrade $connection_upgrade { default upgrade; "" close; }',
        '  server {',
        `    listen 127.0.0.1:${port};`,
        '    location / {',
        ...nginxServerBlock(variant, upstreamPort).map((l) => `      ${l}`),
        '    }',
        '  }',
        '}',
        '',
      ].join('\n'),
    }),
    args: (dir) => ['-p', dir, '-c', `${dir}/nginx.conf`],
  });
}

export type HaproxyVariant =
  /** L4: opaque bytes; only `timeout client/server` bites. */
  | { readonly kind: 'tcp'; readonly timeoutSeconds: number }
  /** L7: HTTP mode; upgraded connections live by `timeout tunnel`. */
  | { readonly kind: 'http-tunnel'; readonly tunnelTimeoutSeconds: number }
  /** L7, with `http-request deny` on GET to exec/portforward (a method rule written for SPDY's POST). */
  | { readonly kind: 'verb-acl' }
  /**
   * L4 with one idle timer per direction (`option independent-streams`): sending to a side no longer refreshes
   * that side's read timeout, so a session where only the pod writes (`tail -f`) is cut by `timeout client`,
   * and one where only the client writes by `timeout server`, though bytes keep moving.
   */
  | { readonly kind: 'independent-streams'; readonly timeoutSeconds: number };

export function startHaproxy(variant: HaproxyVariant, upstreamPort: number): Promise<RealHop> {
  const defaults =
    variant.kind === 'tcp' || variant.kind === 'independent-streams'
      ? [
          'mode tcp',
          'timeout connect 5s',
          `timeout client ${variant.timeoutSeconds}s`,
          `timeout server ${variant.timeoutSeconds}s`,
          ...(variant.kind === 'independent-streams' ? ['option independent-streams'] : []),
        ]
      : [
          'mode http',
          'option http-server-close',
          'timeout connect 5s',
          'timeout client 60s',
          'timeout server 60s',
          `timeout tunnel ${variant.kind === 'http-tunnel' ? variant.tunnelTimeoutSeconds : 600}s`,
        ];
  const rules = variant.kind === 'verb-acl' ? ['  http-request deny if METH_GET { path_end /exec /portforward }'] : [];
  return startRealHop({
    name: `haproxy-${variant.kind}`,
    binary: 'haproxy',
    debianPackage: 'haproxy',
    files: (_dir, [port]) => ({
      'haproxy.cfg': [
        'global',
        '  maxconn 512',
        'defaults',
        ...defaults.map((l) => `  ${l}`),
        'frontend fe',
        `  bind 127.0.0.1:${port}`,
        ...rules,
        '  default_backend be',
        'backend be',
        `  server api 127.0.0.1:${upstreamPort}`,
        '',
      ].join('\n'),
    }),
    args: (dir) => ['-db', '-f', `${dir}/haproxy.cfg`],
  });
}

/** Debian's nginx stream module (package libnginx-mod-stream): an L4 proxy that can rate-limit. */
export const NGINX_STREAM_MODULE = '/usr/lib/nginx/modules/ngx_stream_module.so';

/**
 * nginx's L4 `stream` proxy with `proxy_download_rate` / `proxy_upload_rate`: a bandwidth-limited relay, as a
 * rate-limited VPN, proxy or egress policy is. Every byte of every upgraded stream through it moves at most at
 * `bytesPerSecond` each way (per connection), however the streaming protocol frames it.
 */
export function startNginxThrottle(bytesPerSecond: number, upstreamPort: number): Promise<RealHop> {
  if (!existsSync(NGINX_STREAM_MODULE)) return Promise.reject(new HopMissingError(NGINX_STREAM_MODULE, 'libnginx-mod-stream'));
  return startRealHop({
    name: 'nginx-throttle',
    binary: 'nginx',
    debianPackage: 'nginx-light',
    files: (dir, [port]) => ({
      'nginx.conf': [
        `load_module ${NGINX_STREAM_MODULE};`,
        ...nginxMain(dir),
        'stream {',
        '  server {',
        `    listen 127.0.0.1:${port};`,
        `    proxy_pass 127.0.0.1:${upstreamPort};`,
        `    proxy_download_rate ${bytesPerSecond};`,
        `    proxy_upload_rate ${bytesPerSecond};`,
        '  }',
        '}',
        '',
      ].join('\n'),
    }),
    args: (dir) => ['-p', dir, '-c', `${dir}/nginx.conf`],
  });
}
