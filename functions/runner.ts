/**
 * The in-cluster entry point (container/Dockerfile's `runner` and `serve` stages, `manifest --runner cronjob` and
 * `manifest --runner serve`): the CLI's `run` and `serve` and nothing else. The full CLI also ships the demo and
 * the emulator (the lab), which the image's build context leaves out; both are the same code as
 * `kube-stream-probe run` / `serve`, with the same flags and exit codes.
 */
import { errorMessage, isProbeError } from '../src/errors.js';
import { EXIT } from '../src/cli/exit-codes.js';
import { exitCodeForSignal, processIO, type CommandIO } from '../src/cli/io.js';
import { RUN_HELP, runCommand } from '../src/cli/run-command.js';
import { serveCommand } from '../src/cli/serve-command.js';

const COMMANDS = { run: runCommand, serve: serveCommand } as const;

/** argv as the CronJob or Deployment gives it: `run …` or `serve …` (the subcommand is kept so the manifest reads like the CLI). */
export async function runner(argv: readonly string[], io: CommandIO): Promise<number> {
  const [name, ...rest] = argv;
  if (name !== 'run' && name !== 'serve') {
    io.err(`kube-stream-probe runner: only "run" and "serve" are in this image (got ${name === undefined ? 'nothing' : `"${name}"`})\n\n${RUN_HELP}`);
    return EXIT.USAGE;
  }
  try {
    return await COMMANDS[name](rest, io);
  } catch (err) {
    io.err(`kube-stream-probe ${name}: ${isProbeError(err) ? err.message : errorMessage(err)}\n`);
    return EXIT.USAGE;
  }
}

if (process.argv[1] !== undefined && /runner\.m?[jt]s$/.test(process.argv[1])) {
  const io = processIO();
  runner(process.argv.slice(2), io).then(
    (code) => {
      if (io.signal?.aborted) process.exit(exitCodeForSignal(String(io.signal.reason)));
      process.exitCode = code;
    },
    (err) => {
      process.stderr.write(`kube-stream-probe run: ${errorMessage(err)}\n`);
      process.exitCode = EXIT.USAGE;
    },
  );
}
