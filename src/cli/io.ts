import { setMaxListeners } from 'node:events';
/** Where a command writes, injected so tests can capture it. */
export interface CommandIO {
  out(text: string): void;
  err(text: string): void;
  /** True when stderr is a terminal (live progress is shown only then). */
  readonly interactive: boolean;
  readonly env: NodeJS.ProcessEnv;
  /** Aborted on SIGINT / SIGTERM, with the signal's name as its reason. */
  readonly signal?: AbortSignal;
}

/** How long a command may take to wind down after SIGINT / SIGTERM before the process exits anyway. */
export const INTERRUPT_GRACE_MS = 2_000;

/** The shell's exit status for a process ended by a signal: 128 + its number (SIGINT 2 → 130, SIGTERM 15 → 143). */
export function exitCodeForSignal(signal: string): number {
  return signal === 'SIGTERM' ? 143 : 130;
}

/**
 * The real process's streams and signals. The first SIGINT or SIGTERM aborts `signal` (a command that
 * holds sessions stops holding, prints what it measured and returns); if the command has not finished
 * within INTERRUPT_GRACE_MS, or on a second signal, the process exits with 130 / 143 anyway.
 */
export function processIO(): CommandIO {
  const controller = new AbortController();
  // Every session of a run listens to it (dozens with --per-node): not a leak.
  setMaxListeners(0, controller.signal);
  const onSignal = (signal: NodeJS.Signals) => {
    if (controller.signal.aborted) process.exit(exitCodeForSignal(String(controller.signal.reason)));
    controller.abort(signal);
    setTimeout(() => process.exit(exitCodeForSignal(signal)), INTERRUPT_GRACE_MS).unref();
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  return {
    out: (t) => void process.stdout.write(t),
    err: (t) => void process.stderr.write(t),
    interactive: process.stderr.isTTY === true,
    env: process.env,
    signal: controller.signal,
  };
}
