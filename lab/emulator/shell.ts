/** `sh -c` scripts and the interactive shell of the emulated pod: they parse, and run each command with `run`. */
import type { PodFilesystem } from './pod-fs.js';
import { say, type ProcessIO, type RunCommand } from './process-io.js';

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

/**
 * A parsed `sh -c` script: its commands in order, `exit N`, and one loop form, `while true; do …; done` (also
 * `while :`), which runs until the session goes away (what `--hold-shape output` runs).
 */
export async function runScript(commands: readonly string[][], io: ProcessIO & { fs: PodFilesystem }, run: RunCommand): Promise<number> {
  let code = 0;
  for (let i = 0; i < commands.length; i++) {
    const words = commands[i]!;
    if (io.signal.aborted) return 137;
    if (words[0] === 'exit') return Number(words[1] ?? code) & 0xff;
    if (words[0] === 'while' && (words[1] === 'true' || words[1] === ':') && commands[i + 1]?.[0] === 'do') {
      const end = commands.findIndex((w, j) => j > i && w[0] === 'done');
      if (end < 0) return (say(io.stderr, 'sh: syntax error: unexpected end of file (expecting "done")\n'), 2);
      const body = [commands[i + 1]!.slice(1), ...commands.slice(i + 2, end)].filter((w) => w.length > 0);
      while (!io.signal.aborted) await runScript(body, io, run);
      return 137;
    }
    code = await run(words, io);
  }
  return code;
}

/**
 * An interactive shell: lines from stdin run as commands. Under a TTY it does what the terminal's line
 * discipline would: echo, CR LF, backspace, Ctrl-C (a new prompt) and Ctrl-D on an empty line (exit).
 */
export function interactiveShell(io: ProcessIO, fs: PodFilesystem, run: RunCommand): Promise<number> {
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
        last = await run(words, { ...io, stdin: undefined, stdout: out, stderr: tty ? out : io.stderr, fs });
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
