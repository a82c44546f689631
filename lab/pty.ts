/**
 * A program on a pty of its own (util-linux `script`), sized as a terminal window is: how the lab runs what a user
 * runs at a terminal (kubectl exec -it, attach -it), and a real shell on a real pty (the TTY check's script).
 */
import { execFileSync, spawn } from 'node:child_process';
import { readlinkSync } from 'node:fs';

export interface TerminalResult {
  readonly code: number | null;
  /** What the terminal showed. */
  readonly stdout: string;
  readonly stderr: string;
}

export interface InTerminal {
  /** Types into the terminal. */
  type(text: string): void;
  /** Resizes the terminal as a window change does (TIOCSWINSZ on the program's pty: the kernel sends it SIGWINCH). */
  resize(size: { cols: number; rows: number }): void;
  /** Ends the program (SIGTERM), as closing its window does. */
  stop(): void;
  /** What the terminal showed, and the exit code, once the program exits (or is killed at the timeout). */
  readonly done: Promise<TerminalResult>;
}

/** Starts `argv` on a pty of `cols`×`rows` (stty sets it before the program starts, so it reads that size first). */
export function inTerminal(
  argv: readonly string[],
  size: { cols: number; rows: number },
  env: NodeJS.ProcessEnv = process.env,
  timeoutMs = 30_000,
): InTerminal {
  const quote = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;
  const command = `stty cols ${size.cols} rows ${size.rows}; exec ${argv.map(quote).join(' ')}`;
  const child = spawn('script', ['-qec', command, '/dev/null'], { env, stdio: ['pipe', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (c: Buffer) => (stdout += c.toString('latin1')));
  child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
  const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
  const done = new Promise<TerminalResult>((resolve) =>
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    }),
  );
  // The program is script's child (its shell exec'd it): its stdin is the pty.
  const program = () =>
    Number(
      execFileSync('pgrep', ['-P', String(child.pid)], { encoding: 'utf8' })
        .trim()
        .split('\n')[0],
    );
  const resize = ({ cols, rows }: { cols: number; rows: number }) => {
    execFileSync('stty', ['-F', readlinkSync(`/proc/${program()}/fd/0`), 'cols', String(cols), 'rows', String(rows)]);
  };
  const stop = () => {
    try {
      process.kill(program(), 'SIGTERM');
    } catch {
      child.kill('SIGKILL'); // already gone, or never started: script itself
    }
  };
  return { type: (text) => child.stdin.write(text), resize, stop, done };
}
