/**
 * A hostile API server of our own (issue 57), on loopback: plausible in its REST phase (the target pod, a version,
 * every access review allowed), then one attack at a time. Every flood is bounded in bytes and stops by itself; the
 * attacks are those the issue measured, one mode each. Test equipment only.
 *
 * The kubelet's side is kept to what each attack needs: an exec that echoes stdin on stdout and writes its status
 * once stdin ends (v5 over WebSocket, kubelet websocket.go; v4 over SPDY, the client's streams replied as
 * kubelet/cri streaming's do), a SPDY port-forward whose error and data streams are replied.
 */
import http from 'node:http';
import type net from 'node:net';
import { join } from 'node:path';
import { WebSocketServer, type WebSocket } from 'ws';
import { dataFrameHeader } from '../../src/streaming/spdy/serializer.js';
import { SpdySession } from '../../src/streaming/spdy/session.js';
import type { SpdyStream } from '../../src/streaming/spdy/stream.js';
import { headerValue } from '../../src/streaming/spdy/frames.js';
import { wsAccept } from './raw-server.js';
import { writePlainKubeconfig } from './plain-kubeconfig.js';

/** The bearer token of every hostile kubeconfig: no piece of 12 characters of it may reach any output. */
export const HOSTILE_TOKEN = 'hostile-secret-token-9f3a7c51e2b84d06';

export const ATTACKS = [
  'stderr-flood', // WebSocket exec: 256 MiB of stderr during the hold
  'pushed-streams', // SPDY exec: 200 streams the server opens, then 400 MiB of DATA on them
  'syn-flood', // SPDY exec: 10,000 streams the server opens before replying to ours
  'spdy-ping-unread', // SPDY: PINGs, never reading our echoes
  'ws-ping-unread', // WebSocket: pings, never reading our pongs
  'status-50mb-ws', // a 50 MB Failure status on exec's error channel
  'status-50mb-spdy', // the same on exec's SPDY error stream
  'pf-error-50mb', // a 50 MB error text on a SPDY port-forward's error stream
  'version-trickle', // /version, a byte every 500 ms
  'pod-trickle', // the target's GET, a byte every 500 ms
  'list-16mib', // the label lookup answered with a list over 16 MiB
  'pending-250k', // the label lookup answered with 250,000 Pending pods
  'token-pieces', // the token across every cut: Server, Via, a refusal body, a non-JSON status, a wrong echo; a header named after it
  'terminal-escapes', // a status message that clears the screen, retitles it and paints a forged row
] as const;
export type Attack = (typeof ATTACKS)[number];

const POD = {
  kind: 'Pod',
  apiVersion: 'v1',
  metadata: { name: 'p', namespace: 'default', uid: 'u1', annotations: { 'kubectl.kubernetes.io/default-container': 'main' } },
  spec: { nodeName: 'n', containers: [{ name: 'main' }] },
  status: { phase: 'Running' },
};

const MiB = 1024 * 1024;
const json = (res: http.ServerResponse, status: number, body: unknown) => {
  res.writeHead(status, { 'Content-Type': 'application/json' });
  res.end(JSON.stringify(body));
};
const status = (code: number, reason: string, message: string) => ({ kind: 'Status', apiVersion: 'v1', status: 'Failure', reason, code, message });
const podList = (n: number, phase: string) =>
  JSON.stringify({ kind: 'PodList', apiVersion: 'v1', items: Array.from({ length: n }, (_, i) => ({ metadata: { name: `p${i}` }, status: { phase } })) });

export interface HostileServer {
  readonly kubeconfig: string;
  close(): Promise<void>;
}

