/**
 * In-process stand-ins for the commands a probe target runs: cat, echo,
 * sh -c '<simple script>', sleep, true, false. Enough to prove a channel
 * (cat echoes stdin), exit-code propagation and long-running sessions.
 */
import type { Readable } from 'node:stream';

export interface ProcessIO {
  readonly stdin?: Readable;
  readonly stdout: (b: Buffer) => void;
  readonly stderr: (b: Buffer) => void;
  /** Aborted when the session goes away. */
  readonly signal: AbortSignal;
}

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

export async function runCommand(argv: readonly string[], io: ProcessIO): Promise<number> {
  const [cmd, ...args] = argv;
  switch (cmd) {
    case undefined:
      io.stderr(Buffer.from('no command given\n'));
      return 126;
    case 'cat':
      return cat(io);
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
      if (args[0] !== '-c' || args[1] === undefined) {
        // An interactive shell: behave like cat so a tty session has something to talk to.
        return cat(io);
      }
      let code = 0;
      for (const words of parseScript(args[1])) {
        if (io.signal.aborted) return 137;
        if (words[0] === 'exit') return Number(words[1] ?? code) & 0xff;
        code = await runCommand(words, io);
      }
      return code;
    }
    default:
      io.stderr(Buffer.from(`sh: ${cmd}: not found\n`));
      return 127;
  }
}
