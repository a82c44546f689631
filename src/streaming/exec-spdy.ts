/**
 * exec over SPDY/3.1, as client-go's SPDY executor does it (client-go
 * tools/remotecommand/spdy.go, v2.go createStreams): POST upgrade offering
 * v5..v1, streams created one at a time in kubectl's order (error, stdin,
 * stdout, stderr, resize), each SYN_REPLY awaited before the next.
 */
import { probeError } from '../errors.js';
import { decodeExecStatus } from './channel/exec-status.js';
import { ExecSubprotocol } from './channel/codec.js';
import { execPath } from './paths.js';
import { SPDY_PING_PERIOD_MS } from './keepalive.js';
import { startSpdyKeepalive, spdyEnd } from './spdy-keepalive.js';
import { SpdySession } from './spdy/session.js';
import type { SpdyStream } from './spdy/stream.js';
import type { ExecExit, ExecOptions, ExecSession } from './types.js';
import type { ConnectionConfig } from '../net/connection.js';
import { spdyWireLog, upgradeSpdy } from './upgrade.js';

/** client-go tools/remotecommand/spdy.go: offered in this order, one header line each. */
export const SPDY_EXEC_PROTOCOLS = ['v5.channel.k8s.io', 'v4.channel.k8s.io', 'v3.channel.k8s.io', 'v2.channel.k8s.io', 'channel.k8s.io'] as const;
export async function openSpdyExec(config: ConnectionConfig, opts: ExecOptions): Promise<ExecSession> {
  const up = await upgradeSpdy(config, {
    path: execPath(opts),
    what: `SPDY ${opts.subresource ?? 'exec'}`,
    protocols: SPDY_EXEC_PROTOCOLS,
    emptyMeans: ExecSubprotocol.V1,
  });
  const protocol = up.protocol;
  const session = new SpdySession(up.socket, { head: up.head, onControlFrame: spdyWireLog(config, up.conn, 'SPDY exec') });
  const tty = opts.tty === true;
  const wantStdout = opts.stdout ?? true;
  const wantStderr = (opts.stderr ?? !tty) && !tty;
  const hasResize = tty && protocol !== ExecSubprotocol.V1 && protocol !== 'v2.channel.k8s.io';

  const open = async (type: string): Promise<SpdyStream> => {
    const s = session.openStream({ streamtype: type });
    await s.awaitReply(opts.streamReplyTimeoutMs);
    return s;
  };
  let errorStream: SpdyStream, stdin: SpdyStream | undefined, stdout: SpdyStream | undefined, stderr: SpdyStream | undefined, resize: SpdyStream | undefined;
  try {
    errorStream = await open('error');
    if (opts.stdin) stdin = await open('stdin');
    if (wantStdout) stdout = await open('stdout');
    if (wantStderr) stderr = await open('stderr');
    if (hasResize) resize = await open('resize');
  } catch (err) {
    session.destroy();
    throw err;
  }
  // All streams exist: no header block will flow either way again, so free both zlib streams' state.
  session.releaseHeaderContexts();
  const keepalive = opts.keepalive === 'none' ? undefined : startSpdyKeepalive(session, SPDY_PING_PERIOD_MS);
  const ended = spdyEnd(session, up.raw);
  void ended.then(() => keepalive?.stop());

  const errorText = errorStream.readAll();
  // kubectl waits for stdout and stderr to end before it reports the status.
  const outEnded = Promise.all([stdout?.remoteEnded, stderr?.remoteEnded]);
  const exit: Promise<ExecExit> = errorText.then(async ({ text, clean, totalBytes }) => {
    await outEnded;
    if (!clean && text.length === 0) {
      const cause = session.end?.cause ?? 'stream-reset';
      return { exitCode: undefined, error: probeError('EXEC_NO_STATUS', `the connection ended (${cause}) before the exit status arrived`, { cause }) };
    }
    return decodeExecStatus(text, protocol, totalBytes);
  });

  const terminal = opts.terminalSize;
  const result: ExecSession = {
    transport: 'spdy',
    subprotocol: protocol,
    timing: up.timing,
    ended,
    wire: () => ({ readBytes: up.raw.bytesRead, writtenBytes: up.raw.bytesWritten }),
    streamsRefused: () => session.peerStreamsRefused,
    stdin,
    stdout: stdout ?? undefined,
    stderr: stderr ?? undefined,
    exit,
    resize(width, height) {
      resize?.write(`${JSON.stringify({ Width: width, Height: height })}\n`);
    },
    close: () => session.close(),
    destroy: () => session.destroy(),
  };
  // kubectl sends the terminal size first.
  if (resize && terminal) result.resize(terminal.width, terminal.height);
  return result;
}