/** Starts the hostile server for `attack`; its kubeconfig (plain http, HOSTILE_TOKEN) is written under `dir`. */
export async function hostileServer(attack: Attack, dir: string): Promise<HostileServer> {
  const sockets = new Set<net.Socket>();
  const timers = new Set<NodeJS.Timeout>();
  const stops: Array<() => void> = [];
  const wss = new WebSocketServer({
    noServer: true,
    perMessageDeflate: false,
    handleProtocols: (p) => (p.has('v5.channel.k8s.io') ? 'v5.channel.k8s.io' : false),
  });
  const server = http.createServer((req, res) => rest(attack, req, res, timers));
  server.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
    s.on('error', () => undefined);
  });
  server.on('upgrade', (req: http.IncomingMessage, socket: net.Socket, head: Buffer) => {
    socket.on('error', () => undefined);
    const url = new URL(req.url ?? '/', 'http://x');
    const op = url.pathname.endsWith('/portforward') ? 'portforward' : 'exec';
    const spdy = /spdy/i.test(req.headers.upgrade ?? '');
    const upgrade: Upgrade = { req, socket, head, op, spdy, wss, stops };
    onUpgrade(attack, upgrade);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const url = `http://127.0.0.1:${(server.address() as net.AddressInfo).port}`;
  const kubeconfig = writePlainKubeconfig(join(dir, `kc-${attack}`), url, { token: HOSTILE_TOKEN });
  return {
    kubeconfig,
    close: async () => {
      for (const stop of stops) stop();
      for (const t of timers) clearInterval(t);
      for (const s of sockets) s.destroy();
      wss.close();
      await new Promise((r) => server.close(r));
    },
  };
}

/** The REST phase: plausible, but for the attacks on it. */
function rest(attack: Attack, req: http.IncomingMessage, res: http.ServerResponse, timers: Set<NodeJS.Timeout>): void {
  const url = req.url ?? '';
  const isVersion = url.startsWith('/version');
  const isPod = url.startsWith('/api/v1/namespaces/default/pods/p');
  const isList = url.includes('labelSelector');
  if ((attack === 'version-trickle' && isVersion) || (attack === 'pod-trickle' && isPod)) return trickle(res, timers, 500);
  if (isList && attack === 'list-16mib') return void res.writeHead(200, { 'Content-Type': 'application/json' }).end(podList(300_000, 'Running'));
  if (isList && attack === 'pending-250k') return void res.writeHead(200, { 'Content-Type': 'application/json' }).end(podList(250_000, 'Pending'));
  if (isList) return json(res, 200, { kind: 'PodList', apiVersion: 'v1', items: [{ ...POD, metadata: { ...POD.metadata, name: 'p' } }] });
  if (isPod) return json(res, 200, POD);
  if (isVersion) return json(res, 200, { major: '1', minor: '33', gitVersion: 'v1.33.1' });
  return json(res, 201, { kind: 'SelfSubjectAccessReview', apiVersion: 'authorization.k8s.io/v1', status: { allowed: true } });
}

/** `maxBytes` spaces, one every `everyMs`, the body never ended. */
function trickle(res: http.ServerResponse, timers: Set<NodeJS.Timeout>, everyMs: number, maxBytes = 10_000): void {
  res.writeHead(200, { 'Content-Type': 'application/json' });
  let sent = 0;
  const t = setInterval(() => {
    if (sent++ >= maxBytes || res.destroyed) return clearInterval(t);
    res.write(' ');
  }, everyMs);
  timers.add(t);
}

interface Upgrade {
  readonly req: http.IncomingMessage;
  readonly socket: net.Socket;
  readonly head: Buffer;
  readonly op: 'exec' | 'portforward';
  readonly spdy: boolean;
  readonly wss: WebSocketServer;
  readonly stops: Array<() => void>;
}

function refuse(socket: net.Socket, code: number, text: string, extraHeaders: readonly string[] = [], body?: string): void {
  const b = body ?? JSON.stringify(status(code, 'Forbidden', 'no'));
  socket.end(
    `HTTP/1.1 ${code} ${text}\r\nContent-Type: application/json\r\n${extraHeaders.map((h) => `${h}\r\n`).join('')}Content-Length: ${Buffer.byteLength(b)}\r\n\r\n${b}`,
  );
}

function onUpgrade(attack: Attack, u: Upgrade): void {
  const { socket, op, spdy } = u;
  switch (attack) {
    case 'stderr-flood':
      if (spdy || op !== 'exec') return refuse(socket, 403, 'Forbidden');
      return wsExec(u, (ws) => {
        const flood = Buffer.concat([Buffer.from([2]), Buffer.alloc(MiB, 0x65)]);
        let sent = 0;
        const more = () => {
          if (sent++ < 256 && ws.readyState === ws.OPEN) ws.send(flood, more);
        };
        more();
      });
    case 'status-50mb-ws':
      if (spdy || op !== 'exec') return refuse(socket, 403, 'Forbidden');
      return wsExec(u, undefined, JSON.stringify(status(500, 'InternalError', 'x'.repeat(50 * MiB))));
    case 'terminal-escapes':
      if (spdy || op !== 'exec') return refuse(socket, 403, 'Forbidden');
      return wsExec(
        u,
        undefined,
        JSON.stringify(status(500, 'InternalError', '\x1b[2J\x1b[H\x1b]0;all clear\x07exec  websocket  ok  \x1b[32mclean\x1b[0m\r\n\u009b31m')),
      );
    case 'ws-ping-unread':
      if (spdy) return refuse(socket, 403, 'Forbidden');
      socket.write(
        `HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: ${wsAccept(String(u.req.headers['sec-websocket-key']))}\r\nSec-WebSocket-Protocol: v5.channel.k8s.io\r\n\r\n`,
      );
      socket.write(Buffer.from([0x82, 0x01, 0x01]));
      // Unmasked pings with 125-byte payloads, 700,000 at most (~89 MiB); our pongs are never read.
      return flood(socket, () => Buffer.concat([Buffer.from([0x89, 125]), Buffer.alloc(125, 0x70)]), 700_000);
    case 'spdy-ping-unread':
      if (!spdy) return refuse(socket, 403, 'Forbidden');
      socket.write(spdy101(op === 'exec' ? 'v4.channel.k8s.io' : 'portforward.k8s.io'));
      // Server PINGs (even ids, 12 bytes each), 8 M at most (96 MiB); our echoes are never read.
      return flood(socket, serverPing, 8_000_000);
    case 'pushed-streams':
    case 'syn-flood':
    case 'status-50mb-spdy':
      if (!spdy || op !== 'exec') return refuse(socket, 403, 'Forbidden');
      return spdyExec(u, attack);
    case 'pf-error-50mb':
      if (!spdy || op !== 'portforward') return refuse(socket, 403, 'Forbidden');
      return spdyPortForward(u, (error, data) => {
        void writeAll(error, 50 * MiB, 0x78).then(() => {
          error.end();
          data.end();
        });
      });
    case 'token-pieces':
      return tokenPieces(u);
    default:
      return refuse(socket, 403, 'Forbidden');
  }
}

/**
 * The token where each bound cuts: Server is kept to 80 characters, Via to 120, a refusal body to 120 in the message
 * and 512 in bodyPrefix, a non-JSON status to 120, an echo to 64 bytes; each holds the token across its cut, and -v
 * prints a header named after the token.
 */
function tokenPieces(u: Upgrade): void {
  const across = (cut: number, fill: string) => `${fill.repeat(cut - 20)}${HOSTILE_TOKEN}`;
  if (!u.spdy) {
    const headers = [`Server: ${across(80, 's')}`, `Via: 1.1 ${across(120, 'v')}`, `${HOSTILE_TOKEN}-x: 1`];
    return refuse(u.socket, 502, 'Bad Gateway', headers, `${across(120, 'b')} ${across(512, 'c')}`);
  }
  if (u.op === 'exec') return spdyExec(u, 'token-pieces');
  return spdyPortForward(u, (_error, data) => {
    data.once('data', () => data.write(across(64, 'w')));
  });
}

/** The server's `i`th SPDY PING (even ids), 12 bytes. */
export function serverPing(i: number): Buffer {
  const b = Buffer.from([0x80, 0x03, 0x00, 0x06, 0x00, 0x00, 0x00, 0x04, 0, 0, 0, 0]);
  b.writeUInt32BE(((2 * (i + 1)) & 0x7fffffff) >>> 0, 8);
  return b;
}

function spdy101(protocol: string): string {
  return `HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: SPDY/3.1\r\nX-Stream-Protocol-Version: ${protocol}\r\n\r\n`;
}

/** Sends `frames` frames made by `frame`, never reading what comes back: our replies pile up in the kernel's buffers, then in the probe's. */
export function flood(socket: net.Socket, frame: (i: number) => Buffer, frames: number): void {
  socket.pause();
  const batch = 4096;
  let i = 0;
  const more = () => {
    while (i < frames && !socket.destroyed) {
      const chunk = Buffer.concat(Array.from({ length: Math.min(batch, frames - i) }, (_, k) => frame(i + k)));
      i += batch;
      if (!socket.write(chunk)) return void socket.once('drain', more);
    }
  };
  more();
}

/** Resolves once `w` drains or closes. */
function drained(w: NodeJS.EventEmitter): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      w.off('drain', done).off('close', done);
      resolve();
    };
    w.on('drain', done).on('close', done);
  });
}

