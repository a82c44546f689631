/**
 * The commands a shaped hold runs in the target (busybox, `kube-stream-probe manifest`'s image), run by a real
 * busybox and by the emulator's stand-in on the same input: the emulated pod must do what the real one does.
 * busybox comes from Debian (`.ci/run` installs it); missing, the test fails in CI and skips loudly elsewhere.
 */
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { runCommand } from '../../lab/emulator/processes.js';
import { TICK, holdShapeCommand } from '../../src/probe/hold-shape.js';
import { TTY_EOF } from '../../src/probe/terminal.js';
import { DOWNLOAD_GO, transferCommand } from '../../src/probe/transfer.js';
import { Terminal } from '../../lab/emulator/terminal.js';
import { inTerminal } from '../../lab/pty.js';

const BUSYBOX = '/usr/bin/busybox';
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const present = (skip: (m: string) => void) => {
  if (existsSync(BUSYBOX)) return;
  if (process.env.CI === 'true') throw new Error('busybox is missing: apt-get install busybox');
  skip('busybox missing (apt-get install busybox)');
};

/** What the probe writes for an input-shaped hold: the first echo, then ticks after it came back. */
async function inputShape(write: (s: string) => void, end: () => void): Promise<void> {
  write('ksp-nonce\n');
  await sleep(200);
  write(TICK);
  await sleep(200);
  write(TICK);
  end();
}

describe('shaped-hold commands: real busybox and the emulated pod agree', () => {
  it('input: `head -n 1; exec wc -c` echoes the first line, then counts exactly the ticks', async ({ skip }) => {
    present(skip);
    const [cmd, ...args] = holdShapeCommand('input');
    const child = spawn(BUSYBOX, [cmd!, ...args], { stdio: ['pipe', 'pipe', 'inherit'] });
    let real = '';
    child.stdout.on('data', (c: Buffer) => (real += c.toString()));
    const exited = new Promise<number | null>((r) => child.on('close', r));
    await inputShape(
      (s) => child.stdin.write(s),
      () => child.stdin.end(),
    );
    expect(await exited).toBe(0);

    const stdin = new PassThrough();
    let emulated = '';
    const code = runCommand(holdShapeCommand('input'), {
      stdin,
      stdout: (b) => (emulated += b.toString()),
      stderr: () => undefined,
      signal: new AbortController().signal,
    });
    await inputShape(
      (s) => stdin.write(s),
      () => stdin.end(),
    );
    expect(await code).toBe(0);
    expect({ real, emulated }).toEqual({ real: `ksp-nonce\n${2 * TICK.length}\n`, emulated: `ksp-nonce\n${2 * TICK.length}\n` });
  });

  it('output: the loop writes a tick at once and every 2 s, and reads nothing', async ({ skip }) => {
    present(skip);
    const [cmd, ...args] = holdShapeCommand('output');
    const child = spawn(BUSYBOX, [cmd!, ...args], { stdio: ['ignore', 'pipe', 'inherit'] });
    let real = '';
    child.stdout.on('data', (c: Buffer) => (real += c.toString()));
    const abort = new AbortController();
    let emulated = '';
    const code = runCommand(holdShapeCommand('output'), { stdout: (b) => (emulated += b.toString()), stderr: () => undefined, signal: abort.signal });
    await sleep(3000);
    child.kill('SIGTERM');
    abort.abort();
    await code;
    expect(real).toBe(TICK.repeat(2));
    expect(emulated).toBe(TICK.repeat(2));
  });

  it('tty: on a real pty, busybox echoes each line and prints the size it reads, resized or not, and Ctrl-D ends it; the emulated pod shows the same', async ({
    skip,
  }) => {
    present(skip);
    const [cmd, ...args] = holdShapeCommand('tty');
    const t = inTerminal([BUSYBOX, cmd!, ...args], { cols: 80, rows: 24 });
    await sleep(300);
    t.type('ksp-nonce\n');
    await sleep(300);
    t.resize({ cols: 132, rows: 43 });
    await sleep(200);
    t.type('ksp-again\n');
    await sleep(300);
    t.type(TTY_EOF);
    const real = await t.done;
    // The emulated pod: the same script on its own terminal, sized by resize messages as kubectl sends them.
    const terminal = new Terminal();
    terminal.resize('{"Width":80,"Height":24}\n');
    const stdin = new PassThrough();
    let emulated = '';
    const code = runCommand(holdShapeCommand('tty'), {
      stdin,
      stdout: (b) => (emulated += b.toString('latin1')),
      stderr: () => undefined,
      signal: new AbortController().signal,
      tty: true,
      terminal,
    });
    stdin.write('ksp-nonce\n');
    await sleep(50);
    terminal.resize('{"Width":132,"Height":43}\n');
    stdin.write('ksp-again\n');
    await sleep(50);
    stdin.write(TTY_EOF);
    expect(await code).toBe(0);
    const shown = 'ksp-nonce\r\n24 80\r\nksp-again\r\n43 132\r\n';
    expect({ code: real.code, real: real.stdout, emulated }).toEqual({ code: 0, real: shown, emulated: shown });
  });

  it.each(['upload', 'download'] as const)(
    'transfer %s: busybox and the emulated pod echo the first line, then count what came (upload) or echo the go line and send SIZE zeros (download)',
    async (shape) => {
      present(() => undefined);
      const argv = transferCommand(shape, 3000);
      const drive = async (write: (s: string | Buffer) => void, end: () => void) => {
        write('ksp-nonce\n');
        await sleep(200);
        write(shape === 'upload' ? Buffer.alloc(1000, 7) : DOWNLOAD_GO);
        end();
      };
      const child = spawn(BUSYBOX, argv, { stdio: ['pipe', 'pipe', 'inherit'] });
      const real: Buffer[] = [];
      child.stdout.on('data', (c: Buffer) => real.push(c));
      const exited = new Promise<number | null>((r) => child.on('close', r));
      await drive(
        (x) => child.stdin.write(x),
        () => child.stdin.end(),
      );
      expect(await exited).toBe(0);
      const stdin = new PassThrough();
      const emulated: Buffer[] = [];
      const code = runCommand(argv, { stdin, stdout: (b) => emulated.push(Buffer.from(b)), stderr: () => undefined, signal: new AbortController().signal });
      await drive(
        (x) => stdin.write(x),
        () => stdin.end(),
      );
      expect(await code).toBe(0);
      const want = shape === 'upload' ? Buffer.from('ksp-nonce\n1000\n') : Buffer.concat([Buffer.from(`ksp-nonce\n${DOWNLOAD_GO}`), Buffer.alloc(3000)]);
      expect({ real: Buffer.concat(real).equals(want), emulated: Buffer.concat(emulated).equals(want) }).toEqual({ real: true, emulated: true });
    },
  );
});
