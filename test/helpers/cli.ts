/** Runs the CLI's main() in-process with captured output. */
import { main } from '../../src/cli/main.js';
import type { CommandIO } from '../../src/cli/io.js';

export interface CliRun {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

export async function cli(argv: readonly string[], env: NodeJS.ProcessEnv = {}): Promise<CliRun> {
  let stdout = '';
  let stderr = '';
  const io: CommandIO = {
    out: (t) => void (stdout += t),
    err: (t) => void (stderr += t),
    interactive: false,
    env: { PATH: process.env.PATH, HOME: '/nonexistent', ...env },
  };
  const code = await main(argv, io);
  return { code, stdout, stderr };
}