/** Writes `bytes` of `fill` to a stream in 1 MiB writes, waiting for each to drain. */
async function writeAll(stream: SpdyStream, bytes: number, fill: number): Promise<void> {
  const chunk = Buffer.alloc(MiB, fill);
  for (let sent = 0; sent < bytes && !stream.destroyed; sent += MiB) {
    if (!stream.write(chunk)) await drained(stream);
  }
}

/** A v5 WebSocket exec: `attack` after the first (empty) stdout message; stdin echoed on stdout; `statusText` at its end. */
function wsExec(u: Upgrade, attack?: (ws: WebSocket) => void, statusText = '{"kind":"Status","status":"Success"}'): void {
  u.wss.handleUpgrade(u.req, u.socket, u.head, (ws) => {
    ws.on('error', () => undefined);
    ws.send(Buffer.from([1])); // the lowest writable channel first (kubelet websocket.go)
    attack?.(ws);
    ws.on('message', (m: Buffer) => {
      if (m[0] === 0) ws.send(Buffer.concat([Buffer.from([1]), m.subarray(1)]));
      if (m[0] === 255) {
        // The status in 1 MiB messages, each under the probe's message bound: the stream's total is what is bounded.
        const body = Buffer.from(statusText);
        for (let i = 0; i < body.length; i += MiB) ws.send(Buffer.concat([Buffer.from([3]), body.subarray(i, i + MiB)]));
        ws.send(Buffer.from([3]), () => ws.close(1000));
      }
    });
  });
}

