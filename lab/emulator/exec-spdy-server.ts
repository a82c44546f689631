/**
 * The kubelet side of exec/attach over SPDY (kubelet
 * pkg/cri/streaming/remotecommand/httpstream.go, exec.go ServeExec):
 * reply to each stream at once, wait for the expected set, run the command,
 * FIN stdout/stderr, write the status on the error stream, FIN it.
 */
import { PassThrough } from 'node:stream';
import { encodeExecStatus } from './exec-status.js';
import { headerValue } from '../../src/streaming/spdy/frames.js';
import type { SpdySession } from '../../src/streaming/spdy/session.js';
import type { SpdyStream } from '../../src/streaming/spdy/stream.js';
import type { PodFilesystem } from './pod-fs.js';
import { ATTACH_MAIN, runCommand } from './processes.js';
import { mainProcessOf } from './main-process.js';
import { Terminal, type TerminalSize } from './terminal.js';
import { FaultySink, type StreamFaults } from './stream-faults.js';

export interface ExecRequest {
  readonly command: readonly string[];
  readonly stdin: boolean;
  readonly stdout: boolean;
  readonly stderr: boolean;
  readonly tty: boolean;
  /** The pod's filesystem, shared by its sessions. */
  readonly fs: PodFilesystem;
  /** What happens to stdout on its way back (stream-faults.ts). */
  readonly faults?: StreamFaults;
  /** The client's end of stdin never reaches the process (the loseStdinEof fault). */
  readonly keepStdinOpen: boolean;
  /** The session's terminal (tty): exec's own, or the attached container's pty; its resizes as received. */
  readonly terminal: Terminal;
  readonly resizes: TerminalSize[];
}

/** kubelet DefaultStreamCreationTimeout. */
const STREAM_CREATION_TIMEOUT_MS = 30_000;

export function execRequestFrom(query: URLSearchParams, attach: boolean, fs: PodFilesystem, faults?: StreamFaults): ExecRequest {
  // apimachinery's query conversion (runtime Convert_Slice_string_To_bool): absent, "0" or "false" in any case is
  // false, anything else true: the Python client's "True" too.
  const flag = (n: string) => {
    const v = query.get(n);
    return v !== null && v !== '0' && v.toLowerCase() !== 'false';
  };
  const container = query.get('container') ?? 'main';
  const dropResize = faults?.dropResize === true;
  return {
    // Resizes go to the session's terminal: attach's is the container's pty, shared by every attached client.
    terminal: attach ? (mainProcessOf(fs, container, dropResize).terminal ?? new Terminal(dropResize)) : new Terminal(dropResize),
    resizes: [],
    // attach joins the container's main process: cat on stdin, running until the session ends.
    command: attach ? [ATTACH_MAIN, container] : query.getAll('command'),
    stdin: flag('stdin'),
    stdout: flag('stdout'),
    stderr: flag('stderr'),
    tty: flag('tty'),
    fs,
    faults,
    // An attached client's end of stdin ends its attach (containerd, pkg/cri/io/container_io.go Attach: without stdinOnce the
    // container's stdin stays open, the attach's output is detached, the kubelet writes Success): the same as the
    // per-session cat ending here, so it is passed on.
    keepStdinOpen: faults?.loseStdinEof === true,
  };
}

const structured = (protocol: string) => protocol.startsWith('v4.') || protocol.startsWith('v5.');

export function serveSpdyExec(session: SpdySession, protocol: string, req: ExecRequest, onStream: (h: Record<string, string>) => void): void {
  const hasResize = req.tty && protocol !== 'channel.k8s.io' && protocol !== 'v2.channel.k8s.io';
  const expected = 1 + Number(req.stdin) + Number(req.stdout) + Number(req.stderr && !req.tty) + Number(hasResize);
  const streams = new Map<string, SpdyStream>();
  const abort = new AbortController();
  void session.closed.then(() => abort.abort());
  const timer = setTimeout(() => session.close(), STREAM_CREATION_TIMEOUT_MS);
  session.on('stream', (stream: SpdyStream) => {
    const type = headerValue(stream.headers, 'streamtype') ?? '';
    onStream(Object.fromEntries(Object.entries(stream.headers).map(([k, v]) => [k, v.join(',')])));
    stream.reply({});
    if (type === 'resize') stream.on('data', (b: Buffer) => req.terminal.resize(b, req.resizes));
    streams.set(type, stream);
    if (streams.size === expected) {
      clearTimeout(timer);
      void run();
    }
  });

  async function run(): Promise<void> {
    const out = streams.get('stdout');
    const err = req.tty ? out : streams.get('stderr');
    const faulty = FaultySink.wrap((b) => out?.write(b), req.faults);
    void session.closed.then(() => faulty?.dispose());
    const code = await runCommand(req.command, {
      stdin: req.keepStdinOpen ? withoutEnd(streams.get('stdin')) : streams.get('stdin'),
      stdout: (b) => (faulty ? faulty.write(b) : out?.write(b)),
      stderr: (b) => err?.write(b),
      signal: abort.signal,
      fs: req.fs,
      tty: req.tty,
      terminal: req.terminal,
    });
    await faulty?.flush();
    if (abort.signal.aborted) return;
    // The kubelet writes the status once the output is copied out (its writes block until sent): the stdout stream's
    // queued bytes go first, then the status (an exit overtaking output is the truncateTail fault's, not ours).
    await Promise.all(['stdout', 'stderr'].map((name) => endAndFlush(streams.get(name))));
    if (abort.signal.aborted) return;
    const errorStream = streams.get('error');
    if (structured(protocol)) errorStream?.write(encodeExecStatus(code));
    else if (code !== 0) errorStream?.write(`command terminated with non-zero exit code: exit status ${code}`);
    errorStream?.end();
    // Leave the teardown (RST, GOAWAY, close) to the client, as kubectl expects; but not forever.
    const t = setTimeout(() => session.close(), 10_000);
    t.unref();
    void session.closed.then(() => clearTimeout(t));
  }
}

/** The stream's bytes without its end (keepStdinOpen): the reader waits for more until the session closes. */
function withoutEnd(stream: SpdyStream | undefined): PassThrough | undefined {
  if (!stream) return undefined;
  const out = new PassThrough();
  stream.on('data', (b: Buffer) => out.write(b));
  return out;
}

/** Ends a stream and resolves once everything written to it has gone out (or it is gone). */
function endAndFlush(stream: SpdyStream | undefined): Promise<void> {
  if (!stream || stream.writableFinished || stream.destroyed) return Promise.resolve();
  return new Promise((resolve) => {
    stream.once('finish', () => resolve());
    stream.once('close', () => resolve());
    stream.once('error', () => resolve());
    stream.end();
  });
}
