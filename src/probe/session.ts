/**
 * One probe session (docs/architecture.md, "What a session measures"), as
 * five phases: open (connect and upgrade), prove (first echo), hold (idle),
 * prove again (echo after the hold), close (the way kubectl does). Every
 * outcome is classified, and every session returns inside its own deadline
 * with every timer it started cleared.
 */
import { endWords } from '../streaming/types.js';
import { boundedMessage } from '../streaming/channel/exec-status.js';
import { CLOSE_GRACE_MS, END_CAUSE_GRACE_MS, POD_PORT_REFUSED, sessionDeadlineMs, type SessionOptions, type SessionState } from './session-options.js';
import { sessionRedactor, upgradeFailure } from './upgrade-outcome.js';
import { errorCodeOf, errorMessage, probeError, type ProbeError } from '../errors.js';
import { systemClock, unlessAborted, withTimeout, type Clock } from '../timers.js';
import { nonce } from './echo.js';
import { runTransfer, transferLimitMs } from './transfer.js';
import { TICK, writeTicks } from './hold-shape.js';
import { HoldActivity } from './hold-activity.js';
import { WINDOW_MS } from './start-pacer.js';
import { SIZE_LINE, TERMINAL_SIZES, TTY_EOF, echoedLine, seenSize, sizeMismatch, type TerminalCheck, type TerminalSize } from './terminal.js';
import { EvidenceRecorder } from './evidence.js';
import { Finished, openChannel, type Channel, type Lost, type Mutable } from './session-channel.js';
import { HOLD_SHAPE_PERIOD_SECONDS } from '../vocabulary.js';
import { ExecSubprotocol } from '../streaming/channel/codec.js';
import type { ClusterTarget, HoldOutcome, SessionResult, SessionSpec } from './types.js';

const r3 = (ms: number) => Math.round(ms * 1000) / 1000;

class SessionRun {
  private readonly clock: Clock;
  private readonly t0: number;
  private readonly scrub: (t: string) => string;
  private channel: Channel | undefined;
  private readonly state: Mutable<SessionResult> = {};
  private readonly activity: HoldActivity;
  /** An input-shaped hold's tick bytes, which the pod's `wc -c` must count after the hold. */
  private ticksWritten = 0;
  /** When the 101 came, on the session's clock (the hold's evidence is dated from it). */
  private upgradedAt: number | undefined;
  /** Set when the run was interrupted: a connection that opens afterwards is closed at once. */
  private stopped = false;

  constructor(
    private readonly spec: SessionSpec,
    private readonly target: ClusterTarget,
    private readonly options: SessionOptions,
  ) {
    this.clock = options.clock ?? systemClock;
    this.t0 = this.clock.now();
    this.scrub = sessionRedactor(target);
    this.activity = new HoldActivity(this.clock);
  }

  async run(): Promise<SessionResult> {
    try {
      try {
        await this.open();
        await this.prove();
      } finally {
        this.options.onStarted?.();
        this.options.holdTurn?.arrive();
      }
      if (this.spec.transferBytes) await this.transfer(this.spec.transferBytes);
      else {
        await this.hold();
        await this.proveAgain();
      }
      await this.close();
      this.progress('done');
      return this.finish({});
    } catch (err) {
      this.activity.stop();
      this.channel?.session.destroy();
      if (err instanceof Finished) return this.finish(err.partial);
      return this.finish({ error: `internal error: ${errorMessage(err)}`, errorCode: 'INTERNAL' });
    }
  }

  /**
   * The result when the run is interrupted, whatever phase the session was in: the session is closed as
   * kubectl closes it on Ctrl-C (a WebSocket close frame, or the SPDY streams and connection closed), and
   * what it had held is kept.
   */
  interrupted(signal: string): SessionResult {
    this.stopped = true;
    const started = this.activity.startedAt;
    const heldSeconds = started === undefined ? null : Math.round((this.clock.now() - started) / 100) / 10;
    this.activity.stop();
    this.channel?.session.close();
    const held = this.spec.transferBytes
      ? `during its ${this.spec.transferBytes}-byte transfer`
      : heldSeconds === null
        ? 'before its hold began'
        : `after holding ${heldSeconds} s of its ${this.spec.holdSeconds} s hold`;
    const err = probeError('INTERRUPTED', `interrupted (${signal}) ${held}`, { signal, heldSeconds });
    const upgraded = this.state.upgrade?.ok === true;
    return this.finish({
      hold:
        upgraded && this.spec.holdSeconds > 0 && this.state.hold === undefined
          ? { survived: null, disconnectSeconds: null, cause: 'interrupted', heldSeconds }
          : undefined,
      upgrade: this.state.upgrade ?? upgradeFailure(err),
      error: err.message,
      errorCode: err.code,
    });
  }

