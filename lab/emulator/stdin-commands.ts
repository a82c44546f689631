/** The emulated commands that read stdin or write archives: cat, head -n, wc -c, and tar as `kubectl cp` runs it. */
import { PodFilesystem } from './pod-fs.js';
import { readAll, say, type ProcessIO } from './process-io.js';
import { readTar, writeTar, type TarEntry } from './tar.js';

export function cat(io: ProcessIO): Promise<number> {
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

/** `head -n N` on stdin: the first N lines, then it stops reading and leaves the rest for the next command. */
export function headLines(n: number, io: ProcessIO): Promise<number> {
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
    // A head before this one paused it (a 'data' listener alone does not resume an explicitly paused stream).
    stdin.resume();
  });
}

/** `wc -c` on stdin: the byte count once stdin ends, as busybox prints it for a pipe (the number alone). */
export async function wcBytes(io: ProcessIO): Promise<number> {
  const all = await readAll(io.stdin, io.signal);
  say(io.stdout, `${all.length}\n`);
  return 0;
}

/** tar with the flags kubectl cp and people use: c/x, f - (stdin/stdout), -C DIR, m/v/p/o ignored. */
export async function tar(args: readonly string[], io: ProcessIO, fs: PodFilesystem): Promise<number> {
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
 * `head -c N /dev/zero`: N zero bytes, in 64 KiB writes, as fast as the session takes them (each write waits a turn
 * of the event loop, so a stalled or throttled stream (stream-faults.ts) holds it back as a pipe would).
 */
export async function zeros(n: number, io: ProcessIO): Promise<number> {
  const piece = Buffer.alloc(64 * 1024);
  for (let left = Number.isFinite(n) && n > 0 ? n : 0; left > 0 && !io.signal.aborted; left -= piece.length) {
    io.stdout(left >= piece.length ? piece : piece.subarray(0, left));
    await new Promise((r) => setImmediate(r));
  }
  return 0;
}
