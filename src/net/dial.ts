/**
 * Opens the byte stream an upgrade request is written to, timing each phase:
 * DNS, TCP connect, proxy tunnel (HTTP CONNECT or SOCKS5) and TLS. Like
 * client-go, every upgrade gets a fresh connection and, through a forward
 * proxy, is always tunnelled with CONNECT (even to an http:// server).
 */
import { lookup } from 'node:dns/promises';
import net from 'node:net';
import tls from 'node:tls';
import { probeError, type ErrorCode, type ErrorContexts } from '../errors.js';
import { connectViaHttpProxy } from './http-connect.js';
import { connectViaSocks5 } from './socks5.js';
import { goCipherOrder } from './tls-ciphers.js';

export interface TlsSettings {
  /** PEM CA bundle(s); when absent, Node's default roots. */
  readonly ca?: readonly (string | Buffer)[];
  readonly cert?: string | Buffer;
  readonly key?: string | Buffer;
  /** Only when the kubeconfig says insecure-skip-tls-verify: true. */
  readonly insecureSkipVerify?: boolean;
  /** kubeconfig tls-server-name. */
  readonly serverName?: string;
}

export interface ProxySettings {
  /** http:, https: or socks5: (socks5h: too). Credentials may be in the URL. */
  readonly url: URL;
  /** TLS to an https:// proxy itself. */
  readonly tls?: TlsSettings;
}

export interface DialTarget {
  readonly url: URL; // http: or https: API server
  readonly tls?: TlsSettings;
  readonly proxy?: ProxySettings;
}

export type { DialPhases } from '../wire-types.js';
import type { DialPhases } from '../wire-types.js';

export interface Dialed {
  readonly socket: net.Socket;
  readonly phases: DialPhases;
  /** The TCP socket under any TLS, for RST/FIN detection. */
  readonly raw: net.Socket;
}

export type Dialer = (target: DialTarget, options: DialOptions) => Promise<Dialed>;

export interface DialOptions {
  readonly timeoutMs: number;
}

export function defaultPort(url: URL): number {
  if (url.port) return Number(url.port);
  switch (url.protocol) {
    case 'https:':
      return 443;
    case 'socks5:':
    case 'socks5h:':
      return 1080;
    default:
      return 80;
  }
}

/** Host for DNS/connect: URL hostnames keep IPv6 brackets. */
export function hostOf(url: URL): string {
  return url.hostname.replace(/^\[(.*)\]$/, '$1');
}

const since = (t0: number) => Math.round((performance.now() - t0) * 1000) / 1000;

async function resolve(host: string, phases: DialPhases): Promise<string> {
  if (net.isIP(host)) return host;
  const t0 = performance.now();
  try {
    const { address } = await lookup(host);
    phases.dnsMs = since(t0);
    return address;
  } catch (err) {
    throw probeError(
      'DIAL_DNS',
      `DNS lookup of ${host} failed: ${(err as NodeJS.ErrnoException).code ?? 'error'}`,
      { host, phases: { ...phases }, errno: (err as NodeJS.ErrnoException).code },
      err,
    );
  }
}

function tcpConnect(address: string, port: number, host: string, phases: DialPhases): Promise<net.Socket> {
  const t0 = performance.now();
  return new Promise((resolvePromise, reject) => {
    const socket = net.connect({ host: address, port });
    socket.setNoDelay(true);
    socket.once('connect', () => {
      phases.tcpMs = since(t0);
      socket.removeAllListeners('error');
      resolvePromise(socket);
    });
    socket.once('error', (err: NodeJS.ErrnoException) => {
      const code: ErrorCode = err.code === 'ECONNREFUSED' ? 'DIAL_REFUSED' : err.code === 'ETIMEDOUT' ? 'DIAL_TIMEOUT' : 'DIAL_FAILED';
      reject(
        probeError(code, `TCP connect to ${host}:${port} failed: ${err.code ?? err.message}`, { host, port, phases: { ...phases }, errno: err.code }, err),
      );
    });
  });
}

/** Who presented a certificate: the API server, or an https:// forward proxy. */
export type TlsPeer = 'server' | 'proxy';