  /** The result at the deadline, whatever phase the session was in. */
  atDeadline(deadlineMs: number): SessionResult {
    this.activity.stop();
    this.channel?.session.destroy();
    const upgraded = this.state.upgrade?.ok === true;
    const err = probeError('DEADLINE', `the session did not finish within its deadline of ${Math.round(deadlineMs / 1000)} s`, { deadlineMs });
    return this.finish({
      hold: upgraded ? { survived: false, disconnectSeconds: null, cause: 'deadline' } : undefined,
      upgrade: this.state.upgrade ?? upgradeFailure(err),
      error: err.message,
      errorCode: err.code,
    });
  }

  // ---- the phases ----------------------------------------------------------------

  /** Connect, upgrade, and (port-forward) open the one forwarded connection. */
  private async open(): Promise<void> {
    this.progress('connecting');
    this.channel = await openChannel(this.spec, this.target, this.options, {
      scrub: this.scrub,
      clock: this.clock,
      stopped: () => this.stopped,
      upgraded: (upgrade, subprotocol) => {
        this.upgradedAt = this.clock.now();
        this.state.upgrade = upgrade;
        this.state.subprotocol = subprotocol;
      },
    });
  }

  /** The first echo, right after the upgrade. */
  private async prove(): Promise<void> {
    try {
      this.state.firstEchoMs = await this.echo(TERMINAL_SIZES.start);
    } catch (err) {
      const c = this.channel!;
      const end = await withTimeout(c.lost, END_CAUSE_GRACE_MS, this.clock);
      c.session.destroy();
      // A port-forward to a closed port fails here, and the pod's side says why on the error stream; any other
      // error there (or an exec failure status right after the 101) is the path to the kubelet or its runtime.
      const errorText = c.forwarded ? ((await withTimeout(c.forwarded.errorText, END_CAUSE_GRACE_MS, this.clock)) ?? '').trim() : '';
      const exit = c.exec ? await withTimeout(c.exec.exit, END_CAUSE_GRACE_MS, this.clock) : undefined;
      // A failure status, or an error stream that is not one a client can read (too large, not a Status): the server's words.
      const said = exit?.error?.code === 'EXEC_FAILED' || exit?.error?.code === 'EXEC_STATUS' ? exit.error.message : '';
      const text = this.scrub(errorText || said);
      const e: ProbeError = !text
        ? (err as ProbeError)
        : errorText && POD_PORT_REFUSED.test(errorText)
          ? probeError('PORTFORWARD_ERROR', boundedMessage(text), { port: this.target.port, text: text.slice(0, 300) })
          : probeError('STREAM_ERROR', `the upgrade succeeded, then the server reported: ${text.slice(0, 300)}`, {
              operation: this.spec.operation,
              text: text.slice(0, 300),
            });
      const ended = end && e.code !== 'ECHO_CONNECTION_ENDED' ? ` (connection ended: ${endWords(end)})` : '';
      throw new Finished({ error: `the first echo failed: ${this.scrub(e.message)}${ended}`, errorCode: e.code });
    }
    this.checkTerminal('start');
  }

  /** A terminal session whose process reads another size than was sent fails with TTY_SIZE_LOST (terminal.ts). */
  private checkTerminal(when: 'start' | 'resize'): void {
    const t = this.state.terminal;
    const check = when === 'start' ? t?.start : t?.resized;
    const lost = check && sizeMismatch(check, when, this.spec.operation === 'attach');
    if (lost) throw new Finished({ error: lost.message, errorCode: lost.code });
  }

