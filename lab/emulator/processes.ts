/**
 * In-process stand-ins for the commands of the emulated pod (README, "The
 * emulator"): cat [FILE], echo, sleep, true, false, exit, test -d/-f/-e,
 * ls, mkdir -p, pwd, hostname, tar cf - / tar xf - -C DIR (what `kubectl cp`
 * runs, on the pod's in-memory filesystem), head -n N and wc -c on stdin, exec,
 * sh -c '<script>' (with `while true; do …; done`) and an
 * interactive sh (echo, prompt and line editing under a TTY, so `kubectl
 * exec -it -- sh` can be used and left with `exit` or Ctrl-D).
 */
import type { Readable } from 'node:stream';
import { PodFilesystem } from './pod-fs.js';
import { readTar, writeTar, type TarEntry } from './tar.js';

export interface ProcessIO {
  readonly stdin?: Readable;
  readonly stdout: (b: Buffer) => void;
  readonly stderr: (b: Buffer) => void;
  /** Aborted when the session goes away. */
  readonly signal: AbortSignal;
  /** The pod's filesystem (a fresh empty one when absent). */
  readonly fs?: PodFilesystem;
  /** A terminal was asked for (exec -t): the shell echoes and prompts. */
  readonly tty?: boolean;
}

/** attach joins the container's main process: it reads stdin when attached, else runs until the session ends. */
export const ATTACH_MAIN = '__attach-main__';

const sleep = (ms: number, signal: AbortSignal) =>
  new Promise<void>((resolve) => {
    if (signal.aborted) return resolve();
    const t = setTimeout(resolve, ms);
    signal.addEventListener('abort', () => (clearTimeout(t), resolve()), { once: true });
  });

function cat(io: ProcessIO): Promise<number> {
  const stdin = io.stdin;
  if (!stdin) return Promise.resolve(0);
  return new Promise((resolve) => {
    const done = () => resolve(0);
    stdin.on('data', (c: Buffer) => io.stdout(c));
    stdin.once('end', done);
    stdin.once('close', done);
    io.signal.addEventListener('abort', done, { once: true });
    stdin.resume();
  });
}

/** Splits a tiny shell script on ';' and '&&' into words (single/double quotes honoured). */
export function parseScript(script: string): string[][] {
  const commands: string[][] = [];
  let words: string[] = [];
  let word = '';
  let inWord = false;
  let quote: string | undefined;
  const flushWord = () => {
    if (inWord) words.push(word);
    word = '';
    inWord = false;
  };
  const flushCommand = () => {
    flushWord();
    if (words.length) commands.push(words);
    words = [];
  };
  for (let i = 0; i < script.length; i++) {
    const c = script[i]!;
    if (quote) {
      if (c === quote) quote = undefined;
      else word += c;
    } else if (c === '"' || c === "'") {
      quote = c;
      inWord = true;
    } else if (c === ' ' || c === '\t' || c === '\n') flushWord();
    else if (c === ';') flushCommand();
    else if (c === '&' && script[i + 1] === '&') {
      flushCommand();
      i++;
    } else {
      word += c;
      inWord = true;
    }
  }
  flushCommand();
  return commands;
}

function readAll(stdin: Readable | undefined, signal: AbortSignal): Promise<Buffer> {
  if (!stdin) return Promise.resolve(Buffer.alloc(0));
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    const done = () => resolve(Buffer.concat(chunks));
    stdin.on('data', (c: Buffer) => chunks.push(c));
    stdin.once('end', done);
    stdin.once('close', done);
    signal.addEventListener('abort', done, { once: true });
    // A command before this one (head -n) may have paused it.
    stdin.resume();
  });
}

const say = (write: (b: Buffer) => void, text: string) => write(Buffer.from(text));

