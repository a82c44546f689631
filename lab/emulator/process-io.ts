/** What an emulated command gets (processes.ts), and the small helpers the commands share. */
import type { Readable } from 'node:stream';
import type { PodFilesystem } from './pod-fs.js';
import type { Terminal } from './terminal.js';

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
  /** The session's terminal and its size (terminal.ts). */
  readonly terminal?: Terminal;
}

/** Runs one command line (processes.ts `runCommand`): how scripts and the shell run what they parse. */
export type RunCommand = (argv: readonly string[], io: ProcessIO) => Promise<number>;

export const sleep = (ms: number, signal: AbortSignal) =>
  new Promise<void>((resolve) => {
    if (signal.aborted) return resolve();
    const t = setTimeout(resolve, ms);
    signal.addEventListener('abort', () => (clearTimeout(t), resolve()), { once: true });
  });

export const say = (write: (b: Buffer) => void, text: string) => write(Buffer.from(text));

/** All of stdin, once it ends (or the session goes away). */
export function readAll(stdin: Readable | undefined, signal: AbortSignal): Promise<Buffer> {
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