  /** The `kubectl cp` path: SIZE bytes through and back (transfer.ts); exec's exit status is part of it. */
  private async transfer(bytes: number): Promise<void> {
    this.progress('transferring');
    const c = this.channel!;
    const { outcome, failure } = await runTransfer(
      { writer: c.writer, reader: c.exec ? c.exec.stdout! : c.forwarded!.stream, exit: c.exec?.exit, lost: c.lost },
      { bytes, clock: this.clock, ...(this.spec.transferShape ? { shape: this.spec.transferShape } : {}) },
    );
    this.state.transfer = outcome;
    if (c.exec) this.state.exitCode = outcome.exitCode;
    if (failure) {
      c.session.destroy();
      throw new Finished({ error: `the transfer of ${bytes} bytes failed: ${this.scrub(failure.message)}`, errorCode: failure.code });
    }
  }

  /** Idle for holdSeconds, sending nothing but the keepalive mode's pings. */
  private async hold(): Promise<void> {
    const holdSeconds = this.spec.holdSeconds;
    // Sharing the process: the hold (and a terminal's resize, even after none) begins once no other session of its
    // group will echo before the end (shared-process.ts).
    await this.options.holdTurn?.ready;
    if (holdSeconds === 0) {
      this.state.hold = { survived: true, disconnectSeconds: null, cause: null };
      return;
    }
    this.progress('holding');
    const c = this.channel!;
    const upgradedAt = this.upgradedAt ?? this.clock.now();
    const since101 = (at: number) => Math.round((at - upgradedAt) / 100) / 10;
    // A shaped or echoing hold moves data by design: its quiet gaps say nothing about a device's idle timer.
    this.activity.start(c.session, since101, !this.spec.holdShape && !this.spec.echoEverySeconds);
    const ticks = this.spec.holdShape === 'input' ? writeTicks(c.writer, this.clock) : undefined;
    const lost = this.spec.echoEverySeconds
      ? await this.echoing(this.spec.echoEverySeconds, since101)
      : await withTimeout(c.lost, holdSeconds * 1000, this.clock);
    ticks?.stop();
    this.ticksWritten = ticks?.written() ?? 0;
    if (lost) {
      const hold = this.lostAt(lost);
      this.progress('lost', hold.disconnectSeconds ?? undefined);
      throw new Finished({ hold });
    }
  }

  /**
   * The activity check's hold: an echo every `everySeconds` until the hold is over. The first one that fails ends the
   * hold as lost: at the connection's end when one came, else at that echo (an echo-timeout, dated since the 101).
   */
  private async echoing(everySeconds: number, since101: (at: number) => number): Promise<Lost | undefined> {
    const c = this.channel!;
    const end = this.clock.now() + this.spec.holdSeconds * 1000;
    while (this.clock.now() + everySeconds * 1000 <= end) {
      const lost = await withTimeout(c.lost, everySeconds * 1000, this.clock);
      if (lost) return lost;
      const sentAt = this.clock.now();
      try {
        await this.echo();
      } catch {
        const gone = await withTimeout(c.lost, END_CAUSE_GRACE_MS, this.clock);
        if (gone) return gone;
        this.activity.stop();
        const hold: HoldOutcome = { survived: false, disconnectSeconds: since101(sentAt), cause: 'echo-timeout' };
        this.progress('lost', hold.disconnectSeconds ?? undefined);
        throw new Finished({ hold });
      }
    }
    return withTimeout(c.lost, Math.max(0, end - this.clock.now()), this.clock);
  }

  /** The same echo after the hold; nothing at all back (and no close) is a black hole. */
  private async proveAgain(): Promise<void> {
    const tty = this.spec.holdShape === 'tty';
    // A terminal session is resized even after a hold of 0 s: kubectl sends a change whenever the window changes.
    if (this.spec.holdSeconds === 0 && !tty) return;
    const c = this.channel!;
    try {
      if (this.spec.holdShape === 'input') {
        // Every tick must have arrived: `wc -c` prints their count once stdin is closed.
        c.exec!.stdin!.end();
        this.state.echoMs = await c.reader.echo(undefined, `${this.ticksWritten}\n`, this.options.echoTimeoutMs, c.lost);
      } else if (tty) {
        c.exec!.resize(TERMINAL_SIZES.resized.width, TERMINAL_SIZES.resized.height);
        this.state.echoMs = await this.echo(TERMINAL_SIZES.resized);
      } else this.state.echoMs = await this.echo();
      if (this.spec.holdSeconds > 0) {
        const quiet = this.activity.evidence();
        this.state.hold = { survived: true, disconnectSeconds: null, cause: null, ...(quiet ? { quiet } : {}) };
      }
    } catch (err) {
      const end = await withTimeout(c.lost, END_CAUSE_GRACE_MS, this.clock);
      const quiet = end ? undefined : this.activity.evidence();
      const hold: HoldOutcome = end ? this.lostAt(end) : { survived: false, disconnectSeconds: null, cause: 'echo-timeout', ...(quiet ? { quiet } : {}) };
      this.progress('lost', hold.disconnectSeconds ?? undefined);
      throw new Finished({ hold, ...(end ? {} : { error: `after the hold: ${errorMessage(err)}`, errorCode: errorCodeOf(err) }) });
    }
    if (tty) this.checkTerminal('resize');
  }

