/**
 * The emulated pod as people use a pod, with real kubectl: `kubectl cp` both
 * ways (a file and a directory; its `test -d`, `tar -xmf - -C` and
 * `tar cf -`), over SPDY (1.29) and WebSocket (1.33, 1.35); `kubectl exec
 * -it -- sh` in a real terminal (util-linux `script` gives kubectl a pty):
 * commands echo, run and `exit 3` leaves with status 3; and `kubectl attach`
 * without -i stays attached until it is stopped, as on a real pod.
 */
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmulatorWithKubeconfig, type EmulatorWithKubeconfig } from '../../lab/emulator/kubeconfig.js';
import { kubectlEnv, kubectlPath, runKubectl } from '../../lab/kubectl.js';

let lab: EmulatorWithKubeconfig;
let dir: string;
beforeAll(async () => {
  // kubectl cp asks for a username on a kubeconfig user without credentials: give it a token.
  lab = await startEmulatorWithKubeconfig({ tls: true, token: 'pod-commands-token-42' });
  dir = mkdtempSync(join(tmpdir(), 'ksp-pod-commands-'));
  mkdirSync(join(dir, 'src', 'tree', 'sub'), { recursive: true });
  writeFileSync(join(dir, 'src', 'note.txt'), 'a note for the pod\n');
  writeFileSync(join(dir, 'src', 'tree', 'sub', 'deep.bin'), Buffer.from([0, 1, 2, 250, 251, 252]));
});
afterAll(async () => {
  await lab?.stop();
  rmSync(dir, { recursive: true, force: true });
});

/** Runs a command in a pty (script -qfec) with `input` typed into it, asynchronously (the emulator runs in this process). */
function inTerminal(command: string, input: string[], timeoutMs = 20_000): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve) => {
    const child = spawn('script', ['-qfec', command, '/dev/null'], { env: kubectlEnv(), stdio: ['pipe', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (d: Buffer) => (output += d.toString()));
    child.stderr.on('data', (d: Buffer) => (output += d.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, output });
    });
    // Type each line once the shell's prompt has appeared, like a person would.
    let sent = 0;
    const typeNext = () => {
      if (sent < input.length && (output.match(/\/ # /g)?.length ?? 0) > sent) child.stdin.write(input[sent++]!);
    };
    child.stdout.on('data', typeNext);
  });
}

describe.each(['1.29', '1.33', '1.35'])('kubectl %s against the emulated pod', (version) => {
  const k = (...args: string[]) => runKubectl(version, ['--kubeconfig', lab.kubeconfig, ...args]);

  it('kubectl cp: a file and a directory into the pod and back, byte for byte', async () => {
    const to = `/tmp/k${version.replace('.', '')}`;
    expect((await k('cp', join(dir, 'src', 'note.txt'), `probe-target:${to}-note.txt`)).code).toBe(0);
    expect((await k('cp', join(dir, 'src', 'tree'), `probe-target:${to}-tree`)).code).toBe(0);
    const cat = await k('exec', 'probe-target', '--', 'cat', `${to}-note.txt`);
    expect(cat.stdout).toBe('a note for the pod\n');
    const back = join(dir, `back-${version}`);
    const file = await k('cp', `probe-target:${to}-note.txt`, join(back, 'note.txt'));
    expect(file.code, file.stderr).toBe(0);
    expect(readFileSync(join(back, 'note.txt'), 'utf8')).toBe('a note for the pod\n');
    const tree = await k('cp', `probe-target:${to}-tree`, join(back, 'tree'));
    expect(tree.code, tree.stderr).toBe(0);
    expect(readFileSync(join(back, 'tree', 'sub', 'deep.bin'))).toEqual(Buffer.from([0, 1, 2, 250, 251, 252]));
    // A path the pod does not have: tar fails (status 2, as GNU tar), and so does kubectl cp.
    const missing = await k('cp', 'probe-target:/tmp/nothing-here', join(back, 'x'));
    expect(missing.code).not.toBe(0);
    expect(missing.stderr).toMatch(/exit code 2/);
  }, 60_000);
});

describe('an interactive shell and attach', () => {
  it('kubectl exec -it -- sh in a terminal: the prompt, echoed input, command output, and exit 3 leaves with 3', async () => {
    const r = await inTerminal(`${kubectlPath('1.33')} --kubeconfig ${lab.kubeconfig} exec -it probe-target -- sh`, [
      'echo hi there\r',
      'hostname\r',
      'exit 3\r',
    ]);
    expect(r.output).toContain('/ # ');
    expect(r.output).toMatch(/echo hi there\r\nhi there\r\n/);
    expect(r.output).toMatch(/probe-target\r\n/);
    expect(r.code).toBe(3);
  }, 30_000);

  it('Ctrl-D on an empty line leaves the shell (status 0)', async () => {
    const r = await inTerminal(`${kubectlPath('1.35')} --kubeconfig ${lab.kubeconfig} exec -it probe-target -- sh`, ['true\r', '\x04']);
    expect(r.code).toBe(0);
  }, 30_000);

  it('kubectl attach without -i stays attached until stopped, instead of returning at once', async () => {
    const child = spawn(kubectlPath('1.33'), ['--kubeconfig', lab.kubeconfig, 'attach', 'probe-target'], {
      env: kubectlEnv(),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    const early = await Promise.race([exited.then(() => 'exited'), new Promise((r) => setTimeout(() => r('attached'), 3000))]);
    expect(early).toBe('attached');
    child.kill('SIGINT');
    await exited;
  }, 30_000);
});
