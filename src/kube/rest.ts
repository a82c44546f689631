/**
 * Plain API requests (discovery, /version, SelfSubjectAccessReview, lists) on
 * undici's connection pool, through our own dialer (undici's `connect`
 * option), so they take exactly the path the upgrades take (proxy, TLS
 * settings, timed phases) and get keep-alive, a body limit and timeouts from
 * a well-kept client. Redirects are not followed (undici never does by
 * default); HTTP/1.1 only.
 *
 * Through an http(s) forward proxy, a request to an https:// server is
 * tunnelled with CONNECT, and one to an http:// server is sent to the proxy as
 * an absolute-URI request, as Go's http.Transport (and so kubectl) does
 * (net/http transport.go: connectMethod.proxyURL / requiresHTTP1 and
 * "useProxy && scheme == http").
 */
// Deep import: undici's index pulls fetch, WebSocket and caches into the bundle (535 KB against 283 KB; docs/decisions.md).
import { STATUS_CODES } from 'node:http';
import { nextConnectionNumber } from '../net/wire-log.js';
import apiRequest from 'undici/lib/api/api-request.js';
import UndiciPool from 'undici/lib/dispatcher/pool.js';
import type { Pool as PoolType } from 'undici';
import { errorCodeOf, errorMessage, isProbeError, probeError } from '../errors.js';
import { DEFAULT_DIAL_TIMEOUT_MS, requestPath, type ConnectionConfig } from '../net/connection.js';
import { dial as defaultDial, type DialTarget } from '../net/dial.js';
import { parseKubeStatus, type KubeStatus } from './status.js';

const Pool = UndiciPool;

/** The largest response body read, bytes: a pod list of a 5 000-node DaemonSet fits; anything bigger is refused. */
export const MAX_REST_BODY_BYTES = 16 * 1024 * 1024;
/** Default per-request limit (headers, then body), ms. */
export const DEFAULT_REST_TIMEOUT_MS = 15_000;
/** Parallel connections per API server (the RBAC preflight sends six reviews at once). */
const POOL_CONNECTIONS = 4;

export interface RestResponse {
  readonly status: number;
  /** The parsed JSON body, or undefined when it is not JSON. */
  readonly body: unknown;
  /** The body as text, first 2 000 characters (for messages). */
  readonly text: string;
  /** The body as a Kubernetes Status, when it is one. */
  readonly kubeStatus?: KubeStatus;
  /** The whole body as text, when asked for (`fullText`): /metrics is not JSON. */
  readonly fullText?: string;
}

export interface RequestOptions {
  /** Accept header (default CLIENT_GO_ACCEPT, what kubectl's REST client sends). */
  readonly accept?: string;
  /** Keep the whole body as text in `fullText`. */
  readonly fullText?: boolean;
}

/** Whether requests to this server go to a forward proxy as absolute URIs (http:// server, http(s) proxy). */
function forwardsThroughProxy(config: ConnectionConfig): boolean {
  const p = config.proxy?.url.protocol;
  return config.server.protocol === 'http:' && (p === 'http:' || p === 'https:');
}

// What client-go's REST client sends as Accept for a JSON client with no accept types set (kubectl's requests,
// recorded in test/interop/request-parity.test.ts): the content type, then any.
export const CLIENT_GO_ACCEPT = 'application/json, */*';

export class RestClient {
  private readonly pool: PoolType;
  private readonly absolute: boolean;

  constructor(private readonly config: ConnectionConfig) {
    this.absolute = forwardsThroughProxy(config);
    const dialer = config.dialer ?? defaultDial;
    // Absolute-URI requests go to the proxy itself; everything else is dialled like an upgrade.
    const target: DialTarget = this.absolute
      ? { url: config.proxy!.url, tls: config.proxy!.tls }
      : { url: config.server, tls: config.tls, proxy: config.proxy };
    const origin = `${target.url.protocol}//${target.url.host}`;
    this.pool = new Pool(origin, {
      connections: POOL_CONNECTIONS,
      maxResponseSize: MAX_REST_BODY_BYTES,
      connect: (_opts, callback) => {
        dialer(target, { timeoutMs: config.dialTimeoutMs ?? DEFAULT_DIAL_TIMEOUT_MS }).then(
          (d) => callback(null, d.socket),
          (err: Error) => callback(err, null),
        );
      },
    });
  }