  /** Close the way kubectl does; for exec, first collect the exit status after stdin EOF. */
  private async close(): Promise<void> {
    const c = this.channel!;
    if (c.exec && (this.state.transfer || this.spec.holdShape === 'output')) {
      // The transfer ended stdin and collected the exit status; an output-shaped pod writes until it is stopped.
    } else if (c.exec && this.spec.keepalive === 'sdk' && c.session.subprotocol !== ExecSubprotocol.V5) {
      // Below v5 stdin cannot be ended: an SDK client closes the WebSocket instead (client-node's handleStandardInput),
      // and no exit status comes.
    } else if (c.exec && this.spec.holdShape === 'tty' && this.spec.operation === 'attach') {
      // Leaving a terminal attach: the container's one process must go on (Ctrl-D would end it): close, as a detach.
    } else if (c.exec) {
      // A terminal ends its input as a user does, Ctrl-D on an empty line (a pty's VEOF: the read loop ends, the shell
      // exits); a pty may never see the stream's end. Then stdin is closed as kubectl closes it.
      if (this.spec.holdShape === 'tty') c.exec.stdin!.write(TTY_EOF);
      c.exec.stdin!.end();
      const exit = await withTimeout(c.exec.exit, CLOSE_GRACE_MS, this.clock);
      this.state.exitCode = exit?.exitCode ?? null;
      if (exit?.exitCode === undefined) {
        const err =
          exit?.error ?? probeError('EXEC_NO_STATUS', `no exit status within ${CLOSE_GRACE_MS / 1000} s after stdin was closed`, { cause: 'timeout' });
        this.state.error = `no exit status after stdin was closed: ${this.scrub(err.message)}`;
        this.state.errorCode = err.code;
      }
    } else {
      c.forwarded?.close();
    }
    c.session.close();
  }

  // ---- helpers --------------------------------------------------------------------

  /** The echo; in a terminal session (`sent`: the size sent last) also the size the process reads, kept in the result. */
  private async echo(sent?: TerminalSize): Promise<number> {
    const c = this.channel!;
    if (this.spec.holdShape === 'tty' && sent) {
      const n = nonce();
      const r = await c.reader.echoThen(c.writer, `${n}\n`, { needle: echoedLine(n), then: SIZE_LINE }, this.options.echoTimeoutMs, c.lost);
      const check: TerminalCheck = { sent, seen: seenSize(r.match) };
      this.state.terminal = sent === TERMINAL_SIZES.start ? { start: check } : { ...this.state.terminal!, resized: check };
      return r.ms;
    }
    // An output-shaped hold is proven by the pod's own ticks: one may take a whole period to come.
    if (this.spec.holdShape === 'output') return c.reader.echo(undefined, TICK, this.options.echoTimeoutMs + HOLD_SHAPE_PERIOD_SECONDS * 1000, c.lost);
    return c.reader.echo(c.writer, `${nonce()}\n`, this.options.echoTimeoutMs, c.lost);
  }

  /** The hold's outcome for a loss seen at `end.atMs`. */
  private lostAt(end: Lost): HoldOutcome {
    return this.activity.lostAt(end, this.secondsSince101(end.atMs));
  }

  private secondsSince101(atMs: number): number {
    return r3((atMs - this.channel!.session.timing.at101) / 1000);
  }

  private progress(state: SessionState, atSeconds?: number): void {
    this.options.onProgress?.({ spec: this.spec, state, ...(atSeconds !== undefined ? { atSeconds } : {}) });
  }

