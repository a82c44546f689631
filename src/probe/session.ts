/**
 * One probe session (architecture.md, probe semantics): connect and upgrade,
 * prove the channel, hold idle, prove it again, close as kubectl does. Every
 * outcome is classified and every session returns inside its own deadline.
 */
import type { Writable } from 'node:stream';
import { errorMessage, isProbeError } from '../errors.js';
import { openExec, openPortForward } from '../streaming/index.js';
import type { ConnectionEnd, ExecSession, ForwardedConnection, PortForwardSession } from '../streaming/types.js';
import type { UpgradeError, UpgradeRejectedError } from '../streaming/upgrade.js';
import { EchoReader, nonce } from './echo.js';
import type { ClusterTarget, HoldCause, HoldOutcome, SessionResult, SessionSpec, UpgradeOutcome } from './types.js';

export interface SessionOptions {
  readonly echoTimeoutMs: number;
  /** Progress callback: the session is holding, lost, or done. */
  readonly onProgress?: (event: { spec: SessionSpec; state: 'connecting' | 'holding' | 'lost' | 'done'; atSeconds?: number }) => void;
  readonly signal?: AbortSignal;
}

export const DEFAULT_ECHO_TIMEOUT_MS = 5_000;
const CLOSE_GRACE_MS = 3_000;

const r3 = (ms: number) => Math.round(ms * 1000) / 1000;

/** The session's own deadline: hold + handshake + echoes + close, with slack. */
export function sessionDeadlineMs(spec: SessionSpec, target: ClusterTarget, echoTimeoutMs: number): number {
  const dial = target.connection.dialTimeoutMs ?? 10_000;
  const upgrade = target.connection.upgradeTimeoutMs ?? 15_000;
  return dial + upgrade + spec.holdSeconds * 1000 + 2 * echoTimeoutMs + 3 * CLOSE_GRACE_MS;
}

/** Removes our own credentials from text a peer sent back (a hop may reflect request headers). */
function scrubber(target: ClusterTarget): (text: string) => string {
  const secrets = Object.values(target.connection.headers ?? {})
    .flatMap((v) => [v, v.split(' ').slice(1).join(' ')])
    .filter((v) => v.length >= 6);
  return (text) => secrets.reduce((t, s) => t.split(s).join('[REDACTED]'), text);
}

function upgradeFailure(err: unknown, scrub: (t: string) => string = (t) => t): UpgradeOutcome {
  // Matched by code, not class (errors.ts): UPGRADE_REJECTED always carries the reply's details.
  if (isProbeError(err, 'UPGRADE_REJECTED')) {
    const e = err as UpgradeRejectedError;
    return {
      ok: false,
      status: e.status,
      handshakeMs: null,
      phases: e.phases,
      error: scrub(e.message),
      errorCode: e.code,
      kubernetesStatus: e.kubeStatus !== undefined,
      statusReason: e.kubeStatus?.reason,
      bodyPrefix: scrub(e.bodyPrefix).slice(0, 200),
    };
  }
  const phases = (err as Partial<UpgradeError> | undefined)?.phases ?? {};
  return {
    ok: false,
    status: null,
    handshakeMs: null,
    phases,
    error: scrub(errorMessage(err).replace(/^[A-Z_]+: /, '')),
    errorCode: isProbeError(err) ? err.code : 'UPGRADE_FAILED',
    kubernetesStatus: null,
  };
}

function endCause(end: ConnectionEnd): HoldCause {
  return end.cause === 'local' ? 'error' : (end.cause as HoldCause);
}

