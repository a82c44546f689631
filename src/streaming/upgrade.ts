/**
 * The HTTP/1.1 upgrade handshakes, on a connection we dialled ourselves so
 * every phase is timed. Redirects are never followed. Any reply other than
 * 101 with the expected Upgrade and one of our subprotocols is a classified
 * UPGRADE_* error that keeps the status, the first bytes of the body and
 * whether the body is a Kubernetes Status (the API server answered) or not (a hop did).
 */
import { headerPairs, nextConnectionNumber } from '../net/wire-log.js';
import http, { type IncomingHttpHeaders, type IncomingMessage } from 'node:http';
import type { Socket } from 'node:net';
import { createHash, randomBytes } from 'node:crypto';
import { ClientWebSocket } from './ws-client.js';
import { ProbeError, errorMessage, isProbeError, probeError } from '../errors.js';
import { dial as defaultDial, type DialPhases, type Dialed } from '../net/dial.js';
import { printable } from '../net/read-until.js';
import { peerText } from '../text.js';
import { DEFAULT_DIAL_TIMEOUT_MS, DEFAULT_UPGRADE_TIMEOUT_MS, requestPath, type ConnectionConfig } from '../net/connection.js';
import { parseKubeStatus } from '../kube/status.js';

/** client-go 1.32+ reads up to 64 KiB of a failed handshake's body; we keep less for results. */
export const REJECTION_BODY_BYTES = 64 * 1024;
const REJECTION_BODY_KEEP = 512;

export interface UpgradeTiming {
  readonly phases: DialPhases & { upgradeMs: number };
  /** Start of dialing → 101 read, in ms. */
  readonly handshakeMs: number;
  /** performance.now() at the moment the 101 was parsed. */
  readonly at101: number;
  /**
   * The share of the handshake (0..1) our own event loop spent busy — running this process's JavaScript, for this
   * session or any other (performance.eventLoopUtilization over dial start → 101). What it does not measure is
   * the path's: a busy loop delays reading the 101 however fast it came.
   */
  readonly loopBusy: number;
  /**
   * Who wrote the 101, by its Server and Via headers (an API server sends neither; a proxy that rewrites them names
   * itself): the same clues a refusal carries, kept for a cut later in the session.
   */
  readonly answeredBy?: { readonly server?: string; readonly via?: string };
}

/** How long the rest of a refusal's body may take to arrive. */
export const REJECTION_BODY_WAIT_MS = 2_000;

/** Reads (part of) a non-101 answer's body and classifies who answered. */
/** The reply's Server and Via, bounded: who answered, for a refusal and for a 101 alike. */
function replyClues(res: IncomingMessage): Pick<UpgradeTiming, 'answeredBy'> {
  const server = typeof res.headers.server === 'string' ? peerText(res.headers.server, 80) : undefined;
  const via = typeof res.headers.via === 'string' ? peerText(res.headers.via, 120) : undefined;
  return server || via ? { answeredBy: { ...(server ? { server } : {}), ...(via ? { via } : {}) } } : {};
}

async function readRejection(res: IncomingMessage, what: string, phases: UpgradeTiming['phases']): Promise<ProbeError<'UPGRADE_REJECTED'>> {
  const chunks: Buffer[] = [];
  let n = 0;
  await new Promise<void>((resolve) => {
    const done = () => {
      clearTimeout(timer);
      resolve();
    };
    const timer = setTimeout(done, REJECTION_BODY_WAIT_MS);
    res.on('data', (c: Buffer) => {
      if (n < REJECTION_BODY_BYTES) chunks.push(c);
      n += c.length;
      if (n >= REJECTION_BODY_BYTES) done();
    });
    res.on('end', done);
    res.on('error', done);
    res.on('close', done);
  });
  const body = Buffer.concat(chunks).subarray(0, REJECTION_BODY_BYTES);
  const status = res.statusCode ?? 0;
  const bodyPrefix = printable(body, REJECTION_BODY_KEEP, n);
  const kubeStatus = parseKubeStatus(body, res.headers['content-type']);
  const { server, via } = replyClues(res).answeredBy ?? {};
  const who = kubeStatus
    ? `the API server (Status ${kubeStatus.reason ?? kubeStatus.status ?? ''})`
    : `something that is not the API server${server ? ` (Server: ${server})` : ''}`;
  const detail = kubeStatus?.message ? `: ${kubeStatus.message}` : bodyPrefix ? `: "${printable(body, 120, n)}"` : '';
  return probeError('UPGRADE_REJECTED', `${what} upgrade answered ${status} by ${who}${detail}`, { status, bodyPrefix, kubeStatus, server, via, phases });
}