/** A v4 SPDY exec: the client's streams replied, stdin echoed on stdout, the status once stdin ends. */
function spdyExec(u: Upgrade, attack: 'pushed-streams' | 'syn-flood' | 'status-50mb-spdy' | 'token-pieces'): void {
  u.socket.write(spdy101('v4.channel.k8s.io'));
  const session = new SpdySession(u.socket, { head: u.head, limits: { maxConcurrentStreams: 20_000 } }, 'server');
  session.on('error', () => undefined);
  u.stops.push(() => session.destroy());
  const streams = new Map<string, SpdyStream>();
  const pushed: number[] = [];
  session.on('stream', (stream: SpdyStream) => {
    stream.on('error', () => undefined);
    const type = headerValue(stream.headers, 'streamtype') ?? '';
    streams.set(type, stream);
    if (streams.size === 1) {
      // Before the client's first stream is replied (client-go opens the next only then): streams of the server's own.
      const n = attack === 'pushed-streams' ? 200 : attack === 'syn-flood' ? 10_000 : 0;
      for (let i = 0; i < n; i++) {
        const s = session.openStream({ streamtype: 'pushed' });
        s.on('error', () => undefined);
        pushed.push(s.id);
      }
    }
    stream.reply({});
    if (streams.size < 4) return; // error, stdin, stdout, stderr
    const stdin = streams.get('stdin')!;
    const stdout = streams.get('stdout')!;
    stdin.on('data', (b: Buffer) => stdout.write(b));
    stdin.on('end', () => {
      // As the kubelet: the output streams end first, then the status (exec-spdy-server.ts).
      stdout.end();
      streams.get('stderr')?.end();
      const error = streams.get('error')!;
      if (attack === 'status-50mb-spdy') {
        void writeAll(error, 50 * MiB, 0x78).then(() => error.end());
        return;
      }
      if (attack === 'token-pieces') error.write(`<html>${'n'.repeat(120 - 6 - 20)}${HOSTILE_TOKEN}</html>`);
      else error.write('{"kind":"Status","status":"Success"}');
      error.end();
    });
    if (attack === 'pushed-streams') {
      // 2 MiB of DATA on each stream the server opened, whatever the client answered (RST_STREAM or not): 400 MiB,
      // written as raw frames beside the session's own, each whole frame one write.
      void (async () => {
        const payload = Buffer.alloc(64 * 1024, 0x64);
        for (let round = 0; round < 32 && !u.socket.destroyed; round++) {
          for (const id of pushed) {
            if (!u.socket.write(Buffer.concat([dataFrameHeader(id, 0, payload.length), payload]))) {
              await drained(u.socket);
            }
          }
        }
      })();
    }
  });
}

/** A SPDY port-forward: each pair of error and data streams replied and handed to `serve`. */
function spdyPortForward(u: Upgrade, serve: (error: SpdyStream, data: SpdyStream) => void): void {
  u.socket.write(spdy101('portforward.k8s.io'));
  const session = new SpdySession(u.socket, { head: u.head }, 'server');
  session.on('error', () => undefined);
  u.stops.push(() => session.destroy());
  const pairs = new Map<string, { error?: SpdyStream; data?: SpdyStream }>();
  session.on('stream', (stream: SpdyStream) => {
    stream.on('error', () => undefined);
    stream.reply({});
    const type = headerValue(stream.headers, 'streamtype') === 'error' ? 'error' : 'data';
    const id = headerValue(stream.headers, 'requestid') ?? '0';
    const pair = pairs.get(id) ?? {};
    pair[type] = stream;
    pairs.set(id, pair);
    if (pair.error && pair.data) serve(pair.error, pair.data);
  });
}
