/**
 * The legacy WebSocket port-forward of the kubelet (not used by kubectl; used
 * by SDK clients and web dashboards): GET …/portforward?ports=P with
 * `v4.channel.k8s.io`. Port i has data channel 2i and error channel 2i+1; the
 * server's first message on each channel is the port, uint16 little-endian.
 * The ports are fixed at upgrade time, so each port can be opened once.
 */
import { BoundedBytes } from './bounded-text.js';
import { WS_CLOSE } from './ws-close-codes.js';
import { Duplex, PassThrough, Writable } from 'node:stream';
import { probeError } from '../errors.js';
import { encodeChannelMessage } from './channel/codec.js';
import { encodeQuery, podPath } from './paths.js';
import type { ForwardedConnection, PortForwardOptions, PortForwardSession } from './types.js';
import type { ConnectionConfig } from '../net/connection.js';
import { upgradeWebSocket, wsWireLog } from './upgrade.js';
import { WebSocketConnection, wsKeepalive } from './ws-connection.js';

export const LEGACY_PORTFORWARD_PROTOCOLS = ['v4.channel.k8s.io'] as const;

export async function openLegacyPortForward(
  config: ConnectionConfig,
  opts: PortForwardOptions & { readonly ports: readonly number[]; readonly protocols?: readonly string[] },
): Promise<PortForwardSession> {
  const path = `${podPath(opts, 'portforward')}?${encodeQuery(opts.ports.map((p) => ['ports', String(p)] as const))}`;
  const up = await upgradeWebSocket(config, {
    path,
    what: 'legacy WebSocket port-forward',
    headers: [],
    protocols: opts.protocols ?? LEGACY_PORTFORWARD_PROTOCOLS,
  });
  const { ws, protocol } = up;
  const conn = new WebSocketConnection(ws, up.raw, wsKeepalive(opts.keepalive), wsWireLog(config, up.conn, 'legacy WebSocket port-forward'));
  const inbound = opts.ports.map(() => ({ data: new PassThrough(), error: new BoundedBytes(), seenPrefix: [false, false] }));
  const opened = new Set<number>();

  conn.onChannelMessage((msg) => {
    const index = msg.channel >> 1;
    const isError = (msg.channel & 1) === 1;
    const slot = inbound[index];
    if (!slot) return;
    let payload = msg.payload;
    if (!slot.seenPrefix[isError ? 1 : 0]) {
      // The first two bytes on each channel are the port number.
      slot.seenPrefix[isError ? 1 : 0] = true;
      payload = payload.subarray(2);
    }
    if (payload.length === 0) return;
    if (isError) slot.error.push(payload);
    else slot.data.write(payload);
  });
  void conn.ended.then(() => inbound.forEach((s) => s.data.end()));
  ws.start();

  return {
    transport: 'websocket',
    subprotocol: protocol,
    timing: up.timing,
    ended: conn.ended,
    wire: () => ({ readBytes: up.raw.bytesRead, writtenBytes: up.raw.bytesWritten }),
    close: () => conn.close(WS_CLOSE.NORMAL),
    destroy: () => conn.destroy(),
    async openConnection(port: number): Promise<ForwardedConnection> {
      const index = opts.ports.indexOf(port);
      if (index < 0 || opened.has(index)) {
        throw probeError('CONFIG_INVALID', `port ${port} was not requested at upgrade time (legacy port-forward forwards ${opts.ports.join(',')} once each)`, {
          field: 'port',
        });
      }
      opened.add(index);
      const slot = inbound[index]!;
      const stream = Duplex.from({
        readable: slot.data,
        writable: new Writable({
          write(chunk: Buffer, _e, cb) {
            const m = encodeChannelMessage(index * 2, chunk, protocol);
            ws.send(m.data, { binary: m.binary }, (err) => cb(err ?? null));
          },
        }),
      });
      stream.on('error', () => undefined);
      return {
        stream,
        errorText: conn.ended.then(() => slot.error.text()),
        // One connection per port per WebSocket: it ends with the WebSocket.
        ended: conn.ended,
        close: () => conn.close(WS_CLOSE.NORMAL),
      };
    },
  };
}
