/**
 * exec over SPDY/3.1, as client-go's SPDY executor does it
 * (k8s-streaming-protocols.md section 2): POST upgrade offering v5..v1,
 * streams created one at a time in kubectl's order, each awaited.
 */
import { probeError } from '../errors.js';
import { decodeExecStatus } from './channel/exec-status.js';
import { ExecSubprotocol } from './channel/codec.js';
import { execPath } from './paths.js';
import { startSpdyKeepalive, spdyEnd } from './spdy-keepalive.js';
import { SpdySession } from './spdy/session.js';
import type { SpdyStream } from './spdy/stream.js';
import type { ExecExit, ExecOptions, ExecSession } from './types.js';
import { UpgradeError, upgradeSpdy, type ConnectionConfig } from './upgrade.js';

/** client-go tools/remotecommand/spdy.go: offered in this order, one header line each. */
export const SPDY_EXEC_PROTOCOLS = ['v5.channel.k8s.io', 'v4.channel.k8s.io', 'v3.channel.k8s.io', 'v2.channel.k8s.io', 'channel.k8s.io'] as const;
/** apimachinery spdy connection.go createStreamResponseTimeout. */
export const STREAM_REPLY_TIMEOUT_MS = 30_000;

export async function awaitReply(stream: SpdyStream, timeoutMs = STREAM_REPLY_TIMEOUT_MS): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  try {
    await Promise.race([
      stream.replied,
      new Promise<never>((_, reject) => {
        timer = setTimeout(
          () => reject(probeError('SPDY_REPLY_TIMEOUT', `no SYN_REPLY for stream ${stream.id} within ${timeoutMs} ms`, { streamId: stream.id })),
          timeoutMs,
        );
      }),
    ]);
  } finally {
    clearTimeout(timer);
  }
}

export async function openSpdyExec(config: ConnectionConfig, opts: ExecOptions): Promise<ExecSession> {
  const up = await upgradeSpdy(config, {
    method: 'POST',
    path: execPath(opts),
    what: 'SPDY exec',
    headers: [
      ['Content-Length', '0'],
      ['Connection', 'Upgrade'],
      ['Upgrade', 'SPDY/3.1'],
      ...SPDY_EXEC_PROTOCOLS.map((p) => ['X-Stream-Protocol-Version', p] as const),
    ],
  });
  const upgradedAt = up.timing.at101;
  // An empty X-Stream-Protocol-Version means v1 (client-go spdy.go).
  const protocol = String(up.responseHeaders['x-stream-protocol-version'] ?? '') || ExecSubprotocol.V1;
  if (!(SPDY_EXEC_PROTOCOLS as readonly string[]).includes(protocol)) {
    up.socket.destroy();
    throw new UpgradeError('UPGRADE_BAD_RESPONSE', `SPDY exec: the 101 selected protocol "${protocol}", which was not offered`, up.timing.phases, up.timing.handshakeMs);
  }
  const session = new SpdySession(up.socket, { role: 'client', head: up.head });
  const tty = opts.tty === true;
  const wantStdout = opts.stdout ?? true;
  const wantStderr = (opts.stderr ?? !tty) && !tty;
  const hasResize = tty && protocol !== ExecSubprotocol.V1 && protocol !== 'v2.channel.k8s.io';

  const open = async (type: string): Promise<SpdyStream> => {
    const s = session.openStream({ streamtype: type });
    await awaitReply(s, opts.streamReplyTimeoutMs);
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
  // All streams exist: no header block will flow either way again, so free both zlib contexts.
  session.releaseHeaderContexts();
  const keepalive = opts.keepalive === 'none' ? undefined : startSpdyKeepalive(session, 5_000);
  const ended = spdyEnd(session, up.raw);
  ended.then(() => keepalive?.stop());

  const errorText = readAll(errorStream);
  // kubectl waits for stdout and stderr to end before it reports the status.
  const outEnded = Promise.all([stdout?.remoteEnded, stderr?.remoteEnded]);
  const exit: Promise<ExecExit> = errorText.then(async ({ text, clean }) => {
    await outEnded;
    if (!clean && text.length === 0) {
      const end = session.end;
      return { exitCode: undefined, error: `the connection ended (${end?.cause ?? 'reset'}) before the exit status arrived` };
    }
    return decodeExecStatus(text, protocol);
  });

  const terminal = opts.terminalSize;
  const result: ExecSession = {
    transport: 'spdy',
    subprotocol: protocol,
    timing: up.timing,
    upgradedAt,
    ended,
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

/** Reads a stream to its end; `clean` is false when it ended by reset or lost connection. */
export function readAll(stream: SpdyStream): Promise<{ text: string; clean: boolean }> {
  const chunks: Buffer[] = [];
  stream.on('data', (c: Buffer) => chunks.push(c));
  return new Promise((resolve) => {
    const done = () => resolve({ text: Buffer.concat(chunks).toString('utf8'), clean: stream.resetStatus === undefined && !stream.endError });
    stream.once('end', done);
  });
}