/** tar with the flags kubectl cp and people use: c/x, f - (stdin/stdout), -C DIR, m/v/p/o ignored. */
async function tar(args: readonly string[], io: ProcessIO, fs: PodFilesystem): Promise<number> {
  let mode: 'c' | 'x' | undefined;
  let dir = '/';
  const paths: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!;
    if (a === '-C') dir = args[++i] ?? '/';
    else if (a === '-') continue;
    else if (/^-?[cxfmvpoz]+$/.test(a) && (i === 0 || a.startsWith('-'))) {
      if (a.includes('c')) mode = 'c';
      if (a.includes('x')) mode = 'x';
      if (a.includes('z')) return (say(io.stderr, 'tar: gzip is not supported in the emulated pod\n'), 2);
    } else if (a.startsWith('--')) continue;
    else paths.push(a);
  }
  if (mode === 'c') {
    const entries: TarEntry[] = [];
    for (const p of paths) {
      const abs = PodFilesystem.resolve(p, dir);
      if (!fs.stat(abs)) {
        say(io.stderr, `tar: ${p}: Cannot stat: No such file or directory\n`);
        return 2;
      }
      // GNU tar strips the leading '/' from member names; kubectl cp expects exactly that.
      for (const path of fs.walk(abs)) {
        const e = fs.stat(path)!;
        entries.push({ name: path.replace(/^\//, ''), type: e.type, data: e.type === 'file' ? e.data : Buffer.alloc(0) });
      }
    }
    io.stdout(writeTar(entries));
    return 0;
  }
  if (mode === 'x') {
    if (fs.stat(dir)?.type !== 'dir') {
      say(io.stderr, `tar: ${dir}: Cannot open: No such file or directory\n`);
      return 2;
    }
    for (const e of readTar(await readAll(io.stdin, io.signal))) {
      const target = PodFilesystem.resolve(e.name, dir);
      if (e.type === 'dir') fs.mkdirp(target);
      else fs.write(target, e.data);
    }
    return 0;
  }
  say(io.stderr, 'tar: You must specify one of the -c or -x options\n');
  return 2;
}

/**
 * An interactive shell: lines from stdin run as commands. Under a TTY it does what the terminal's line
 * discipline would: echo, CR LF, backspace, Ctrl-C (a new prompt) and Ctrl-D on an empty line (exit).
 */
function interactiveShell(io: ProcessIO, fs: PodFilesystem): Promise<number> {
  const stdin = io.stdin;
  if (!stdin) return Promise.resolve(0);
  const tty = io.tty === true;
  const out = (b: Buffer) => io.stdout(tty ? Buffer.from(b.toString('utf8').replace(/\r?\n/g, '\r\n')) : b);
  const prompt = () => tty && out(Buffer.from('/ # '));
  return new Promise((resolve) => {
    let line = '';
    let last = 0;
    let busy = Promise.resolve();
    let finished = false;
    const finish = (code: number) => {
      if (finished) return;
      finished = true;
      resolve(code);
    };
    const runLine = async (text: string) => {
      for (const words of parseScript(text)) {
        if (words[0] === 'exit') return finish(Number(words[1] ?? last) & 0xff);
        last = await runCommand(words, { ...io, stdin: undefined, stdout: out, stderr: tty ? out : io.stderr, fs });
      }
      prompt();
    };
    prompt();
    stdin.on('data', (chunk: Buffer) => {
      for (const ch of chunk.toString('utf8')) {
        if (finished) return;
        if (ch === '\r' || ch === '\n') {
          if (tty) out(Buffer.from('\n'));
          const text = line;
          line = '';
          busy = busy.then(() => runLine(text));
        } else if (tty && ch === '\x04' && line === '') {
          busy = busy.then(() => finish(last));
        } else if (tty && ch === '\x03') {
          line = '';
          out(Buffer.from('^C\n'));
          prompt();
        } else if (tty && (ch === '\x7f' || ch === '\b')) {
          if (line) {
            line = line.slice(0, -1);
            out(Buffer.from('\b \b'));
          }
        } else {
          line += ch;
          if (tty) out(Buffer.from(ch));
        }
      }
    });
    const eof = () => void busy.then(() => (line ? runLine(line) : undefined)).then(() => finish(last));
    stdin.once('end', eof);
    io.signal.addEventListener('abort', () => finish(137), { once: true });
  });
}

/**
 * A parsed `sh -c` script: its commands in order, `exit N`, and one loop form, `while true; do …; done` (also
 * `while :`), which runs until the session goes away (what `--hold-shape output` runs).
 */
async function runScript(commands: readonly string[][], io: ProcessIO & { fs: PodFilesystem }): Promise<number> {
  let code = 0;
  for (let i = 0; i < commands.length; i++) {
    const words = commands[i]!;
    if (io.signal.aborted) return 137;
    if (words[0] === 'exit') return Number(words[1] ?? code) & 0xff;
    if (words[0] === 'while' && (words[1] === 'true' || words[1] === ':') && commands[i + 1]?.[0] === 'do') {
      const end = commands.findIndex((w, j) => j > i && w[0] === 'done');
      if (end < 0) return (say(io.stderr, 'sh: syntax error: unexpected end of file (expecting "done")\n'), 2);
      const body = [commands[i + 1]!.slice(1), ...commands.slice(i + 2, end)].filter((w) => w.length > 0);
      while (!io.signal.aborted) await runScript(body, io);
      return 137;
    }
    code = await runCommand(words, io);
  }
  return code;
}

/** `head -n N` on stdin: the first N lines, then it stops reading and leaves the rest for the next command. */
function headLines(n: number, io: ProcessIO): Promise<number> {
  const stdin = io.stdin;
  if (!stdin || n <= 0) return Promise.resolve(0);
  return new Promise((resolve) => {
    let seen = 0;
    const onData = (c: Buffer) => {
      let at = 0;
      while (seen < n) {
        const nl = c.indexOf(0x0a, at);
        if (nl < 0) break;
        seen++;
        at = nl + 1;
      }
      if (seen < n) return io.stdout(c);
      io.stdout(c.subarray(0, at));
      stdin.off('data', onData);
      stdin.pause();
      if (at < c.length) stdin.unshift(c.subarray(at));
      resolve(0);
    };
    stdin.on('data', onData);
    stdin.once('end', () => resolve(0));
  });
}

/** `wc -c` on stdin: the byte count once stdin ends, as busybox prints it for a pipe (the number alone). */
async function wcBytes(io: ProcessIO): Promise<number> {
  const all = await readAll(io.stdin, io.signal);
  say(io.stdout, `${all.length}\n`);
  return 0;
}

export async function runCommand(argv: readonly string[], io: ProcessIO): Promise<number> {
  const [cmd, ...args] = argv;
  const fs = io.fs ?? new PodFilesystem();
  switch (cmd) {
    case undefined:
      io.stderr(Buffer.from('no command given\n'));
      return 126;
    case ATTACH_MAIN:
      if (io.stdin) return cat(io);
      await new Promise<void>((resolve) => (io.signal.aborted ? resolve() : io.signal.addEventListener('abort', () => resolve(), { once: true })));
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
      if (args[0] !== '-n' || args.length !== 2) return (say(io.stderr, 'head: only head -n N on stdin is emulated\n'), 1);
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
      if (args[0] !== '-c' || args[1] === undefined) return interactiveShell(io, fs);
      return runScript(parseScript(args[1]), { ...io, fs });
    }
    default:
      io.stderr(Buffer.from(`sh: ${cmd}: not found\n`));
      return 127;
  }
}
