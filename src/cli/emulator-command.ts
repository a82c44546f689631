/** `kube-stream-probe emulator`: serves the emulated API server until interrupted. */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { writeEmulatorKubeconfig } from '../../lab/emulator/kubeconfig.js';
import { Emulator } from '../../lab/emulator/server.js';
import { errorCodeOf, errorMessage, probeError } from '../errors.js';
import { integer, oneOf, parse } from './args.js';
import type { CommandIO } from './io.js';
import { parseSize } from '../vocabulary.js';

export const EMULATOR_HELP = `Usage: kube-stream-probe emulator [flags]

Serves an emulated Kubernetes API server on loopback with one pod (probe-target,
container main, port 8080 forwarded to an in-process TCP echo server). Real
kubectl can exec into it and port-forward to it over SPDY and WebSocket. Writes
a kubeconfig for it and prints the path. Runs until Ctrl-C.

Flags:
  --port N                 listen port (default: a free one)
  --host ADDR              listen address (default 127.0.0.1)
  --tls                    serve HTTPS with a self-signed CA (in the kubeconfig)
  --token T                require this bearer token (put in the kubeconfig)
  --write-kubeconfig PATH  where to write the kubeconfig (default: a temp file)
  --server-version V       gitVersion for /version (default v1.33.1)
  --rbac MODEL             pre-1.35 | 1.35: 1.35 needs get AND create for WebSocket upgrades
  --verbs LIST             verbs granted on pods/exec|attach|portforward (default get,create)
  --reject-websocket CODE  answer WebSocket upgrades with this HTTP status
  --reject-spdy CODE       answer SPDY upgrades with this HTTP status
  --idle-cut SECONDS       cut streaming connections idle this long
  --idle-cut-mode fin|rst  how to cut them (default fin)
  --no-upgrade-answer      never answer an upgrade request
  --upgrade-delay MS       wait before writing each 101
  --truncate-tail SIZE     drop the last SIZE bytes of exec output in flight at the exit, still reporting
                           Success (the tail truncation behind kubectl cp's "unexpected EOF"), e.g. 4096
  --stall-after SIZE       stop sending exec output and forwarded bytes after SIZE (the status neither)
  --throttle SIZE          send exec output and forwarded bytes at most SIZE per second, e.g. 1MiB
  --lose-stdin-eof         never pass stdin's end to an exec's process (v5's close signal, SPDY's stdin FIN):
                           it never exits, as behind a kubelet or runtime leg that loses it
  --drop-resize            ignore terminal resizes (WebSocket channel 4, the SPDY resize stream): a TTY keeps
                           the size it started with, as behind a runtime that never applies them
  --echo-port N            forward pod ports to this TCP echo port (another process) instead of its own
  --echo-in-stream         pod ports echo inside the emulator, no TCP hop to a pod (the throughput bench)
  -h, --help               this help
`;

const size = (flag: string, v: string | undefined) => (v === undefined ? undefined : parseSize(flag, v));

export async function emulatorCommand(argv: readonly string[], io: CommandIO): Promise<number> {
  const { values } = parse(argv, {
    port: { type: 'string' },
    host: { type: 'string' },
    tls: { type: 'boolean' },
    token: { type: 'string' },
    'write-kubeconfig': { type: 'string' },
    'server-version': { type: 'string' },
    rbac: { type: 'string' },
    verbs: { type: 'string' },
    'reject-websocket': { type: 'string' },
    'reject-spdy': { type: 'string' },
    'idle-cut': { type: 'string' },
    'idle-cut-mode': { type: 'string' },
    'no-upgrade-answer': { type: 'boolean' },
    'upgrade-delay': { type: 'string' },
    'truncate-tail': { type: 'string' },
    'stall-after': { type: 'string' },
    throttle: { type: 'string' },
    'lose-stdin-eof': { type: 'boolean' },
    'drop-resize': { type: 'boolean' },
    'echo-port': { type: 'string' },
    'echo-in-stream': { type: 'boolean' },
    help: { type: 'boolean', short: 'h' },
  });
  if (values.help) {
    io.out(EMULATOR_HELP);
    return 0;
  }
  const verbs = (values.verbs ?? 'get,create').split(',').filter(Boolean);
  for (const v of verbs) if (v !== 'get' && v !== 'create') throw probeError('USAGE', `--verbs: "${v}" is not get or create`, { field: 'verbs' });
  const emulator = await Emulator.start({
    host: values.host,
    port: integer('port', values.port, 0, 65535),
    tls: values.tls,
    token: values.token,
    serverVersion: values['server-version'],
    externalEchoPort: integer('echo-port', values['echo-port'], 1, 65535),
    echoInStream: values['echo-in-stream'],
    rbac: { model: oneOf('rbac', values.rbac, ['pre-1.35', '1.35'] as const, 'pre-1.35'), verbs: verbs as ('get' | 'create')[] },
    faults: {
      rejectWebSocket: integer('reject-websocket', values['reject-websocket'], 100, 599),
      rejectSpdy: integer('reject-spdy', values['reject-spdy'], 100, 599),
      idleCutSeconds: integer('idle-cut', values['idle-cut'], 1, 86_400),
      idleCutMode: oneOf('idle-cut-mode', values['idle-cut-mode'], ['fin', 'rst'] as const, 'fin'),
      noUpgradeAnswer: values['no-upgrade-answer'],
      upgradeDelayMs: integer('upgrade-delay', values['upgrade-delay'], 0, 600_000),
      truncateTailBytes: size('--truncate-tail', values['truncate-tail']),
      stallAfterBytes: size('--stall-after', values['stall-after']),
      throttleBytesPerSecond: size('--throttle', values.throttle),
      loseStdinEof: values['lose-stdin-eof'],
      dropResize: values['drop-resize'],
    },
  });
  // Our own temp dir is removed when the emulator stops; a path the user chose is left for them.
  const tempDir = values['write-kubeconfig'] ? undefined : mkdtempSync(join(tmpdir(), 'ksp-emulator-'));
  const path = resolve(values['write-kubeconfig'] ?? join(tempDir!, 'kubeconfig'));
  const cleanup = async () => {
    await emulator.stop();
    if (tempDir) rmSync(tempDir, { recursive: true, force: true });
  };
  try {
    writeEmulatorKubeconfig(emulator, path);
  } catch (err) {
    // Nothing may keep running after a startup error.
    await cleanup();
    throw probeError('USAGE', `--write-kubeconfig: ${path} cannot be written (${errorCodeOf(err) ?? errorMessage(err)})`, { field: 'write-kubeconfig' }, err);
  }
  io.out(`emulated API server: ${emulator.url.toString().replace(/\/$/, '')}\nkubeconfig: ${path}\n`);
  const echo = values['echo-in-stream'] ? 'echo in the stream (no TCP hop to the pod); a TCP echo at' : 'echo at';
  io.out(`pod ports ${emulator.podPorts.join(', ')} ${echo} 127.0.0.1:${emulator.echoPort}\n`);
  io.out(`try: kubectl --kubeconfig ${path} exec ${emulator.pod} -- echo hello\n`);
  emulator.on('upgrade', (r) => io.err(`${r.method} ${r.path} ${r.transport} offered=[${r.offered.join(', ')}]\n`));
  await new Promise<void>((resolveStop) => {
    const stop = () => resolveStop();
    if (io.signal?.aborted) stop();
    io.signal?.addEventListener('abort', stop, { once: true });
  });
  await cleanup();
  return 0;
}