export interface UpgradeRequest {
  readonly method: 'GET' | 'POST';
  /** Path and query below the server URL's path. */
  readonly path: string;
  /** Ordered; repeated names become repeated header lines. */
  readonly headers: readonly (readonly [string, string])[];
  readonly what: string; // for messages, e.g. "SPDY exec"
}

function baseHeaders(config: ConnectionConfig): [string, string][] {
  const out: [string, string][] = [];
  if (config.userAgent) out.push(['User-Agent', config.userAgent]);
  for (const [k, v] of Object.entries(config.headers ?? {})) out.push([k, v]);
  return out;
}

async function dialFor(config: ConnectionConfig, what: string): Promise<Dialed> {
  const dialer = config.dialer ?? defaultDial;
  try {
    return await dialer({ url: config.server, tls: config.tls, proxy: config.proxy }, { timeoutMs: config.dialTimeoutMs ?? DEFAULT_DIAL_TIMEOUT_MS });
  } catch (err) {
    // The dial error keeps its code and context (host, phases so far); only the message says which upgrade.
    if (isProbeError(err)) throw new ProbeError(err.code, `${what}: ${err.message}`, err.context, err);
    throw probeError('DIAL_FAILED', `${what}: ${errorMessage(err)}`, { host: config.server.hostname }, err);
  }
}

export interface UpgradedConnection {
  readonly socket: Socket;
  /** The TCP socket under TLS, for telling RST from FIN. */
  readonly raw: Socket;
  readonly head: Buffer;
  readonly responseHeaders: IncomingHttpHeaders;
  readonly timing: UpgradeTiming;
  /** This connection's number in the wire log. */
  readonly conn: number;
}

/**
 * Writes one upgrade request on a fresh connection and reads the answer.
 * `check` inspects a 101 and returns what is wrong with it, if anything.
 */
