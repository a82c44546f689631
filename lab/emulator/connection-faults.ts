/**
 * What the emulator does to a connection after its 101: the faults (an idle cut, a node's cut or black hole, a
 * kubelet streaming error) and how it ends a TCP connection (FIN or RST).
 */
import { SpdyServerSession } from './spdy-server-session.js';
import type net from 'node:net';
import type { WebSocket } from 'ws';
import { Channel, encodeChannelMessage } from '../../src/streaming/channel/codec.js';
import { TUNNEL_PROTOCOL } from '../../src/streaming/portforward-spdy.js';
import { headerValue } from '../../src/streaming/spdy/frames.js';
import type { SpdyStream } from '../../src/streaming/spdy/stream.js';
import { WebSocketByteStream } from '../../src/streaming/ws-byte-stream.js';
import type { EmulatorFaults, NodeFault, UpgradeRecord } from './options.js';

/** Records how an upgraded connection ended (once). */
export type Ended = (rec: UpgradeRecord, cause: string) => void;

/** The node faults that act after the 101: a cut, or a black hole. */
export function afterUpgradeFaults(fault: NodeFault | undefined, socket: net.Socket, rec: UpgradeRecord, ended: Ended, onCut: () => void): void {
  if (fault?.kind === 'cut') {
    const t = setTimeout(() => {
      ended(rec, 'node-cut');
      cutSocket(socket, 'fin');
      onCut();
    }, fault.afterSeconds * 1000);
    t.unref();
    socket.once('close', () => clearTimeout(t));
  } else if (fault?.kind === 'black-hole') {
    const t = setTimeout(() => {
      // Nothing moves any more in either direction; the connection stays open. Nothing may resume the reading
      // either: a port-forward session with readBackpressure (or ws's receiver) resumes it once a stream drains.
      socket.pause();
      socket.resume = (() => socket) as typeof socket.resume;
      socket.write = (() => true) as typeof socket.write;
    }, fault.afterSeconds * 1000);
    t.unref();
    socket.once('close', () => clearTimeout(t));
  }
}

/** The idle-cut fault: any byte in either direction counts as activity, as on an L4 load balancer. */
export function watchIdle(faults: EmulatorFaults | undefined, socket: net.Socket, rec: UpgradeRecord, ended: Ended, onCut: () => void): void {
  const seconds = faults?.idleCutSeconds;
  if (!seconds) return;
  let last = performance.now();
  let seen = socket.bytesRead + socket.bytesWritten;
  const timer = setInterval(() => {
    const now = socket.bytesRead + socket.bytesWritten;
    if (now !== seen) {
      seen = now;
      last = performance.now();
    } else if (performance.now() - last >= seconds * 1000) {
      clearInterval(timer);
      ended(rec, `idle-cut-${faults?.idleCutMode ?? 'fin'}`);
      cutSocket(socket, faults?.idleCutMode ?? 'fin');
      onCut();
    }
  }, 20);
  timer.unref();
  socket.once('close', () => clearInterval(timer));
}

/**
 * cri-dockerd behind a kubelet that now gets the WebSocket itself: the upgrade succeeded, then the CRI's
 * streaming URL has no scheme and the kubelet's request fails (Mirantis/cri-dockerd#560). The client gets
 * the error on the error channel (exec), or on the port's error stream (port-forward), never a non-101.
 */
export function streamError(ws: WebSocket, protocol: string, sub: string): void {
  const message = `Internal error occurred: error sending request: Post "//[::]:35431/cri/${sub}/RJ3qzW1x": http: server gave HTTP response to HTTPS client`;
  if (sub === 'portforward' && protocol === TUNNEL_PROTOCOL) {
    const session = new SpdyServerSession(new WebSocketByteStream(ws));
    session.on('stream', (stream: SpdyStream) => {
      stream.reply({});
      if (headerValue(stream.headers, 'streamtype') === 'error') stream.end(message);
      else stream.end();
    });
    return;
  }
  const status = JSON.stringify({
    metadata: {},
    status: 'Failure',
    message,
    reason: 'InternalError',
    details: { causes: [{ message: 'error sending request' }] },
    code: 500,
  });
  const m = encodeChannelMessage(Channel.ERROR, Buffer.from(status), protocol);
  ws.send(m.data, { binary: m.binary }, () => ws.close(1000));
}

/** Ends a TCP connection with FIN, or with RST (resetAndDestroy on the TCP handle). */
export function cutSocket(socket: net.Socket, mode: 'fin' | 'rst'): void {
  const tcp = ((socket as unknown as { _parent?: net.Socket })._parent ?? socket) as net.Socket;
  if (mode === 'rst') {
    try {
      tcp.resetAndDestroy();
      socket.destroy();
      return;
    } catch {
      /* not a TCP handle: fall through to a plain close */
    }
  }
  socket.end();
  setTimeout(() => socket.destroy(), 200).unref();
}