export async function runSession(spec: SessionSpec, target: ClusterTarget, options: SessionOptions): Promise<SessionResult> {
  const t0 = performance.now();
  const deadlineMs = sessionDeadlineMs(spec, target, options.echoTimeoutMs);
  let open: ExecSession | PortForwardSession | undefined;
  type Mutable<T> = { -readonly [K in keyof T]?: T[K] };
  let state: Mutable<SessionResult> = {};
  const finish = (r: Partial<SessionResult>): SessionResult => {
    const upgrade = r.upgrade ?? upgradeFailure(new Error('the session did not start'));
    const hold = r.hold ?? { survived: null, disconnectSeconds: null, cause: null };
    const ok = upgrade.ok && r.firstEchoMs != null && hold.survived !== false && (spec.holdSeconds === 0 || r.echoMs != null) && !r.error;
    return {
      ...spec,
      subprotocol: r.subprotocol ?? null,
      upgrade,
      firstEchoMs: r.firstEchoMs ?? null,
      hold,
      echoMs: r.echoMs ?? null,
      exitCode: r.exitCode ?? null,
      ok,
      error: r.error ?? null,
      durationMs: Math.round(performance.now() - t0),
    };
  };
  let deadlineTimer: NodeJS.Timeout | undefined;
  const deadline = new Promise<SessionResult>((resolve) => {
    deadlineTimer = setTimeout(() => {
      open?.destroy();
      const upgraded = state.upgrade?.ok === true;
      resolve(
        finish({
          ...state,
          hold: upgraded ? { survived: false, disconnectSeconds: null, cause: 'deadline' } : state.hold,
          upgrade: state.upgrade ?? upgradeFailure(new Error(`no result within the session deadline of ${Math.round(deadlineMs / 1000)} s`)),
          error: `the session did not finish within its deadline of ${Math.round(deadlineMs / 1000)} s`,
        }),
      );
    }, deadlineMs);
    deadlineTimer.unref?.();
  });
  const work = (async (): Promise<SessionResult> => {
    options.onProgress?.({ spec, state: 'connecting' });
    const conn = target.connection;
    const pod = { namespace: target.namespace, pod: target.pod, container: target.container };
    let exec: ExecSession | undefined;
    let pf: PortForwardSession | undefined;
    let forwarded: ForwardedConnection | undefined;
    try {
      if (spec.operation === 'exec') exec = open = await openExec(spec.transport, conn, { ...pod, command: ['cat'], stdin: true, keepalive: spec.keepalive, streamReplyTimeoutMs: options.echoTimeoutMs });
      else pf = open = await openPortForward(spec.transport, conn, { ...pod, keepalive: spec.keepalive, streamReplyTimeoutMs: options.echoTimeoutMs });
    } catch (err) {
      return finish({ upgrade: upgradeFailure(err, scrubber(target)) });
    }
    const session = open;
    state = {
      subprotocol: session.subprotocol,
      upgrade: { ok: true, status: 101, handshakeMs: r3(session.timing.handshakeMs), phases: session.timing.phases, error: null, errorCode: null, kubernetesStatus: null },
    };
    const secondsSince101 = (atMs: number) => Math.round(((atMs - session.timing.at101) / 1000) * 1000) / 1000;
    // The connection's end, or (port-forward) the forwarded stream's end, whichever is first.
    let lost: Promise<{ cause: HoldCause; atMs: number; message?: string }> = session.ended.then((e) => ({ cause: endCause(e), atMs: e.atMs, message: e.message }));
    let reader: EchoReader;
    let writer: Writable;
    try {
      if (exec) {
        if (!exec.stdin || !exec.stdout) throw new Error('exec session without stdin/stdout');
        reader = new EchoReader(exec.stdout);
        writer = exec.stdin;
      } else {
        forwarded = await pf!.openConnection(target.port);
        reader = new EchoReader(forwarded.stream);
        writer = forwarded.stream;
        lost = Promise.race([lost, forwarded.ended.then((e) => ({ cause: endCause(e), atMs: e.atMs, message: e.message }))]);
      }
      state.firstEchoMs = await reader.echo(writer, `${nonce()}\n`, options.echoTimeoutMs, lost);
    } catch (err) {
      const end = await Promise.race([lost, new Promise<undefined>((r) => setTimeout(() => r(undefined), 50))]);
      session.destroy();
      const errorText = forwarded ? await Promise.race([forwarded.errorText, new Promise<string>((r) => setTimeout(() => r(''), 200))]) : '';
      return finish({ ...state, error: `the first echo failed: ${errorText || errorMessage(err).replace(/^[A-Z_]+: /, '')}${end ? ` (connection ended: ${end.cause})` : ''}` });
    }
    let hold: HoldOutcome = { survived: true, disconnectSeconds: null, cause: null };
    if (spec.holdSeconds > 0) {
      options.onProgress?.({ spec, state: 'holding' });
      let holdTimer: NodeJS.Timeout | undefined;
      const held = new Promise<'held'>((r) => (holdTimer = setTimeout(() => r('held'), spec.holdSeconds * 1000)));
      const outcome = await Promise.race([held, lost]);
      clearTimeout(holdTimer);
      if (outcome !== 'held') {
        hold = { survived: false, disconnectSeconds: secondsSince101(outcome.atMs), cause: outcome.cause };
        options.onProgress?.({ spec, state: 'lost', atSeconds: hold.disconnectSeconds ?? undefined });
        session.destroy();
        return finish({ ...state, hold });
      }
      try {
        state.echoMs = await reader.echo(writer, `${nonce()}\n`, options.echoTimeoutMs, lost);
      } catch {
        const end = await Promise.race([lost, new Promise<undefined>((r) => setTimeout(() => r(undefined), 50))]);
        // No close at all, and nothing came back: a black hole.
        hold = end
          ? { survived: false, disconnectSeconds: secondsSince101(end.atMs), cause: end.cause }
          : { survived: false, disconnectSeconds: null, cause: 'echo-timeout' };
        session.destroy();
        return finish({ ...state, hold });
      }
    }
    // Close the way kubectl does; for exec, first collect the exit status after stdin EOF.
    if (exec) {
      exec.stdin!.end();
      const exit = await Promise.race([exec.exit, new Promise<undefined>((r) => setTimeout(() => r(undefined), CLOSE_GRACE_MS))]);
      state.exitCode = exit?.exitCode ?? null;
      if (exit?.exitCode === undefined) state.error = `no exit status after stdin was closed${exit?.error ? `: ${exit.error}` : ''}`;
    } else {
      forwarded?.close();
    }
    session.close();
    options.onProgress?.({ spec, state: 'done' });
    return finish({ ...state, hold });
  })();
  try {
    return await Promise.race([work, deadline]);
  } catch (err) {
    open?.destroy();
    return finish({ ...state, error: `internal error: ${errorMessage(err)}` });
  } finally {
    clearTimeout(deadlineTimer);
  }
}
