/**
 * A session's channel (session.ts, phase 1): connect and upgrade as kubectl does, and for port-forward open the
 * one forwarded connection; with the types the phases share (how a loss is recorded, a phase's early end).
 */
import { transferCommand } from './transfer.js';
import { firstSizes } from './terminal.js';
import { TARGET_DEFAULTS } from '../kube/target.js';
import type { Writable } from 'node:stream';
import { errorCodeOf, errorMessage } from '../errors.js';
import { openExec, openPortForward } from '../streaming/index.js';
import { openLegacyPortForward } from '../streaming/portforward-legacy.js';
import { SDK_WEBSOCKET_PROTOCOLS } from './sdk-clients.js';
import type { ConnectionEnd, ExecSession, ForwardedConnection, PortForwardSession } from '../streaming/types.js';
import type { Clock } from '../timers.js';
import { EchoReader } from './echo.js';
import { holdShapeCommand } from './hold-shape.js';
import { DEFAULT_STREAM_REPLY_TIMEOUT_MS, type SessionOptions } from './session-options.js';
import type { ClusterTarget, HoldCause, SessionResult, SessionSpec, UpgradeOutcome } from './types.js';
import { upgradeFailure } from './upgrade-outcome.js';
import { ownCpu } from './own-cpu.js';

/** A loss during the hold; `sessionAtMs` is when the session saw it, on its own (injectable) clock. */
export type Lost = Omit<ConnectionEnd, 'cause'> & { readonly cause: HoldCause; readonly sessionAtMs?: number };
const asLost = (e: ConnectionEnd): Lost => ({ ...e, cause: e.cause === 'local' ? 'error' : e.cause });

/** The upgraded session and the channel its echoes go through. */
export interface Channel {
  readonly session: ExecSession | PortForwardSession;
  readonly exec?: ExecSession;
  readonly forwarded?: ForwardedConnection;
  readonly reader: EchoReader;
  readonly writer: Writable;
  /** The first loss seen: the connection's, or (port-forward) the forwarded stream's. */
  readonly lost: Promise<Lost>;
  /** exec: the bytes that came on stderr, read and dropped as they arrive (kubectl prints them; nothing here reads them). */
  readonly stderrBytes?: () => number;
}

export type Mutable<T> = { -readonly [K in keyof T]?: T[K] };

/** A phase's early end: the result is final. */
export class Finished {
  constructor(readonly partial: Mutable<SessionResult>) {}
}

const r3 = (ms: number) => Math.round(ms * 1000) / 1000;

/**
 * Connects, upgrades and (port-forward) opens the forwarded connection; throws Finished with the classified
 * failure, or with nothing when the run was stopped meanwhile (`stopped()`: what opened is closed at once).
 */
export async function openChannel(
  spec: SessionSpec,
  target: ClusterTarget,
  options: SessionOptions,
  ctx: {
    readonly scrub: (t: string) => string;
    readonly clock: Clock;
    readonly stopped: () => boolean;
    /** Called at the 101, before port-forward's connection is opened (an interruption then still shows the upgrade). */
    readonly upgraded: (upgrade: UpgradeOutcome, subprotocol: string) => void;
  },
): Promise<Channel> {
  const pod = { namespace: target.namespace, pod: target.pod, container: target.container };
  // An SDK client (sdk-clients.ts) sends no pings, offers what @kubernetes/client-node offers, and port-forwards over
  // the kubelet's legacy WebSocket protocol.
  const sdk = spec.keepalive === 'sdk';
  const common = {
    ...pod,
    keepalive: sdk ? ('none' as const) : spec.keepalive,
    streamReplyTimeoutMs: options.streamReplyTimeoutMs ?? DEFAULT_STREAM_REPLY_TIMEOUT_MS,
  };
  let session: ExecSession | PortForwardSession;
  try {
    session =
      spec.operation !== 'portforward'
        ? await openExec(spec.transport, target.connection, {
            ...common,
            // attach joins the target's main process, cat on stdin: the same echo; ending stdin ends the attach with
            // Success (the container keeps running: it is not stdinOnce), as exec's cat exits 0.
            ...(spec.operation === 'attach'
              ? { subresource: 'attach' as const, command: [] }
              : { command: spec.transferBytes ? transferCommand(spec.transferShape, spec.transferBytes) : holdShapeCommand(spec.holdShape) }),
            // A terminal session (terminal.ts): the size first, as kubectl sends it; attach joins the container with a pty.
            ...(spec.holdShape === 'tty'
              ? { tty: true, terminalSize: firstSizes(spec.operation)[0], ...(spec.operation === 'attach' ? { container: TARGET_DEFAULTS.ttyContainer } : {}) }
              : {}),
            stdin: true,
            ...(sdk ? { websocketProtocols: SDK_WEBSOCKET_PROTOCOLS } : {}),
          })
        : sdk
          ? await openLegacyPortForward(target.connection, { ...common, ports: [target.port], protocols: SDK_WEBSOCKET_PROTOCOLS })
          : await openPortForward(spec.transport, target.connection, common);
  } catch (err) {
    throw new Finished({ upgrade: upgradeFailure(err, ctx.scrub) });
  }
  if (ctx.stopped()) {
    session.close();
    throw new Finished({});
  }
  const upgrade: UpgradeOutcome = {
    ok: true,
    status: 101,
    handshakeMs: r3(session.timing.handshakeMs),
    ownCpu: ownCpu(session.timing.handshakeMs, session.timing.loopBusy),
    phases: session.timing.phases,
    error: null,
    errorCode: null,
    kubernetesStatus: null,
    ...session.timing.answeredBy,
  };
  ctx.upgraded(upgrade, session.subprotocol);
  // Stamped on the session's own clock when it happens: the hold's start and last activity are on that clock too.
  const stamp = (e: Lost): Lost => ({ ...e, sessionAtMs: ctx.clock.now() });
  const connectionLost = session.ended.then(asLost).then(stamp);
  if ('stdin' in session) {
    // kubectl attach's second size (terminal.ts firstSizes), right after the first.
    if (spec.holdShape === 'tty') for (const size of firstSizes(spec.operation).slice(1)) session.resize(size.width, size.height);
    // stderr is read as it comes and only counted: left unread it would be buffered whole (issue 57 §1: a flood of
    // it during a hold held 3.4 GiB).
    let stderrBytes = 0;
    session.stderr?.on('data', (c: Buffer) => {
      stderrBytes += c.length;
    });
    // Opened with stdin and stdout, so both exist.
    return {
      session,
      exec: session,
      reader: new EchoReader(session.stdout!),
      writer: session.stdin!,
      lost: connectionLost,
      stderrBytes: () => stderrBytes,
    };
  }
  let forwarded: ForwardedConnection;
  try {
    forwarded = await session.openConnection(target.port);
  } catch (err) {
    session.destroy();
    throw new Finished({ error: `the forwarded connection could not be opened: ${ctx.scrub(errorMessage(err))}`, errorCode: errorCodeOf(err) });
  }
  if (ctx.stopped()) {
    forwarded.close();
    session.close();
    throw new Finished({});
  }
  const lost = Promise.race([connectionLost, forwarded.ended.then(asLost).then(stamp)]);
  return { session, forwarded, reader: new EchoReader(forwarded.stream), writer: forwarded.stream, lost };
}
