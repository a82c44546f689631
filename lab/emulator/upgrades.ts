/**
 * Answering an upgrade as the API server does (server.ts routes here): SPDY/3.1 (apimachinery httpstream
 * Handshake: the first offered protocol it supports, 400 without the upgrade headers, 403 when none match) and
 * WebSocket (the subprotocols the translator or the tunnel accept; `ws` does the handshake), then the exec or
 * port-forward server behind it, with the faults that act after the 101.
 */
import { SpdyServerSession } from './spdy-server-session.js';
import type { IncomingMessage } from 'node:http';
import type net from 'node:net';
import { WebSocketServer, type WebSocket } from 'ws';
import { TUNNEL_PROTOCOL } from '../../src/streaming/portforward-spdy.js';
import { WebSocketByteStream } from '../../src/streaming/ws-byte-stream.js';
import { afterUpgradeFaults, streamError, watchIdle, type Ended } from './connection-faults.js';
import { execRequestFrom, serveSpdyExec, type ExecRequest } from './exec-spdy-server.js';
import { serveWebSocketExec } from './exec-ws-server.js';
import { DEFAULTS, type EmulatorNode, type EmulatorOptions, type UpgradeRecord } from './options.js';
import type { PodFilesystem } from './pod-fs.js';
import { serveLegacyPortForward, serveSpdyPortForward, type ForwardTarget } from './portforward-server.js';
import { rawStatusReply } from './status.js';
import { sendingPieces } from './ws-server-pieces.js';
import { translatorStatus, type KubeletRefusal } from './stream-rules.js';
import { Channel, encodeChannelMessage } from '../../src/streaming/channel/codec.js';

/** What the upgrade handlers need of the server. */
export interface UpgradeHost {
  readonly options: EmulatorOptions;
  readonly nodes: readonly EmulatorNode[];
  /** The pod's filesystem, shared by its sessions. */
  readonly fs: PodFilesystem;
  forwardTarget(): ForwardTarget;
  readonly ended: Ended;
  passesWebSocketToKubelet(nodeName: string | undefined): boolean;
  /** Keeps an upgraded WebSocket until it closes (the server closes what is left on stop). */
  track(ws: WebSocket): void;
}

export function upgradeSpdy(host: UpgradeHost, req: IncomingMessage, socket: net.Socket, head: Buffer, rec: UpgradeRecord, sub: string, url: URL): void {
  // apimachinery UpgradeResponse: Connection must contain upgrade, Upgrade spdy/3.1.
  if (!/upgrade/i.test(String(req.headers.connection ?? '')) || !/spdy\/3\.1/i.test(String(req.headers.upgrade ?? ''))) {
    return void ((rec.status = 400), socket.end(rawStatusReply(400, 'unable to upgrade: missing upgrade headers in request')));
  }
  // apimachinery httpstream.Handshake: no X-Stream-Protocol-Version is an error it writes nowhere, so the kubelet's
  // handler returns having written nothing (remotecommand createHTTPStreamStreams; Go answers 200, no body).
  if (rec.offered.length === 0) return void ((rec.status = 200), socket.end('HTTP/1.1 200 OK\r\nContent-Length: 0\r\nConnection: close\r\n\r\n'));
  const supported: readonly string[] = sub === 'portforward' ? ['portforward.k8s.io'] : (host.options.spdyExecProtocols ?? DEFAULTS.spdyExecProtocols);
  // httpstream.Handshake: the first client value the server supports; none is http.Error 403 (plain text) with one
  // X-Accepted-Stream-Protocol-Versions header per protocol the server accepts.
  const protocol = rec.offered.find((p) => supported.includes(p));
  if (!protocol) {
    rec.status = 403;
    const text = `unable to upgrade: unable to negotiate protocol: client supports [${rec.offered.join(' ')}], server accepts [${supported.join(' ')}]\n`;
    return void socket.end(
      [
        'HTTP/1.1 403 Forbidden',
        'Content-Type: text/plain; charset=utf-8',
        'X-Content-Type-Options: nosniff',
        ...supported.map((p) => `X-Accepted-Stream-Protocol-Versions: ${p}`),
        `Content-Length: ${Buffer.byteLength(text)}`,
        'Connection: close',
        '',
        text,
      ].join('\r\n'),
    );
  }
  rec.status = 101;
  rec.subprotocol = protocol;
  socket.write(`HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: SPDY/3.1\r\nX-Stream-Protocol-Version: ${protocol}\r\n\r\n`);
  rec.wrote101At = performance.now();
  // The kubelet's port-forward holds the client back when the pod's side does not keep up (readBackpressure).
  const session = new SpdyServerSession(socket, { head, readBackpressure: sub === 'portforward' });
  session.on('ping', (id: number) => id % 2 === 1 && rec.pingsReceived++);
  const ended: Ended = host.ended;
  watchIdle(host.options.faults, socket, rec, ended, () => session.destroy());
  afterUpgradeFaults(host.nodes.find((n) => n.name === rec.node)?.fault, socket, rec, ended, () => session.destroy());
  void session.closed.then((end) => host.ended(rec, end.cause));
  const onStream = (h: Record<string, string>) => rec.streams.push(h);
  if (sub === 'portforward') serveSpdyPortForward(session, host.forwardTarget(), onStream);
  else serveSpdyExec(session, protocol, recordResizes(rec, execRequestFrom(url.searchParams, sub === 'attach', host.fs, host.options.faults)), onStream);
}