/** "CN=…; DNS:…, IP Address:…": what a certificate says it is, for messages. */
function certificateNames(cert: tls.PeerCertificate): string {
  const cn = cert.subject?.CN ? `CN=${String(cert.subject.CN)}` : 'no CN';
  return `${cn}; ${cert.subjectaltname ? cert.subjectaltname : 'no subjectAltName'}`;
}

function issuerOf(cert: tls.PeerCertificate): string {
  const i = cert.issuer ?? {};
  return [i.CN && `CN=${String(i.CN)}`, i.O && `O=${String(i.O)}`].filter(Boolean).join(', ') || 'an unnamed issuer';
}

/**
 * Go's hostname check (crypto/x509 VerifyHostname, as crypto/tls runs it):
 * an IP is matched against the IP SANs, a name against the DNS SANs, and the
 * Common Name is never used (Go 1.15+: "x509: certificate relies on legacy
 * Common Name field, use SANs instead").
 */
function goHostnameError(name: string, cert: tls.PeerCertificate): string | undefined {
  const sans = (cert.subjectaltname ?? '').split(/,\s*/).filter(Boolean);
  const ip = net.isIP(name) !== 0;
  // Node falls back to the Common Name when a certificate has no DNS SAN; Go never does.
  if (!sans.some((s) => s.startsWith(ip ? 'IP Address:' : 'DNS:'))) return `it has no ${ip ? 'IP' : 'DNS'} subjectAltName (kubectl never uses the Common Name)`;
  return tls.checkServerIdentity(name, cert) ? `it is not valid for ${ip ? 'the IP' : 'the name'} ${name}` : undefined;
}

/**
 * One SecureContext per TLS settings (the kubeconfig's CA bundle, client certificate and key), as client-go keeps
 * one tls.Config per cluster (its transport cache): given `ca`/`cert`/`key`, tls.connect builds a new context for
 * every connection — the PEMs parsed again inside each timed handshake, our CPU read as the path's (issue 42: under
 * a 512 MB CPU share, handshakes after the first read 4-5 ms with one context, 5-6 ms without). A connection config
 * is built once per cluster and run, so the context lives as long as its settings object. Every context offers the
 * TLS 1.3 suites in Go's order, as kubectl does (tls-ciphers.ts).
 */
const secureContexts = new WeakMap<TlsSettings, tls.SecureContext>();
/** The context where the kubeconfig sets no CA or client certificate: Node's default roots, Go's suite order. */
let defaultContext: tls.SecureContext | undefined;

/** The context for `settings`, built on first use. */
export function secureContextFor(settings: TlsSettings | undefined): tls.SecureContext {
  if (!settings || (!settings.ca && settings.cert === undefined && settings.key === undefined)) {
    defaultContext ??= tls.createSecureContext({ ciphers: goCipherOrder() });
    return defaultContext;
  }
  let context = secureContexts.get(settings);
  if (!context) {
    context = tls.createSecureContext({ ca: settings.ca ? [...settings.ca] : undefined, cert: settings.cert, key: settings.key, ciphers: goCipherOrder() });
    secureContexts.set(settings, context);
  }
  return context;
}

/**
 * TLS over an open socket, verified as Go's crypto/tls does for kubectl: the
 * certificate chain against the kubeconfig's CA (or the system roots), and the
 * name against `tls-server-name` when set, else the dialled host. SNI carries
 * that name, except for an IP, which Go never sends as SNI. Verification is
 * skipped only when the kubeconfig says insecure-skip-tls-verify. We verify
 * after the handshake ourselves (nothing is sent before), so a failure can say
 * which name was checked and what the certificate holds.
 * Its duration goes to `phases.tlsMs` when `phases` is given.
 */
