/**
 * The kubelet side of port-forward over SPDY (direct, or inside the WebSocket
 * tunnel), and the legacy v4 WebSocket port-forward (kubelet
 * pkg/cri/streaming/portforward/httpstream.go, websocket.go).
 */
import net from 'node:net';
import type WebSocket from 'ws';
import { encodeChannelMessage } from '../../src/streaming/channel/codec.js';
import { readClientChannelMessage } from './ws-channel-server.js';
import { corkForTick } from '../../src/streaming/cork.js';
import { RstStatus } from '../../src/streaming/spdy/constants.js';
import { headerValue } from '../../src/streaming/spdy/frames.js';
import type { SpdySession } from '../../src/streaming/spdy/session.js';
import type { SpdyStream } from '../../src/streaming/spdy/stream.js';
import { FaultySink, type StreamFaults } from './stream-faults.js';

export interface ForwardTarget {
  readonly podPorts: readonly number[];
  readonly echoPort: number;
  readonly podUid: string;
  /** Echo each connection's data inside the emulator instead of forwarding it to the echo server (EmulatorOptions). */
  readonly echoInStream: boolean;
  /** What happens to the pod's bytes on their way back (stream-faults.ts). */
  readonly faults?: StreamFaults;
}

function refusedText(port: number, uid: string): string {
  return `error forwarding port ${port} to pod ${uid}, uid : failed to connect to localhost:${port} inside namespace: connection refused`;
}

export function serveSpdyPortForward(session: SpdySession, target: ForwardTarget, onStream: (h: Record<string, string>) => void): void {
  const pairs = new Map<string, { error?: SpdyStream; data?: SpdyStream }>();
  session.on('stream', (stream: SpdyStream) => {
    onStream(Object.fromEntries(Object.entries(stream.headers).map(([k, v]) => [k, v.join(',')])));
    const type = headerValue(stream.headers, 'streamtype');
    const port = Number(headerValue(stream.headers, 'port'));
    // kubelet: reject a stream without a valid port or stream type.
    if (!Number.isInteger(port) || port < 1 || port > 65535 || (type !== 'error' && type !== 'data')) {
      stream.reset(RstStatus.PROTOCOL_ERROR);
      return;
    }
    stream.reply({});
    const requestId = headerValue(stream.headers, 'requestid') ?? String(type === 'error' ? stream.id : stream.id - 2);
    const pair = pairs.get(requestId) ?? {};
    pair[type] = stream;
    pairs.set(requestId, pair);
    if (type === 'error') stream.resume();
    if (pair.error && pair.data) {
      pairs.delete(requestId);
      forward(port, pair.error, pair.data, target);
    }
  });
}

function forward(port: number, errorStream: SpdyStream, data: SpdyStream, target: ForwardTarget): void {
  if (!target.podPorts.includes(port)) {
    errorStream.write(refusedText(port, target.podUid));
    setImmediate(() => {
      errorStream.reset(RstStatus.CANCEL);
      data.reset(RstStatus.CANCEL);
    });
    return;
  }
  const faulty = FaultySink.wrap((b) => data.write(b), target.faults && { ...target.faults, truncateTailBytes: undefined });
  if (target.echoInStream && !faulty) {
    // The data stream's bytes go back as they arrive (their FIN too); the error stream ends with it.
    data.pipe(data);
    data.once('close', () => errorStream.end());
    return;
  }
  const tcp = net.connect(target.echoPort, '127.0.0.1');
  tcp.setNoDelay(true);
  tcp.on('error', () => data.reset(RstStatus.CANCEL));
  // data.pipe(tcp), with a tick's frames written to the pod's port in one writev.
  data.on('data', (chunk: Buffer) => {
    corkForTick(tcp);
    if (!tcp.write(chunk)) data.pause();
  });
  tcp.on('drain', () => data.resume());
  data.on('end', () => tcp.end());
  if (faulty) {
    faulty.onDrain = () => tcp.resume();
    tcp.on('data', (b: Buffer) => {
      if (!faulty.write(b)) tcp.pause();
    });
    tcp.on('end', () => void faulty.flush().then(() => data.end()));
  } else tcp.pipe(data);
  tcp.on('close', () => errorStream.end());
  data.on('close', () => (tcp.destroy(), faulty?.dispose()));
}

/**
 * The kubelet's legacy WebSocket port-forward (pkg/kubelet/cri/streaming/portforward/websocket.go
 * `handleWebSocketStreams`), which a real API server reaches for any WebSocket port-forward that does not offer the
 * SPDY tunnel (PortForwardREST.Connect: translator.NewTranslatingHandler tunnels only
 * wsstream.IsWebSocketRequestWithTunnelingProtocol): per port a data channel 2i and an error channel 2i+1, each first
 * carrying the port as uint16 little-endian; the protocols "" (none), v4.channel.k8s.io and v4.base64.channel.k8s.io.
 */
export function serveLegacyPortForward(ws: WebSocket, protocol: string, ports: readonly number[], target: ForwardTarget): void {
  const send = (channel: number, payload: Buffer) => {
    if (ws.readyState !== ws.OPEN) return;
    const m = encodeChannelMessage(channel, payload, protocol);
    ws.send(m.data, { binary: m.binary });
  };
  const conns = ports.map((port, i) => {
    const prefix = Buffer.alloc(2);
    prefix.writeUInt16LE(port);
    send(2 * i, prefix);
    send(2 * i + 1, prefix);
    if (!target.podPorts.includes(port)) {
      send(2 * i + 1, Buffer.from(refusedText(port, target.podUid)));
      return undefined;
    }
    if (target.echoInStream) return { write: (b: Buffer) => send(2 * i, b), destroy: () => undefined };
    const tcp = net.connect(target.echoPort, '127.0.0.1');
    tcp.on('data', (b: Buffer) => send(2 * i, b));
    tcp.on('error', () => undefined);
    return tcp;
  });
  ws.on('message', (raw: Buffer, isBinary: boolean) => {
    try {
      const m = readClientChannelMessage(raw, isBinary, protocol);
      if (m && m.channel % 2 === 0) conns[m.channel / 2]?.write(m.payload);
    } catch {
      ws.close(1002);
    }
  });
  ws.on('close', () => conns.forEach((c) => c?.destroy()));
  ws.on('error', () => undefined);
}