/**
 * A WebSocket upgrade the rules let through (server.ts, stream-rules.ts): `protocol` is the negotiated subprotocol
 * ('' for an offer of none); `refused` is the kubelet's refusal behind the v5 translator, which answers 101 and then
 * reports it on the error channel.
 */
export function upgradeWebSocket(
  host: UpgradeHost,
  req: IncomingMessage,
  socket: net.Socket,
  head: Buffer,
  rec: UpgradeRecord,
  sub: string,
  url: URL,
  protocol: string,
  refused?: KubeletRefusal,
): void {
  // ws validates subprotocols as RFC 7230 tokens and would refuse `SPDY/3.1+portforward.k8s.io`
  // (a '/'): we negotiate ourselves and add the header to the 101 it writes.
  delete req.headers['sec-websocket-protocol'];
  const wss = new WebSocketServer({ noServer: true, perMessageDeflate: false, maxPayload: 32 * 1024 * 1024 });
  wss.on('headers', (lines: string[]) => {
    if (protocol) lines.push(`Sec-WebSocket-Protocol: ${protocol}`);
  });
  wss.handleUpgrade(req, socket, head, (ws: WebSocket) => {
    rec.status = 101;
    rec.subprotocol = protocol;
    rec.wrote101At = performance.now();
    host.track(ws);
    if (refused) {
      const m = encodeChannelMessage(Channel.ERROR, Buffer.from(translatorStatus(refused)), protocol);
      return void ws.send(m.data, { binary: m.binary }, () => ws.close(1000));
    }
    const ended: Ended = host.ended;
    watchIdle(host.options.faults, socket, rec, ended, () => ws.terminate());
    afterUpgradeFaults(host.nodes.find((n) => n.name === rec.node)?.fault, socket, rec, ended, () => ws.terminate());
    const node = host.nodes.find((n) => n.name === rec.node);
    if (node?.fault?.kind === 'stream-error' && host.passesWebSocketToKubelet(rec.node)) return streamError(ws, protocol ?? '', sub);
    ws.on('ping', () => rec.pingsReceived++);
    ws.on('close', (code: number) => host.ended(rec, `ws-close:${code}`));
    if (sub === 'portforward') {
      if (protocol === TUNNEL_PROTOCOL) {
        // Frames of one tick in one message, written without joining them: a lighter server for the throughput
        // benchmark (clients must not care where message boundaries fall).
        const session = new SpdyServerSession(new WebSocketByteStream(sendingPieces(ws), { coalesce: true }), { readBackpressure: true });
        session.on('ping', (id: number) => id % 2 === 1 && rec.pingsReceived++);
        serveSpdyPortForward(session, host.forwardTarget(), (h) => rec.streams.push(h));
      } else {
        const ports = url.searchParams
          .getAll('ports')
          .flatMap((p) => p.split(','))
          .map(Number);
        serveLegacyPortForward(ws, protocol ?? '', ports, host.forwardTarget());
      }
    } else {
      serveWebSocketExec(
        ws,
        protocol ?? '',
        recordResizes(rec, execRequestFrom(url.searchParams, sub === 'attach', host.fs, host.options.faults)),
        host.options.wsFirstMessageDelayMs ?? 5,
      );
    }
  });
}

/** The session's resizes, as received, on its record (tests compare ours with kubectl's). */
function recordResizes(rec: UpgradeRecord, req: ExecRequest): ExecRequest {
  rec.resizes = req.resizes;
  return req;
}
