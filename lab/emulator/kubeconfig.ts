/** Writes a kubeconfig that real kubectl (and our `run`) can use as is. */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import YAML from 'yaml';
import type { EmulatorOptions } from './options.js';
import { Emulator } from './server.js';

export function emulatorKubeconfig(e: Emulator, opts: { contextName?: string; proxyUrl?: string; server?: string } = {}): string {
  const name = opts.contextName ?? 'kube-stream-probe-lab';
  const cluster: Record<string, unknown> = { server: opts.server ?? e.url.toString().replace(/\/$/, '') };
  if (e.tls) cluster['certificate-authority-data'] = Buffer.from(e.tls.caPem).toString('base64');
  if (opts.proxyUrl) cluster['proxy-url'] = opts.proxyUrl;
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

export function writeEmulatorKubeconfig(e: Emulator, path: string, opts?: Parameters<typeof emulatorKubeconfig>[1]): string {
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
