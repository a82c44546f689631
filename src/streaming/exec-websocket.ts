/**
 * exec over WebSocket (KEP-4006, `v5.channel.k8s.io`; v4 and the legacy
 * names too when offered), as client-go's WebSocket executor does it
 * (client-go tools/remotecommand/websocket.go; apiserver
 * pkg/util/proxy/streamtranslator.go on the other side).
 */
import { BoundedBytes } from './bounded-text.js';
import { WS_CLOSE } from './ws-close-codes.js';
import { Writable } from 'node:stream';
import { Inbound } from './inbound.js';
import { sendBinaryMessage } from './ws-send.js';
import { Channel, ExecSubprotocol, channelPrefix, encodeChannelMessage, encodeCloseSignal, isBase64Protocol } from './channel/codec.js';
import { probeError } from '../errors.js';
import { decodeExecStatus } from './channel/exec-status.js';
import { execPath } from './paths.js';
import type { ExecExit, ExecOptions, ExecSession } from './types.js';
import type { ConnectionConfig } from '../net/connection.js';
import { upgradeWebSocket, wsWireLog } from './upgrade.js';
import { WebSocketConnection, wsKeepalive } from './ws-connection.js';

const STDIN_CHUNK_BYTES = 32 * 1024;

export async function openWebSocketExec(config: ConnectionConfig, opts: ExecOptions): Promise<ExecSession> {
  const protocols = opts.websocketProtocols ?? [ExecSubprotocol.V5];
  const up = await upgradeWebSocket(config, { path: execPath(opts), what: `WebSocket ${opts.subresource ?? 'exec'}`, headers: [], protocols });
  const { ws, protocol } = up;
  const conn = new WebSocketConnection(ws, up.raw, wsKeepalive(opts.keepalive), wsWireLog(config, up.conn, `WebSocket ${opts.subresource ?? 'exec'}`));
  const tty = opts.tty === true;
  const stdout = (opts.stdout ?? true) ? new Inbound() : undefined;
  const stderr = (opts.stderr ?? !tty) && !tty ? new Inbound() : undefined;
  const errorBytes = new BoundedBytes();
  let statusSeen = false;

  // Each channel's bytes as they arrive (a message's pieces, not the message joined first: ws-connection.ts).
  conn.onChannelData((channel, payload) => {
    switch (channel) {
      case Channel.STDOUT:
        stdout?.deliver(payload);
        break;
      case Channel.STDERR:
        stderr?.deliver(payload);
        break;
      case Channel.ERROR:
        if (payload.length) {
          statusSeen = true;
          errorBytes.push(payload);
        }
        break;
      default:
        // client-go logs and drops unknown channels; a probe reports them, since a
        // server (or hop) that invents channels is not one kubectl can trust either.
        conn.fail('protocol-error', probeError('CHANNEL_PROTOCOL', `unknown channel ${channel} from the server`, { subprotocol: protocol, channel }));
        break;
    }
  });

  // A binary message is its channel byte and the payload, masked straight from both into one frame (sendPieces): no
  // copy to prefix the channel, none for ws's masking (issue 42: exec stdin over WebSocket cost 1.86× kubectl's CPU).
  const binary = !isBase64Protocol(protocol);
  const send = (channel: number, payload: Buffer, cb?: (err?: Error | null) => void) => {
    if (binary) return ws.sendPieces([channelPrefix(channel), payload], cb);
    const m = encodeChannelMessage(channel, payload, protocol);
    ws.send(m.data, { binary: m.binary }, cb);
  };

  // stdin in client-go's 32 KiB pieces, one message each. On the binary protocols a piece goes on at once while
  // the socket's queue is short (ws-send.ts, as a SPDY stream's DATA); the base64 ones wait for each message.
  let stdinFailed: Error | null = null;
  const stdin = opts.stdin
    ? new Writable({
        write(chunk: Buffer, _enc, cb) {
          if (ws.readyState !== ws.OPEN) return cb(probeError('WS_CLOSED', 'the WebSocket is not open', {}));
          if (stdinFailed) return cb(stdinFailed);
          let off = 0;
          const more = (err?: Error | null): void => {
            if (err) return cb(err);
            while (off < chunk.length) {
              const piece = chunk.subarray(off, off + STDIN_CHUNK_BYTES);
              off += piece.length;
              if (!binary) return send(Channel.STDIN, piece, more);
              const waits = sendBinaryMessage(ws, [channelPrefix(Channel.STDIN), piece], more, (e) => (stdinFailed ??= e));
              if (waits) return;
            }
            cb(null);
          };
          more();
        },
        final(cb) {
          // Only v5 can half-close stdin ([255, 0]); v4 has no way to (issue #89899).
          if (protocol === ExecSubprotocol.V5 && ws.readyState === ws.OPEN) ws.send(encodeCloseSignal(Channel.STDIN), { binary: true }, () => cb());
          else cb();
        },
      })
    : undefined;
  stdin?.on('error', () => undefined);

  ws.start();

  const exit: Promise<ExecExit> = conn.ended.then((end) => {
    stdout?.finish();
    stderr?.finish();
    const text = errorBytes.text();
    if (!statusSeen) {
      // A v4/v5 server always sends a status before close 1000; none means the session was lost.
      return {
        exitCode: undefined,
        error: probeError('EXEC_NO_STATUS', `the connection ended (${end.cause}) before the exit status arrived`, { cause: end.cause }),
      };
    }
    return decodeExecStatus(text, protocol, errorBytes.total);
  });

  const session: ExecSession = {
    transport: 'websocket',
    subprotocol: protocol,
    timing: up.timing,
    ended: conn.ended,
    wire: () => ({ readBytes: up.raw.bytesRead, writtenBytes: up.raw.bytesWritten }),
    stdin,
    stdout,
    stderr,
    exit,
    resize(width, height) {
      if (ws.readyState === ws.OPEN) send(Channel.RESIZE, Buffer.from(`${JSON.stringify({ Width: width, Height: height })}\n`));
    },
    close: () => conn.close(WS_CLOSE.NORMAL),
    destroy: () => conn.destroy(),
  };
  if (tty && opts.terminalSize) session.resize(opts.terminalSize.width, opts.terminalSize.height);
  return session;
}
