/**
 * The API server side of exec/attach over WebSocket, in the translator's
 * sequence (apiserver pkg/util/proxy/streamtranslator.go, websocket.go
 * createWebSocketStreams); the legacy names as the kubelet's own server
 * (kubelet pkg/cri/streaming/remotecommand/websocket.go).
 */
import { PassThrough } from 'node:stream';
import type WebSocket from 'ws';
import { Channel, ExecSubprotocol, encodeChannelMessage } from '../../src/streaming/channel/codec.js';
import { readClientChannelMessage } from './ws-channel-server.js';
import { encodeExecStatus } from './exec-status.js';
import type { ExecRequest } from './exec-spdy-server.js';
import { runCommand } from './processes.js';
import { FaultySink } from './stream-faults.js';

export function serveWebSocketExec(ws: WebSocket, protocol: string, req: ExecRequest, firstMessageDelayMs: number): void {
  const abort = new AbortController();
  const stdin = req.stdin ? new PassThrough() : undefined;
  const send = (channel: number, payload: Buffer) => {
    if (ws.readyState !== ws.OPEN) return;
    const m = encodeChannelMessage(channel, payload, protocol);
    ws.send(m.data, { binary: m.binary });
  };
  ws.on('close', () => {
    abort.abort();
    stdin?.end();
  });
  ws.on('error', () => undefined);
  ws.on('message', (data: Buffer, isBinary: boolean) => {
    let msg;
    try {
      msg = readClientChannelMessage(data, isBinary, protocol);
    } catch {
      ws.close(1002);
      return;
    }
    if (!msg) return;
    if (msg.channel === Channel.STDIN) stdin?.write(msg.payload);
    else if (msg.channel === Channel.RESIZE) req.terminal.resize(msg.payload, req.resizes);
    else if (msg.channel === Channel.CLOSE && protocol === ExecSubprotocol.V5) {
      // wsstream/conn.go: exactly one byte, a valid channel; else a protocol error.
      if (msg.payload.length !== 1) ws.close(1002);
      else if (msg.payload[0] === Channel.STDIN && !req.keepStdinOpen) stdin?.end();
    }
  });
  const start = async () => {
    // One empty message on the lowest writable channel, first (apiserver websocket.go).
    send(req.stdout ? Channel.STDOUT : req.stderr ? Channel.STDERR : Channel.ERROR, Buffer.alloc(0));
    const faulty = FaultySink.wrap((b) => send(Channel.STDOUT, b), req.faults);
    ws.once('close', () => faulty?.dispose());
    const code = await runCommand(req.command, {
      stdin,
      stdout: (b) => (faulty ? faulty.write(b) : send(Channel.STDOUT, b)),
      stderr: (b) => send(req.tty ? Channel.STDOUT : Channel.STDERR, b),
      signal: abort.signal,
      fs: req.fs,
      tty: req.tty,
      terminal: req.terminal,
    });
    await faulty?.flush();
    if (abort.signal.aborted) return;
    if (protocol === ExecSubprotocol.V5 || protocol === ExecSubprotocol.V4 || protocol === ExecSubprotocol.V4_BASE64) {
      send(Channel.ERROR, Buffer.from(encodeExecStatus(code)));
    } else if (code !== 0) {
      send(Channel.ERROR, Buffer.from(`command terminated with non-zero exit code: exit status ${code}`));
    }
    if (ws.readyState === ws.OPEN) ws.close(1000);
  };
  if (firstMessageDelayMs > 0) setTimeout(() => void start(), firstMessageDelayMs);
  else void start();
}