  private finish(r: Mutable<SessionResult>): SessionResult {
    const s = { ...this.state, ...r };
    const upgrade = s.upgrade ?? upgradeFailure(probeError('INTERNAL', 'the session ended before its upgrade was tried', { where: 'probe/session' }));
    const hold = s.hold ?? { survived: null, disconnectSeconds: null, cause: null };
    const echoed = s.firstEchoMs != null && (this.spec.holdSeconds === 0 || s.echoMs != null);
    return {
      ...this.spec,
      subprotocol: s.subprotocol ?? null,
      upgrade,
      firstEchoMs: s.firstEchoMs ?? null,
      hold,
      echoMs: s.echoMs ?? null,
      exitCode: s.exitCode ?? null,
      ...(this.channel?.stderrBytes?.() ? { stderrBytes: this.channel.stderrBytes() } : {}),
      ...(this.channel?.session.streamsRefused?.() ? { streamsRefused: this.channel.session.streamsRefused() } : {}),
      ...(s.transfer ? { transfer: s.transfer } : {}),
      ...(s.terminal ? { terminal: s.terminal } : {}),
      ok: upgrade.ok && echoed && hold.survived !== false && !s.error && (s.transfer === undefined || s.transfer.end === 'complete'),
      error: s.error ?? null,
      errorCode: s.errorCode ?? null,
      durationMs: Math.round(this.clock.now() - this.t0),
    };
  }
}

export async function runSession(spec: SessionSpec, target: ClusterTarget, options: SessionOptions): Promise<SessionResult> {
  // Its turn first (start-pacer.ts): the session's own deadline starts when it dials, not while it waits.
  const turn = options.pacer ? await options.pacer.turn(options.signal) : undefined;
  try {
    const result = await runStarted(spec, target, turn ? { ...options, onStarted: turn.done } : options);
    return turn?.waitedMs ? { ...result, startWaitMs: turn.waitedMs } : result;
  } finally {
    turn?.done();
  }
}

async function runStarted(spec: SessionSpec, given: ClusterTarget, options: SessionOptions): Promise<SessionResult> {
  // The session's own wire log: what the wire showed is kept when it fails (evidence.ts), and still reaches `--wire-log`.
  const recorder = new EvidenceRecorder(options.clock ?? systemClock, sessionRedactor(given), given.connection.wireLog);
  const target = { ...given, connection: { ...given.connection, wireLog: recorder.log } };
  const result = await runGuarded(new SessionRun(spec, target, options), spec, target, options);
  return result.ok ? result : { ...result, wire: recorder.trace() };
}

/**
 * How long one session may take, from its dial: its hold and phases (sessionDeadlineMs), a transfer's own limit, a
 * shaped hold's proofs (each may wait a period for the pod's tick), and, when it waits for its group's starts
 * (holdTurn), its turn at the pacer and a whole start. The runner's retry asks it whether a second attempt fits.
 */
export function sessionLimitMs(spec: SessionSpec, target: ClusterTarget, options: Pick<SessionOptions, 'echoTimeoutMs' | 'holdTurn'>): number {
  return (
    sessionDeadlineMs(spec.holdSeconds, target.connection, options) +
    (spec.transferBytes ? transferLimitMs(spec.transferBytes) : 0) +
    (spec.holdShape ? 2 * HOLD_SHAPE_PERIOD_SECONDS * 1000 : 0) +
    (options.holdTurn ? WINDOW_MS + sessionDeadlineMs(0, target.connection, options) : 0)
  );
}

async function runGuarded(run: SessionRun, spec: SessionSpec, target: ClusterTarget, options: SessionOptions): Promise<SessionResult> {
  const deadlineMs = sessionLimitMs(spec, target, options);
  const outcome = await withTimeout(unlessAborted(run.run(), options.signal, 'aborted' as const), deadlineMs, options.clock);
  if (outcome === 'aborted') return run.interrupted(signalName(options.signal!));
  return outcome ?? run.atDeadline(deadlineMs);
}

/** The signal's name from its abort reason (the CLI aborts with "SIGINT" / "SIGTERM"). */
export function signalName(signal: AbortSignal): string {
  return typeof signal.reason === 'string' ? signal.reason : 'aborted';
}

export {
  CLOSE_GRACE_MS,
  DEFAULT_ECHO_TIMEOUT_MS,
  DEFAULT_STREAM_REPLY_TIMEOUT_MS,
  sessionDeadlineMs,
  type SessionOptions,
  type SessionProgress,
  type SessionState,
} from './session-options.js';