async function httpUpgrade(config: ConnectionConfig, req: UpgradeRequest, check: (res: IncomingMessage) => string | undefined): Promise<UpgradedConnection> {
  const t0 = performance.now();
  const elu0 = performance.eventLoopUtilization();
  const dialed = await dialFor(config, req.what);
  const phases = dialed.phases;
  const tReq = performance.now();
  const headerList: (readonly [string, string])[] = [['Host', config.server.host], ...baseHeaders(config), ...req.headers];
  const headers = headerList.flat();
  const conn = nextConnectionNumber();
  const path = requestPath(config.server, req.path);
  config.wireLog?.({
    kind: 'request',
    conn,
    what: req.what,
    method: req.method,
    url: `${config.server.protocol}//${config.server.host}${path}`,
    headers: headerList,
  });
  const logReply = (res: IncomingMessage) =>
    config.wireLog?.({
      kind: 'response',
      conn,
      what: req.what,
      status: res.statusCode ?? 0,
      statusText: res.statusMessage ?? '',
      headers: headerPairs(res.rawHeaders),
    });
  return new Promise((resolve, reject) => {
    let settled = false;
    const fail = (err: Error) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      dialed.socket.destroy();
      reject(err);
    };
    const timeoutMs = config.upgradeTimeoutMs ?? DEFAULT_UPGRADE_TIMEOUT_MS;
    const timer = setTimeout(
      () => fail(probeError('UPGRADE_TIMEOUT', `${req.what}: no answer to the upgrade request within ${timeoutMs} ms`, { phases, timeoutMs })),
      timeoutMs,
    );
    const r = http.request({
      createConnection: () => dialed.socket,
      method: req.method,
      path,
      headers,
      setHost: false,
    });
    r.on('upgrade', (res: IncomingMessage, socket: Socket, head: Buffer) => {
      if (settled) return socket.destroy();
      logReply(res);
      const problem = check(res);
      if (problem)
        return fail(probeError('UPGRADE_BAD_RESPONSE', `${req.what}: ${problem}`, { phases: { ...phases, upgradeMs: round(performance.now() - tReq) } }));
      settled = true;
      clearTimeout(timer);
      const tDone = performance.now();
      const loopBusy = Math.round(performance.eventLoopUtilization(elu0).utilization * 1000) / 1000;
      resolve({
        socket,
        raw: dialed.raw,
        head,
        responseHeaders: res.headers,
        conn,
        timing: {
          phases: { ...phases, upgradeMs: round(tDone - tReq) },
          handshakeMs: round(tDone - t0),
          at101: tDone,
          loopBusy,
          ...replyClues(res),
        },
      });
    });
    // Any non-101 answer; redirects included, which are never followed.
    r.on('response', (res: IncomingMessage) => {
      logReply(res);
      readRejection(res, req.what, { ...phases, upgradeMs: round(performance.now() - tReq) }).then(fail, fail);
    });
    r.on('error', (err: NodeJS.ErrnoException) => {
      const notHttp = err.code?.startsWith('HPE_');
      fail(
        probeError(
          'UPGRADE_FAILED',
          notHttp
            ? `${req.what}: the reply to the upgrade is not HTTP (${err.code})`
            : `${req.what}: the connection failed during the upgrade (${err.code ?? err.message})`,
          { phases, errno: err.code },
          err,
        ),
      );
    });
    r.end();
  });
}

export interface SpdyUpgradeRequest {
  /** Path and query below the server URL's path. */
  readonly path: string;
  readonly what: string;
  /** X-Stream-Protocol-Version values, offered in this order, one header line each (client-go). */
  readonly protocols: readonly string[];
  /**
   * What an empty X-Stream-Protocol-Version in the 101 stands for. remotecommand
   * reads it as v1 `channel.k8s.io` (client-go spdy.go); port-forward has no such
   * default and fails with "unable to negotiate protocol".
   */
  readonly emptyMeans?: string;
}

export interface SpdyUpgraded extends UpgradedConnection {
  /** The negotiated X-Stream-Protocol-Version. */
  readonly protocol: string;
}

/**
 * SPDY upgrade as client-go's SpdyRoundTripper writes it: POST with
 * Content-Length: 0, Connection: Upgrade, Upgrade: SPDY/3.1 and the offered
 * protocols. Success needs 101, Connection containing "upgrade", Upgrade
 * containing "spdy/3.1" (roundtripper.go NewConnection) and one of the offered
 * protocols selected.
 */
export async function upgradeSpdy(config: ConnectionConfig, req: SpdyUpgradeRequest): Promise<SpdyUpgraded> {
  const headers: [string, string][] = [
    ['Content-Length', '0'],
    ['Connection', 'Upgrade'],
    ['Upgrade', 'SPDY/3.1'],
    ...req.protocols.map((p) => ['X-Stream-Protocol-Version', p] as [string, string]),
  ];
  const selected = (res: IncomingMessage) => String(res.headers['x-stream-protocol-version'] ?? '') || req.emptyMeans || '';
  const up = await httpUpgrade(config, { method: 'POST', path: req.path, what: req.what, headers }, (res) => {
    const upgrade = String(res.headers.upgrade ?? '');
    const connection = String(res.headers.connection ?? '');
    if (!/upgrade/i.test(connection) || !/spdy\/3\.1/i.test(upgrade)) return `101 with Upgrade "${upgrade}" and Connection "${connection}", expected SPDY/3.1`;
    const protocol = selected(res);
    if (!req.protocols.includes(protocol)) return `the 101 selected protocol "${protocol}", which was not offered (offered ${req.protocols.join(', ')})`;
    return undefined;
  });
  return { ...up, protocol: String(up.responseHeaders['x-stream-protocol-version'] ?? '') || req.emptyMeans || '' };
}

