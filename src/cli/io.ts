/** Where a command writes, injected so tests can capture it. */
export interface CommandIO {
  out(text: string): void;
  err(text: string): void;
  /** True when stderr is a terminal (live progress is shown only then). */
  readonly interactive: boolean;
  readonly env: NodeJS.ProcessEnv;
  readonly signal?: AbortSignal;
}

export function processIO(): CommandIO {
  return {
    out: (t) => void process.stdout.write(t),
    err: (t) => void process.stderr.write(t),
    interactive: process.stderr.isTTY === true,
    env: process.env,
  };
}