  async request(
    method: 'GET' | 'POST',
    path: string,
    body?: unknown,
    timeoutMs = DEFAULT_REST_TIMEOUT_MS,
    options: RequestOptions = {},
  ): Promise<RestResponse> {
    const c = this.config;
    const payload = body === undefined ? undefined : JSON.stringify(body);
    const headers: Record<string, string> = { host: c.server.host, accept: options.accept ?? CLIENT_GO_ACCEPT, ...(c.headers ?? {}) };
    if (c.userAgent) headers['user-agent'] = c.userAgent;
    if (payload !== undefined) headers['content-type'] = 'application/json';
    if (this.absolute && c.proxy?.url.username) {
      const cred = `${decodeURIComponent(c.proxy.url.username)}:${decodeURIComponent(c.proxy.url.password)}`;
      headers['proxy-authorization'] = `Basic ${Buffer.from(cred).toString('base64')}`;
    }
    const relative = requestPath(c.server, path);
    const requestTarget = this.absolute ? `${c.server.protocol}//${c.server.host}${relative}` : relative;
    const conn = c.wireLog ? nextConnectionNumber() : 0;
    c.wireLog?.({
      kind: 'request',
      conn,
      what: 'API request',
      method,
      url: `${c.server.protocol}//${c.server.host}${relative}`,
      headers: Object.entries(headers),
    });
    // The whole request, first byte to last, within timeoutMs: undici's own timeouts count only the quiet between
    // chunks, so a server trickling a byte a second would hold the run forever (issue 57 §4).
    const deadline = new AbortController();
    const timer = setTimeout(() => deadline.abort(), timeoutMs);
    try {
      const res = await apiRequest.call(this.pool, {
        method,
        path: requestTarget,
        headers,
        body: payload,
        headersTimeout: timeoutMs,
        bodyTimeout: timeoutMs,
        signal: deadline.signal,
      });
      if (c.wireLog) {
        const replyHeaders = Object.entries(res.headers).flatMap(([k, v]) =>
          Array.isArray(v) ? v.map((x) => [k, x] as [string, string]) : v === undefined ? [] : [[k, String(v)] as [string, string]],
        );
        c.wireLog({
          kind: 'response',
          conn,
          what: 'API request',
          status: res.statusCode,
          statusText: STATUS_CODES[res.statusCode] ?? '',
          headers: replyHeaders,
        });
      }
      const text = await res.body.text();
      let parsed: unknown;
      try {
        parsed = JSON.parse(text);
      } catch {
        parsed = undefined;
      }
      const contentType = res.headers['content-type'];
      const kubeStatus = parseKubeStatus(text, typeof contentType === 'string' ? contentType : undefined);
      return {
        status: res.statusCode,
        body: parsed,
        text: text.slice(0, 2000),
        ...(kubeStatus ? { kubeStatus } : {}),
        ...(options.fullText ? { fullText: text } : {}),
      };
    } catch (err) {
      if (deadline.signal.aborted) {
        throw probeError('REST_DEADLINE', `${method} ${path}: not answered in full within ${timeoutMs} ms`, { method, path, deadlineMs: timeoutMs }, err);
      }
      // A dial failure keeps its own code and context (DIAL_TLS, DIAL_PROXY…): it says more than "the request failed".
      if (isProbeError(err)) throw err;
      const code = errorCodeOf(err);
      const timedOut = code === 'UND_ERR_HEADERS_TIMEOUT' || code === 'UND_ERR_BODY_TIMEOUT';
      const why = timedOut
        ? `no answer within ${timeoutMs} ms`
        : code === 'UND_ERR_RES_EXCEEDED_MAX_SIZE'
          ? `the answer is larger than ${MAX_REST_BODY_BYTES} bytes`
          : errorMessage(err);
      throw probeError('REST_FAILED', `${method} ${path}: ${why}`, { method, path, ...(timedOut ? { timeoutMs } : {}) }, err);
    } finally {
      clearTimeout(timer);
    }
  }

  close(): Promise<void> {
    return this.pool.close();
  }

  /** Closes at once, failing requests in flight (an interrupted run does not wait for them). */
  destroy(): Promise<void> {
    return this.pool.destroy();
  }
}

export interface ServerVersion {
  readonly gitVersion: string;
  readonly major?: string;
  readonly minor?: string;
}

/** GET /version; undefined when it cannot be read (the probe still runs). */
export async function serverVersion(rest: RestClient): Promise<{ version?: ServerVersion; error?: string; status?: number }> {
  try {
    // As kubectl's discovery client asks it: with the server-side timeout it sets on every discovery request
    // (client-go discovery/discovery_client.go defaultTimeout, 32 s; test/interop/request-parity.test.ts).
    const r = await rest.request('GET', '/version?timeout=32s', undefined, 5_000);
    const b = r.body as ServerVersion | undefined;
    if (r.status === 200 && typeof b?.gitVersion === 'string') return { version: b };
    return { error: `GET /version answered ${r.status}`, status: r.status };
  } catch (err) {
    return { error: errorMessage(err) };
  }
}

/** The minor version of a Kubernetes 1.x gitVersion (`v1.35.2` → 35), or null when it is not one. */
export function minorVersion(gitVersion: string | null | undefined): number | null {
  const m = /^v?1\.(\d+)/.exec(gitVersion ?? '');
  return m ? Number(m[1]) : null;
}

/** 1.35+ servers authorise WebSocket upgrades for create as well as get. */
export function needsCreateForWebSocket(v: ServerVersion | undefined): boolean | undefined {
  const minor = minorVersion(v?.gitVersion);
  return minor === null ? undefined : minor >= 35;
}
