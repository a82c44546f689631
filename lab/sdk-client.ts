/**
 * A real WebSocket-only SDK client, @kubernetes/client-node (a dev dependency), held as a user holds it: exec `cat`
 * and a port-forward to the target's echo port, a line, `holdSeconds` of silence, another line. The client sends no
 * pings of its own and port-forwards over the kubelet's legacy protocol (src/probe/sdk-clients.ts); this is what the
 * probe's `sdk` sessions and its WS-only forecast are checked against (test/lab/sdk-clients.test.ts).
 */
import * as k8s from '@kubernetes/client-node';
import { execFile } from 'node:child_process';
import { PassThrough } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import type { HeldSession } from './kubectl.js';
import { HopMissingError } from './real-hops/process-hop.js';

const run = promisify(execFile);

export interface SdkClientTarget {
  /** The API server as the client dials it (through the hop). */
  readonly server: string;
  /** A forward proxy (kubeconfig proxy-url), which client-node tunnels through with CONNECT. */
  readonly proxyUrl?: string;
  readonly namespace?: string;
  readonly pod?: string;
  readonly container?: string;
  readonly port?: number;
}

/** client-node's config for the target: it refuses an http:// server unless TLS verification is skipped. */
function kubeConfig(t: SdkClientTarget): k8s.KubeConfig {
  const kc = new k8s.KubeConfig();
  kc.loadFromOptions({
    clusters: [{ name: 'lab', server: t.server, skipTLSVerify: true, ...(t.proxyUrl ? { proxyUrl: t.proxyUrl } : {}) }],
    users: [{ name: 'lab' }],
    contexts: [{ name: 'lab', cluster: 'lab', user: 'lab', namespace: t.namespace ?? 'default' }],
    currentContext: 'lab',
  });
  return kc;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Waits up to `ms` for `text` to have arrived on `seen()`, or for the socket to close. */
async function arrived(seen: () => string, text: string, closed: () => boolean, ms = 3000): Promise<boolean> {
  for (let t = 0; t < ms && !seen().includes(text) && !closed(); t += 50) await sleep(50);
  return seen().includes(text);
}

/** What one held session met: it works when both lines came back. */
async function holding(
  open: (out: PassThrough, input: PassThrough) => Promise<{ readonly protocol?: string; on(e: 'close', f: (code: number) => void): void; close(): void }>,
  holdSeconds: number,
): Promise<HeldSession & { readonly protocol: string | null; readonly closedAfterSeconds: number | null }> {
  const out = new PassThrough();
  const input = new PassThrough();
  let seen = '';
  out.on('data', (c: Buffer) => (seen += c.toString()));
  const t0 = performance.now();
  let closedAt: number | null = null;
  let code: number | null = null;
  let ws;
  try {
    ws = await open(out, input);
  } catch (err) {
    return { works: false, code: null, stderr: (err as Error).message ?? String(err), protocol: null, closedAfterSeconds: null };
  }
  ws.on('close', (c: number) => {
    closedAt = (performance.now() - t0) / 1000;
    code = c;
  });
  input.write('before\n');
  const first = await arrived(
    () => seen,
    'before',
    () => closedAt !== null,
  );
  if (first) await sleep(holdSeconds * 1000);
  if (closedAt === null) input.write('after\n');
  const second =
    first &&
    (await arrived(
      () => seen,
      'after',
      () => closedAt !== null,
    ));
  ws.close();
  return { works: first && second, code, stderr: '', protocol: ws.protocol ?? null, closedAfterSeconds: closedAt };
}

export function clientNodeExecHolding(t: SdkClientTarget, holdSeconds: number) {
  const exec = new k8s.Exec(kubeConfig(t));
  return holding(
    (out, input) => exec.exec(t.namespace ?? 'default', t.pod ?? 'probe-target', t.container ?? 'main', ['cat'], out, new PassThrough(), input, false),
    holdSeconds,
  );
}

export function clientNodePortForwardHolding(t: SdkClientTarget, holdSeconds: number) {
  const pf = new k8s.PortForward(kubeConfig(t));
  return holding(
    (out, input) =>
      pf.portForward(t.namespace ?? 'default', t.pod ?? 'probe-target', [t.port ?? 8080], out, new PassThrough(), input) as Promise<{
        readonly protocol?: string;
        on(e: 'close', f: (code: number) => void): void;
        close(): void;
      }>,
    holdSeconds,
  );
}

/** Debian's python3-kubernetes, run by lab/python-client.py; requirePython says whether it is installed (a HopMissingError). */
const PYTHON = '/usr/bin/python3';
const PYTHON_CLIENT = fileURLToPath(new URL('./python-client.py', import.meta.url));

export async function requirePython(): Promise<true> {
  const found = await run(PYTHON, ['-c', 'import kubernetes.stream'], { timeout: 20_000 }).catch(() => null);
  if (!found) throw new HopMissingError('python3-kubernetes', 'python3-kubernetes');
  return true;
}

async function pythonHolding(t: SdkClientTarget, operation: 'exec' | 'portforward', holdSeconds: number) {
  // Python 22.6 ignores a kubeconfig proxy-url: it has no way to be given one here either.
  const { stdout } = await run(PYTHON, [PYTHON_CLIENT, t.server, operation, String(holdSeconds), String(t.port ?? 8080)], {
    timeout: (holdSeconds + 30) * 1000,
    encoding: 'utf8',
  });
  const r = JSON.parse(stdout) as { works: boolean; protocol: string | null; error: string | null; closedAfterSeconds: number | null };
  return { works: r.works, code: null, stderr: r.error ?? '', protocol: r.protocol, closedAfterSeconds: r.closedAfterSeconds };
}

export const pythonExecHolding = (t: SdkClientTarget, holdSeconds: number) => pythonHolding(t, 'exec', holdSeconds);
export const pythonPortForwardHolding = (t: SdkClientTarget, holdSeconds: number) => pythonHolding(t, 'portforward', holdSeconds);
