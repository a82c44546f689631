/**
 * In-process stand-ins for the commands of the emulated pod (README, "The
 * emulator"): cat [FILE], echo, sleep, true, false, exit, test -d/-f/-e,
 * ls, mkdir -p, pwd, hostname, tar cf - / tar xf - -C DIR (what `kubectl cp`
 * runs, on the pod's in-memory filesystem), head -n N and wc -c on stdin, exec,
 * sh -c '<script>' (with `while true; do …; done`) and an
 * interactive sh (echo, prompt and line editing under a TTY, so `kubectl
 * exec -it -- sh` can be used and left with `exit` or Ctrl-D).
 */
import { PodFilesystem } from './pod-fs.js';
import { say, sleep, type ProcessIO } from './process-io.js';
import { interactiveShell, parseScript, runScript } from './shell.js';
import { cat, headLines, tar, wcBytes, zeros } from './stdin-commands.js';

export type { ProcessIO } from './process-io.js';
import { mainProcessOf } from './main-process.js';
import { TTY_SIZE_SCRIPT } from '../../src/probe/hold-shape.js';
import { sizeLoop, type Terminal } from './terminal.js';
export { parseScript } from './shell.js';

/** attach joins the container's main process, one per pod, shared by every attached client (main-process.ts). */
export const ATTACH_MAIN = '__attach-main__';

export async function runCommand(argv: readonly string[], io: ProcessIO): Promise<number> {
  const [cmd, ...args] = argv;
  const fs = io.fs ?? new PodFilesystem();
  switch (cmd) {
    case undefined:
      io.stderr(Buffer.from('no command given\n'));
      return 126;
    case ATTACH_MAIN:
      // The container's one main process, shared by every attached client (main-process.ts).
      return mainProcessOf(fs, args[0]).attach(io);
    case 'stty':
      // busybox stty size: "ROWS COLS" of the terminal on stdin.
      if (args.join(' ') !== 'size') return (say(io.stderr, 'stty: only stty size is emulated\n'), 1);
      if (!io.tty || !io.terminal) return (say(io.stderr, 'stty: standard input: Not a tty\n'), 1);
      say(io.stdout, `${io.terminal.height} ${io.terminal.width}\n`);
      return 0;
    case 'cat':
      if (args.length === 0) return cat(io);
      for (const f of args) {
        const data = fs.read(f);
        if (!data) {
          say(io.stderr, `cat: can't open '${f}': ${fs.stat(f) ? 'Is a directory' : 'No such file or directory'}\n`);
          return 1;
        }
        io.stdout(data);
      }
      return 0;
    case 'test':
    case '[': {
      const [flag, path] = args;
      const e = path === undefined ? undefined : fs.stat(path);
      if (flag === '-d') return e?.type === 'dir' ? 0 : 1;
      if (flag === '-f') return e?.type === 'file' ? 0 : 1;
      if (flag === '-e') return e ? 0 : 1;
      return 2;
    }
    case 'ls': {
      const targets = args.filter((a) => !a.startsWith('-'));
      let code = 0;
      for (const t of targets.length ? targets : ['/']) {
        const e = fs.stat(t);
        if (!e) {
          say(io.stderr, `ls: ${t}: No such file or directory\n`);
          code = 1;
        } else
          say(
            io.stdout,
            e.type === 'dir'
              ? fs
                  .list(t)
                  .map((n) => `${n}\n`)
                  .join('')
              : `${t}\n`,
          );
      }
      return code;
    }
    case 'mkdir':
      for (const d of args.filter((a) => !a.startsWith('-'))) fs.mkdirp(d);
      return 0;
    case 'pwd':
      say(io.stdout, '/\n');
      return 0;
    case 'hostname':
      io.stdout(fs.read('/etc/hostname') ?? Buffer.from('probe-target\n'));
      return 0;
    case 'tar':
      return tar(args, io, fs);
    case 'head':
      // head -c N /dev/zero: a download transfer's N zero bytes (probe/transfer.ts transferCommand).
      if (args[0] === '-c' && args.length === 3 && args[2] === '/dev/zero') return zeros(Number(args[1]), io);
      if (args[0] !== '-n' || args.length !== 2) return (say(io.stderr, 'head: only head -n N on stdin and head -c N /dev/zero are emulated\n'), 1);
      return headLines(Number(args[1]), io);
    case 'wc':
      if (args.join(' ') !== '-c') return (say(io.stderr, 'wc: only wc -c on stdin is emulated\n'), 1);
      return wcBytes(io);
    case 'exec':
      return runCommand(args, { ...io, fs });
    case 'echo':
      io.stdout(Buffer.from(`${args.join(' ')}\n`));
      return 0;
    case 'true':
      return 0;
    case 'false':
      return 1;
    case 'sleep': {
      const seconds = Number(args[0] ?? '0');
      await sleep(Number.isFinite(seconds) ? seconds * 1000 : 0, io.signal);
      return 0;
    }
    case 'exit':
      return Number(args[0] ?? '0') & 0xff;
    case 'sh':
    case '/bin/sh':
    case 'bash': {
      if (args[0] !== '-c' || args[1] === undefined) return interactiveShell(io, fs, runCommand);
      // The TTY check's loop on a pty (terminal.ts sizeLoop does the line discipline's part as well).
      if (args[1] === TTY_SIZE_SCRIPT && io.tty && io.terminal) return ttySizeLoop(io, io.terminal);
      return runScript(parseScript(args[1]), { ...io, fs }, runCommand);
    }
    default:
      io.stderr(Buffer.from(`sh: ${cmd}: not found\n`));
      return 127;
  }
}

/** `sh -c 'while read -r l; do stty size; done'` on a pty: until stdin ends or the session goes away. */
function ttySizeLoop(io: ProcessIO, terminal: Terminal): Promise<number> {
  return new Promise((resolve) => {
    const feed = sizeLoop(terminal, io.stdout, () => resolve(0));
    if (!io.stdin) return resolve(0);
    io.stdin.on('data', feed);
    io.stdin.once('end', () => resolve(0));
    io.signal.addEventListener('abort', () => resolve(137), { once: true });
    io.stdin.resume();
  });
}