export function tlsWrap(
  socket: net.Socket,
  host: string,
  settings: TlsSettings | undefined,
  phases?: DialPhases,
  peer: TlsPeer = 'server',
): Promise<tls.TLSSocket> {
  const t0 = performance.now();
  const checkedName = settings?.serverName ?? host;
  const sni = net.isIP(checkedName) ? undefined : checkedName;
  const whose = peer === 'server' ? "the API server's" : "the proxy's";
  return new Promise((resolvePromise, reject) => {
    const s = tls.connect({
      socket,
      servername: sni,
      secureContext: secureContextFor(settings),
      // Checked below, with Go's rules and a message that says what was wrong.
      rejectUnauthorized: false,
      checkServerIdentity: () => undefined,
      // Upgrades are HTTP/1.1 only: an h2 hop would drop them.
      ALPNProtocols: ['http/1.1'],
    });
    const fail = (message: string, extra: Partial<ErrorContexts['DIAL_TLS']>, cause?: unknown) => {
      s.destroy();
      socket.destroy();
      reject(probeError('DIAL_TLS', message, { host, phases: phases ? { ...phases } : undefined, checkedName, peer, ...extra }, cause));
    };
    s.once('secureConnect', () => {
      if (phases) phases.tlsMs = since(t0);
      s.removeAllListeners('error');
      if (settings?.insecureSkipVerify !== true) {
        const cert = s.getPeerCertificate();
        const names = certificateNames(cert);
        if (!s.authorized) {
          const why = String(s.authorizationError ?? 'not trusted');
          return fail(
            `TLS: ${whose} certificate is not trusted (${why}): it was issued by ${issuerOf(cert)}, not by a certificate authority the kubeconfig trusts; it holds ${names}`,
            {
              untrusted: true,
              certificateNames: names,
              issuer: issuerOf(cert),
              errno: why,
            },
          );
        }
        const nameError = goHostnameError(checkedName, cert);
        if (nameError) {
          const via = settings?.serverName ? ' (tls-server-name)' : '';
          return fail(`TLS: ${whose} certificate was checked against ${checkedName}${via}, but ${nameError}; it holds ${names}`, {
            certificateNames: names,
            issuer: issuerOf(cert),
            errno: 'ERR_TLS_CERT_ALTNAME_INVALID',
          });
        }
      }
      resolvePromise(s);
    });
    s.once('error', (err: NodeJS.ErrnoException) =>
      fail(`TLS handshake with ${checkedName} failed: ${err.code ?? ''} ${err.message}`.trim(), { errno: err.code }, err),
    );
  });
}

/** The default dialer: real DNS, TCP, proxies and TLS. */
export const dial: Dialer = async (target, options) => {
  const phases: DialPhases = {};
  const host = hostOf(target.url);
  const port = defaultPort(target.url);
  let timer: NodeJS.Timeout | undefined;
  let sockets: net.Socket[] = [];
  const work = (async (): Promise<Dialed> => {
    let socket: net.Socket;
    if (target.proxy) {
      const p = target.proxy.url;
      const proxyHost = hostOf(p);
      const proxyPort = defaultPort(p);
      const proxyAddress = await resolve(proxyHost, phases);
      socket = await tcpConnect(proxyAddress, proxyPort, proxyHost, phases);
      sockets.push(socket);
      const t0 = performance.now();
      if (p.protocol === 'socks5:' || p.protocol === 'socks5h:') {
        await connectViaSocks5(socket, p, host, port);
      } else if (p.protocol === 'http:' || p.protocol === 'https:') {
        if (p.protocol === 'https:') {
          // TLS to the proxy itself is part of the proxy phase, timed once below.
          socket = await tlsWrap(socket, proxyHost, target.proxy.tls, undefined, 'proxy');
          sockets.push(socket);
        }
        await connectViaHttpProxy(socket, p, host, port);
      } else {
        throw probeError('CONFIG_INVALID', `proxy scheme ${p.protocol} is not supported (use http, https or socks5)`, { field: 'proxy-url' });
      }
      phases.proxyMs = since(t0);
    } else {
      const address = await resolve(host, phases);
      socket = await tcpConnect(address, port, host, phases);
      sockets.push(socket);
    }
    const raw = sockets[0]!;
    if (target.url.protocol === 'https:') {
      socket = await tlsWrap(socket, host, target.tls, phases);
      sockets.push(socket);
    }
    return { socket, phases, raw };
  })();
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () =>
        reject(
          probeError('DIAL_TIMEOUT', `connecting to ${host}:${port} took longer than ${options.timeoutMs} ms`, {
            host,
            port,
            phases: { ...phases },
            timeoutMs: options.timeoutMs,
          }),
        ),
      options.timeoutMs,
    );
  });
  try {
    return await Promise.race([work, timeout]);
  } catch (err) {
    for (const s of sockets) s.destroy();
    work.then(
      (d) => d.socket.destroy(),
      () => undefined,
    );
    throw err;
  } finally {
    clearTimeout(timer);
    sockets = [];
  }
};
