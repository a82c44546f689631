/**
 * Opens the byte stream an upgrade request is written to, timing each phase:
 * DNS, TCP connect, proxy tunnel (HTTP CONNECT or SOCKS5) and TLS. Like
 * client-go, every upgrade gets a fresh connection and, through a forward
 * proxy, is always tunnelled with CONNECT (even to an http:// server).
 */
import { lookup } from 'node:dns/promises';
import net from 'node:net';
import tls from 'node:tls';
import { probeError, type ErrorCode } from '../errors.js';
import { connectViaHttpProxy } from './http-connect.js';
import { connectViaSocks5 } from './socks5.js';

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

export interface DialPhases {
  dnsMs?: number;
  tcpMs?: number;
  proxyMs?: number;
  tlsMs?: number;
}

export interface Dialed {
  readonly socket: net.Socket;
  readonly phases: DialPhases;
  /** The TCP socket under any TLS, for RST/FIN detection. */
  readonly raw: net.Socket;
}

export type Dialer = (target: DialTarget, options: DialOptions) => Promise<Dialed>;

export interface DialOptions {
  readonly timeoutMs: number;
  readonly signal?: AbortSignal;
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
    throw probeError('DIAL_DNS', `DNS lookup of ${host} failed: ${(err as NodeJS.ErrnoException).code ?? 'error'}`, { host, phases: { ...phases }, errno: (err as NodeJS.ErrnoException).code }, err);
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
      reject(probeError(code, `TCP connect to ${host}:${port} failed: ${err.code ?? err.message}`, { host, port, phases: { ...phases }, errno: err.code }, err));
    });
  });
}

/** TLS over an open socket; its duration goes to `phases.tlsMs` when `phases` is given. */
export function tlsWrap(socket: net.Socket, host: string, settings: TlsSettings | undefined, phases?: DialPhases): Promise<tls.TLSSocket> {
  const t0 = performance.now();
  const serverName = settings?.serverName ?? (net.isIP(host) ? undefined : host);
  return new Promise((resolvePromise, reject) => {
    const s = tls.connect({
      socket,
      servername: serverName,
      ca: settings?.ca ? [...settings.ca] : undefined,
      cert: settings?.cert,
      key: settings?.key,
      // Verification is on unless the kubeconfig explicitly says otherwise.
      rejectUnauthorized: settings?.insecureSkipVerify !== true,
      // Upgrades are HTTP/1.1 only: an h2 hop would drop them.
      ALPNProtocols: ['http/1.1'],
      // kubeconfig tls-server-name: verify the certificate against that name, not the dialled host.
      ...(settings?.serverName ? { checkServerIdentity: (_h: string, cert: tls.PeerCertificate) => tls.checkServerIdentity(settings.serverName!, cert) } : {}),
    });
    s.once('secureConnect', () => {
      if (phases) phases.tlsMs = since(t0);
      s.removeAllListeners('error');
      resolvePromise(s);
    });
    s.once('error', (err: NodeJS.ErrnoException) => {
      socket.destroy();
      reject(probeError('DIAL_TLS', `TLS handshake with ${serverName ?? host} failed: ${err.code ?? ''} ${err.message}`.trim(), { host, phases: phases ? { ...phases } : undefined, errno: err.code }, err));
    });
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
          socket = await tlsWrap(socket, proxyHost, target.proxy.tls);
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
      () => reject(probeError('DIAL_TIMEOUT', `connecting to ${host}:${port} took longer than ${options.timeoutMs} ms`, { host, port, phases: { ...phases }, timeoutMs: options.timeoutMs })),
      options.timeoutMs,
    );
  });
  try {
    return await Promise.race([work, timeout]);
  } catch (err) {
    for (const s of sockets) s.destroy();
    work.then((d) => d.socket.destroy(), () => undefined);
    throw err;
  } finally {
    clearTimeout(timer);
    sockets = [];
  }
};