const round = (ms: number) => Math.round(ms * 1000) / 1000;

/** A SPDY session's control frames, reported to the connection's wire log (when there is one). */
export function spdyWireLog(config: ConnectionConfig, conn: number, what: string): ((direction: 'sent' | 'received', frame: string) => void) | undefined {
  const log = config.wireLog;
  return log ? (direction, frame) => log({ kind: 'spdy', conn, what, direction, frame }) : undefined;
}

/** A WebSocket's control frames and its socket's end, reported to the connection's wire log (when there is one). */
export function wsWireLog(config: ConnectionConfig, conn: number, what: string): ((direction: 'sent' | 'received', frame: string) => void) | undefined {
  const log = config.wireLog;
  return log ? (direction, frame) => log({ kind: 'websocket', conn, what, direction, frame }) : undefined;
}

export interface WebSocketUpgraded {
  readonly ws: ClientWebSocket;
  readonly raw: Socket;
  readonly protocol: string;
  readonly timing: UpgradeTiming;
  /** This connection's number in the wire log. */
  readonly conn: number;
}

/** Largest WebSocket message we accept (x/net/websocket's server cap is 32 MiB). */
export const DEFAULT_MAX_WS_MESSAGE_BYTES = 16 * 1024 * 1024;
const WS_GUID = '258EAFA5-E914-47DA-95CA-C5AB0DC85B11';

/**
 * WebSocket upgrade (GET, RFC 6455) on a fresh connection, offering `protocols`
 * in order. Success needs 101, a valid Sec-WebSocket-Accept and one of our
 * subprotocols (client-go 1.30+ checks it and falls back to SPDY otherwise).
 */
export async function upgradeWebSocket(
  config: ConnectionConfig,
  req: Omit<UpgradeRequest, 'method'> & { readonly protocols: readonly string[]; readonly maxMessageBytes?: number },
): Promise<WebSocketUpgraded> {
  const key = randomBytes(16).toString('base64');
  const expectedAccept = createHash('sha1')
    .update(key + WS_GUID)
    .digest('base64');
  const headers: [string, string][] = [
    ['Connection', 'Upgrade'],
    ['Upgrade', 'websocket'],
    ['Sec-WebSocket-Version', '13'],
    ['Sec-WebSocket-Key', key],
  ];
  if (req.protocols.length > 0) headers.push(['Sec-WebSocket-Protocol', req.protocols.join(', ')]);
  const up = await httpUpgrade(config, { method: 'GET', path: req.path, what: req.what, headers: [...headers, ...req.headers] }, (res) => {
    if (!/^websocket$/i.test(String(res.headers.upgrade ?? ''))) return `101 with Upgrade "${String(res.headers.upgrade ?? '')}", expected websocket`;
    // RFC 6455 4.1 (the client's checks of the server's handshake, item 4): absent or not the key's digest, fail.
    const accept = res.headers['sec-websocket-accept'];
    if (accept === undefined) return '101 without a Sec-WebSocket-Accept (RFC 6455 4.1)';
    if (accept !== expectedAccept) return `101 with a wrong Sec-WebSocket-Accept (RFC 6455 4.1: not the digest of our key): "${peerText(String(accept), 64)}"`;
    const chosen = String(res.headers['sec-websocket-protocol'] ?? '');
    if (req.protocols.length > 0 && !req.protocols.includes(chosen)) {
      // client-go: invalid protocol, expected one of [...], got "..."
      return `101 without an offered subprotocol: expected one of ${req.protocols.join(', ')}, got "${chosen}"`;
    }
    return undefined;
  });
  const protocol = String(up.responseHeaders['sec-websocket-protocol'] ?? '');
  const ws = new ClientWebSocket(up.socket, up.head, protocol, req.maxMessageBytes ?? DEFAULT_MAX_WS_MESSAGE_BYTES);
  return { ws, raw: up.raw, protocol, timing: up.timing, conn: up.conn };
}
