/**
 * port-forward as client-go does it over a SPDY session, direct (POST,
 * `portforward.k8s.io`) or tunnelled in WebSocket (GET,
 * `SPDY/3.1+portforward.k8s.io`): one error+data stream pair per forwarded
 * connection, headers `streamtype`, `port`, `requestid` (client-go
 * tools/portforward/portforward.go handleConnection; the tunnel:
 * tunneling_dialer.go and apiserver pkg/util/proxy/streamtunnel.go).
 */
import { WS_CLOSE } from './ws-close-codes.js';
import type { Socket } from 'node:net';
import { isProbeError, probeError } from '../errors.js';
import { withTimeout } from '../timers.js';
import { podPath } from './paths.js';
import { SPDY_PING_PERIOD_MS, TUNNEL_PING_PERIOD_MS } from './keepalive.js';
import { spdyEnd, startSpdyKeepalive } from './spdy-keepalive.js';
import { SpdySession } from './spdy/session.js';
import type { ConnectionEnd, ForwardedConnection, PortForwardOptions, PortForwardSession, Transport } from './types.js';
import type { ConnectionConfig } from '../net/connection.js';
import { spdyWireLog, upgradeSpdy, upgradeWebSocket, wsWireLog, type UpgradeTiming } from './upgrade.js';
import { WebSocketByteStream } from './ws-byte-stream.js';
import { WebSocketConnection } from './ws-connection.js';

export const PORTFORWARD_PROTOCOL = 'portforward.k8s.io';
/** apimachinery WebsocketsSPDYTunnelingPrefix + the port-forward protocol. */
export const TUNNEL_PROTOCOL = `SPDY/3.1+${PORTFORWARD_PROTOCOL}`;

/** The parts of an upgraded connection that carry a port-forward SPDY session. */
interface SpdyPortForwardParts {
  readonly session: SpdySession;
  readonly transport: Transport;
  readonly subprotocol: string;
  readonly timing: UpgradeTiming;
  /** The whole connection's end (the TCP/TLS socket, or the tunnel WebSocket). */
  readonly ended: Promise<ConnectionEnd>;
  /** The TCP socket under everything. */
  readonly raw: Socket;
  readonly close: () => void;
  readonly destroy: () => void;
  readonly replyTimeoutMs?: number;
}

/** Longest wait for the connection's own end cause once a stream ended because its session did. */
const SESSION_END_GRACE_MS = 1_000;

function spdyPortForward(parts: SpdyPortForwardParts): PortForwardSession {
  const { session, replyTimeoutMs } = parts;
  let requestId = 0;
  return {
    transport: parts.transport,
    subprotocol: parts.subprotocol,
    timing: parts.timing,
    ended: parts.ended,
    wire: () => ({ readBytes: parts.raw.bytesRead, writtenBytes: parts.raw.bytesWritten }),
    streamsRefused: () => session.peerStreamsRefused,
    close: parts.close,
    destroy: parts.destroy,
    async openConnection(port: number): Promise<ForwardedConnection> {
      if (!Number.isInteger(port) || port < 1 || port > 65535) throw probeError('CONFIG_INVALID', `port ${port} is not in 1..65535`, { field: 'port' });
      const id = String(requestId++);
      const headers = { streamtype: 'error', port: String(port), requestid: id };
      const errorStream = session.openStream(headers);
      await errorStream.awaitReply(replyTimeoutMs);
      // client-go half-closes the error stream at once: only the server writes on it.
      errorStream.end();
      const errorText = errorStream.readAll().then((r) => r.text);
      const dataStream = session.openStream({ ...headers, streamtype: 'data' });
      await dataStream.awaitReply(replyTimeoutMs);
      const ended = new Promise<ConnectionEnd>((resolve) => {
        const done = () => {
          const atMs = performance.now();
          // A stream that ended because its session did: the connection's cause (rst, goaway…) is the truth.
          if (dataStream.endError) {
            void withTimeout(parts.ended, SESSION_END_GRACE_MS).then((end) => resolve(end ?? { cause: 'error', atMs, message: dataStream.endError?.message }));
            return;
          }
          resolve({ cause: dataStream.resetByPeer ? 'stream-reset' : 'fin', atMs, message: 'the forwarded connection was closed by the server' });
        };
        dataStream.once('end', done);
        dataStream.once('close', done);
      });
      return {
        stream: dataStream,
        errorText,
        ended,
        close: () => {
          if (!dataStream.sentFin) dataStream.end();
          if (!dataStream.receivedFin) dataStream.reset();
        },
      };
    },
  };
}

/** Direct SPDY: POST …/portforward, X-Stream-Protocol-Version: portforward.k8s.io. */
export async function openSpdyPortForward(config: ConnectionConfig, opts: PortForwardOptions): Promise<PortForwardSession> {
  // kubectl fails with "unable to negotiate protocol" unless the 101 selects exactly this one.
  const up = await upgradeSpdy(config, { path: podPath(opts, 'portforward'), what: 'SPDY port-forward', protocols: [PORTFORWARD_PROTOCOL] });
  const session = new SpdySession(up.socket, { head: up.head, onControlFrame: spdyWireLog(config, up.conn, 'SPDY port-forward') });
  const keepalive = opts.keepalive === 'none' ? undefined : startSpdyKeepalive(session, SPDY_PING_PERIOD_MS);
  const ended = spdyEnd(session, up.raw);
  void ended.then(() => keepalive?.stop());
  return spdyPortForward({
    session,
    transport: 'spdy',
    subprotocol: up.protocol,
    timing: up.timing,
    ended,
    raw: up.raw,
    close: () => session.close(),
    destroy: () => session.destroy(),
    replyTimeoutMs: opts.streamReplyTimeoutMs,
  });
}

/** WebSocket: GET …/portforward with `SPDY/3.1+portforward.k8s.io`, a SPDY session inside. */
export async function openTunnelPortForward(config: ConnectionConfig, opts: PortForwardOptions): Promise<PortForwardSession> {
  const up = await upgradeWebSocket(config, { path: podPath(opts, 'portforward'), what: 'WebSocket port-forward', headers: [], protocols: [TUNNEL_PROTOCOL] });
  // client-go runs no WebSocket heartbeat for the tunnel: only SPDY pings inside it.
  const conn = new WebSocketConnection(up.ws, up.raw, undefined, wsWireLog(config, up.conn, 'WebSocket port-forward'));
  const bytes = new WebSocketByteStream(up.ws);
  const session = new SpdySession(bytes, { onControlFrame: spdyWireLog(config, up.conn, 'WebSocket port-forward (SPDY inside)') });
  up.ws.start();
  const keepalive = opts.keepalive === 'none' ? undefined : startSpdyKeepalive(session, TUNNEL_PING_PERIOD_MS);
  // The WebSocket tells how the connection died; SPDY adds GOAWAY and garbage inside the tunnel.
  void session.closed.then((end) => {
    if (end.cause === 'goaway' || end.cause === 'protocol-error') conn.fail(end.cause, isProbeError(end.error) ? end.error : undefined, end.error?.message);
  });
  void conn.ended.then(() => keepalive?.stop());
  const close = () => {
    session.close();
    conn.close(WS_CLOSE.NORMAL);
  };
  return spdyPortForward({
    session,
    transport: 'websocket',
    subprotocol: up.protocol,
    timing: up.timing,
    ended: conn.ended,
    raw: up.raw,
    close,
    destroy: () => conn.destroy(),
    replyTimeoutMs: opts.streamReplyTimeoutMs,
  });
}
