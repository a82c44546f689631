/**
 * A small JSON REST client over our own dialer, so REST calls take exactly
 * the path (proxy, TLS settings) the upgrades take.
 */
import http from 'node:http';
import { probeError } from '../errors.js';
import { dial as defaultDial } from '../net/dial.js';
import { DEFAULT_DIAL_TIMEOUT_MS, requestPath, type ConnectionConfig } from '../net/connection.js';

export interface RestResponse {
  readonly status: number;
  readonly body: unknown;
  readonly text: string;
}

const MAX_BODY = 4 * 1024 * 1024;

export async function restRequest(config: ConnectionConfig, method: 'GET' | 'POST', path: string, body?: unknown, timeoutMs = 15_000): Promise<RestResponse> {
  const dialed = await (config.dialer ?? defaultDial)({ url: config.server, tls: config.tls, proxy: config.proxy }, { timeoutMs: config.dialTimeoutMs ?? DEFAULT_DIAL_TIMEOUT_MS });
  const payload = body === undefined ? undefined : Buffer.from(JSON.stringify(body));
  const headers: Record<string, string> = { Host: config.server.host, Accept: 'application/json', ...(config.headers ?? {}) };
  if (config.userAgent) headers['User-Agent'] = config.userAgent;
  if (payload) {
    headers['Content-Type'] = 'application/json';
    headers['Content-Length'] = String(payload.length);
  }
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      req.destroy();
      reject(probeError('REST_FAILED', `${method} ${path}: no answer within ${timeoutMs} ms`, { method, path, timeoutMs }));
    }, timeoutMs);
    const req = http.request({ createConnection: () => dialed.socket, method, path: requestPath(config.server, path), headers, setHost: false }, (res) => {
      const chunks: Buffer[] = [];
      let n = 0;
      res.on('data', (c: Buffer) => {
        n += c.length;
        if (n <= MAX_BODY) chunks.push(c);
      });
      res.on('end', () => {
        clearTimeout(timer);
        dialed.socket.destroy();
        const text = Buffer.concat(chunks).toString('utf8');
        let parsed: unknown;
        try {
          parsed = JSON.parse(text);
        } catch {
          parsed = undefined;
        }
        resolve({ status: res.statusCode ?? 0, body: parsed, text: text.slice(0, 2000) });
      });
      res.on('error', (e) => (clearTimeout(timer), reject(e)));
    });
    req.on('error', (err: NodeJS.ErrnoException) => {
      clearTimeout(timer);
      reject(probeError('REST_FAILED', `${method} ${path}: ${err.code ?? err.message}`, { method, path }, err));
    });
    req.end(payload);
  });
}

export interface ServerVersion {
  readonly gitVersion: string;
  readonly major?: string;
  readonly minor?: string;
}

/** GET /version; undefined when it cannot be read (the probe still runs). */
export async function serverVersion(config: ConnectionConfig): Promise<{ version?: ServerVersion; error?: string }> {
  try {
    const r = await restRequest(config, 'GET', '/version', undefined, 5_000);
    const b = r.body as ServerVersion | undefined;
    if (r.status === 200 && typeof b?.gitVersion === 'string') return { version: b };
    return { error: `GET /version answered ${r.status}` };
  } catch (err) {
    return { error: (err as Error).message };
  }
}

/** 1.35+ servers authorise WebSocket upgrades for create as well as get. */
export function needsCreateForWebSocket(v: ServerVersion | undefined): boolean | undefined {
  const m = v && /^v?(\d+)\.(\d+)/.exec(v.gitVersion);
  if (!m) return undefined;
  return Number(m[1]) > 1 || Number(m[2]) >= 35;
}
