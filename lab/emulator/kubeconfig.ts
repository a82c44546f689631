/** Writes a kubeconfig that real kubectl (and our `run`) can use as is. */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import YAML from 'yaml';
import type { EmulatorOptions } from './options.js';
import { Emulator } from './server.js';

export interface KubeconfigOptions {
  readonly contextName?: string;
  readonly proxyUrl?: string;
  readonly server?: string;
  /** The CA to trust (default the lab CA for a TLS emulator); null for none (the system roots). */
  readonly caPem?: string | null;
  readonly tlsServerName?: string;
}

export function emulatorKubeconfig(e: Emulator, opts: KubeconfigOptions = {}): string {
  const name = opts.contextName ?? 'kube-stream-probe-lab';
  const cluster: Record<string, unknown> = { server: opts.server ?? e.url.toString().replace(/\/$/, '') };
  const ca = opts.caPem === undefined ? e.tls?.caPem : opts.caPem;
  if (ca) cluster['certificate-authority-data'] = Buffer.from(ca).toString('base64');
  if (opts.proxyUrl) cluster['proxy-url'] = opts.proxyUrl;
  if (opts.tlsServerName) cluster['tls-server-name'] = opts.tlsServerName;
  const user: Record<string, unknown> = {};
  if (e.options.token) user.token = e.options.token;
  return YAML.stringify({
    apiVersion: 'v1',
    kind: 'Config',
    'current-context': name,
    clusters: [{ name, cluster }],
    users: [{ name, user }],
    contexts: [{ name, context: { cluster: name, user: name, namespace: e.namespace } }],
    preferences: {},
  });
}

export function writeEmulatorKubeconfig(e: Emulator, path: string, opts?: KubeconfigOptions): string {
  writeFileSync(path, emulatorKubeconfig(e, opts), { mode: 0o600 });
  return path;
}

export interface EmulatorWithKubeconfig {
  readonly emulator: Emulator;
  /** A kubeconfig for it, in a temp dir of its own that stop() removes. */
  readonly kubeconfig: string;
  /** Upgrade records from index `from` on. */
  since(from: number): Emulator['upgrades'];
  stop(): Promise<void>;
}

/** Starts an emulator and writes its kubeconfig (for tests, benchmarks and anyone pointing kubectl at it). */
export async function startEmulatorWithKubeconfig(options: EmulatorOptions = {}): Promise<EmulatorWithKubeconfig> {
  const emulator = await Emulator.start(options);
  const dir = mkdtempSync(join(tmpdir(), 'ksp-emu-'));
  const kubeconfig = writeEmulatorKubeconfig(emulator, join(dir, 'kubeconfig'));
  return {
    emulator,
    kubeconfig,
    since: (from) => emulator.upgrades.slice(from),
    stop: async () => {
      await emulator.stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
