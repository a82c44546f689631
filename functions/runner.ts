/**
 * The in-cluster runner's entry point (container/Dockerfile's `runner` stage, `manifest --runner cronjob`): the
 * CLI's `run` and nothing else. The full CLI also ships the demo and the emulator (the lab), which the image's
 * build context leaves out; `run` is the same code as `kube-stream-probe run`, with the same flags and exit codes.
 */
import { errorMessage, isProbeError } from '../src/errors.js';
import { EXIT } from '../src/cli/exit-codes.js';
import { exitCodeForSignal, processIO, type CommandIO } from '../src/cli/io.js';
import { RUN_HELP, runCommand } from '../src/cli/run-command.js';

/** argv as the CronJob gives it: `run …` (the subcommand is kept so the manifest reads like the CLI). */
export async function runner(argv: readonly string[], io: CommandIO): Promise<number> {
  const [name, ...rest] = argv;
  if (name !== 'run') {
    io.err(`kube-stream-probe runner: only "run" is in this image (got ${name === undefined ? 'nothing' : `"${name}"`})\n\n${RUN_HELP}`);
    return EXIT.USAGE;
  }
  try {
    return await runCommand(rest, io);
  } catch (err) {
    io.err(`kube-stream-probe run: ${isProbeError(err) ? err.message : errorMessage(err)}\n`);
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
