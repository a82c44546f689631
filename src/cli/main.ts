#!/usr/bin/env node
/**
 * kube-stream-probe: finds the network hop that breaks kubectl exec and
 * port-forward over SPDY/3.1 and WebSocket. Exit codes: exit-codes.ts.
 */
import { terminalSafe } from '../text.js';
import { errorMessage, isProbeError } from '../errors.js';
import { VERSION } from '../version.js';
import { auditCommand, AUDIT_HELP } from './audit-command.js';
import { costCommand, COST_HELP } from './cost-command.js';
import { demoCommand, DEMO_HELP } from './demo-command.js';
import { emulatorCommand, EMULATOR_HELP } from './emulator-command.js';
import { invokeCommand, INVOKE_HELP } from './invoke-command.js';
import { EXIT, EXIT_CODES_HELP } from './exit-codes.js';
import { exitCodeForSignal, processIO, type CommandIO } from './io.js';
import { manifestCommand, MANIFEST_HELP } from './manifest-command.js';
import { runCommand, RUN_HELP } from './run-command.js';
import { serveCommand, SERVE_HELP } from './serve-command.js';

type Command = { readonly summary: string; readonly run: (argv: readonly string[], io: CommandIO) => Promise<number>; readonly help: string };

const COMMANDS: Readonly<Record<string, Command>> = {
  demo: { summary: 'the embedded lab: emulated API server and simulated hops, full matrix, verdict table (npm start)', run: demoCommand, help: DEMO_HELP },
  run: { summary: 'probe a real cluster from a kubeconfig: both transports, idle holds, A/B verdicts', run: runCommand, help: RUN_HELP },
  audit: {
    summary: "the pre-upgrade audit: gates, the server's streaming counters, RBAC, local clients, toggles in automation, then the A/B",
    run: auditCommand,
    help: AUDIT_HELP,
  },
  manifest: { summary: 'print YAML for the probe target pod and its least-privilege RBAC', run: manifestCommand, help: MANIFEST_HELP },
  invoke: {
    summary: 'invoke the deployed probe in every location and print one combined verdict table',
    run: (a, io) => invokeCommand(a, io),
    help: INVOKE_HELP,
  },
  cost: { summary: "what each location of the deployment config costs a month (AWS list prices), before it's deployed", run: costCommand, help: COST_HELP },
  serve: {
    summary: "a Prometheus exporter in blackbox_exporter's shape: /probe?target=CONTEXT&hold=65s runs the A/B per scrape",
    run: (a, io) => serveCommand(a, io),
    help: SERVE_HELP,
  },
  emulator: { summary: 'serve the emulated API server (with fault switches) for kubectl or `run`', run: emulatorCommand, help: EMULATOR_HELP },
};

export function usage(): string {
  const width = Math.max(...Object.keys(COMMANDS).map((c) => c.length));
  return [
    'Usage: kube-stream-probe <command> [flags]',
    '',
    'Finds the network hop that breaks kubectl exec and port-forward, over SPDY/3.1 and WebSocket.',
    '',
    'Commands:',
    ...Object.entries(COMMANDS).map(([name, c]) => `  ${name.padEnd(width)}  ${c.summary}`),
    '',
    'Run `kube-stream-probe <command> --help` for its flags; `kube-stream-probe --version` for the version.',
    '',
    EXIT_CODES_HELP,
    '',
  ].join('\n');
}

export async function main(argv: readonly string[], io: CommandIO): Promise<number> {
  const [name, ...rest] = argv;
  if (name === '--version' || name === '-V' || name === 'version') {
    io.out(`kube-stream-probe ${VERSION}\n`);
    return EXIT.CLEAN;
  }
  if (name === undefined || name === '-h' || name === '--help' || name === 'help') {
    io.out(usage());
    return name === undefined ? EXIT.USAGE : EXIT.CLEAN;
  }
  const command = COMMANDS[name];
  if (!command) {
    io.err(`kube-stream-probe: unknown command "${name}"\n\n${usage()}`);
    return EXIT.USAGE;
  }
  try {
    return await command.run(rest, io);
  } catch (err) {
    io.err(`kube-stream-probe ${name}: ${terminalSafe(isProbeError(err) ? err.message : errorMessage(err))}\n`);
    if (isProbeError(err, 'USAGE')) io.err(`Run \`kube-stream-probe ${name} --help\` for usage.\n`);
    return EXIT.USAGE;
  }
}

const isEntry = process.argv[1] !== undefined && /(?:main\.[cm]?[jt]s|cli\.m?js|kube-stream-probe(?:\.js)?)$/.test(process.argv[1]);
if (isEntry) {
  const io = processIO();
  main(process.argv.slice(2), io).then(
    (code) => {
      // Interrupted: what was measured is printed; sockets given up on must not keep the process alive.
      if (io.signal?.aborted) process.exit(exitCodeForSignal(String(io.signal.reason)));
      process.exitCode = code;
    },
    (err) => {
      process.stderr.write(`kube-stream-probe: ${errorMessage(err)}\n`);
      process.exitCode = EXIT.USAGE;
    },
  );
}
