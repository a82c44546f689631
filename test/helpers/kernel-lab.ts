/**
 * A kernel path (lab/kernel-hops) with the emulator behind it and clients in front: the probe's own CLI, run as a
 * user runs it (`run -o json`) in a client namespace with the kernel's default TCP settings, and real kubectl in
 * namespaces whose tcp_retries2 decides how long a silently dropped connection hangs (`quick`: 5, about 12.6 s;
 * `slow`: 9, about 205 s, longer than any kubectl deadline).
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { emulatorKubeconfig } from '../../lab/emulator/kubeconfig.js';
import { Emulator } from '../../lab/emulator/server.js';
import { applyFault, faultCounters, type KernelFault } from '../../lab/kernel-hops/faults.js';
import { createNetnsPath, type NetnsPath } from '../../lab/kernel-hops/netns.js';
import type { KubectlPlace } from '../../lab/kubectl.js';
import type { ProbeReport } from '../../src/probe/types.js';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';

export interface ProbeRun {
  readonly report: ProbeReport;
  readonly code: number | null;
  readonly stderr: string;
  /** The CLI's wall time, s. */
  readonly seconds: number;
}

export interface KernelLab {
  readonly path: NetnsPath;
  readonly emulator: Emulator;
  readonly kubeconfig: string;
  place(client: 'quick' | 'slow' | 'probe'): KubectlPlace;
  /** `kube-stream-probe run -o json` in the `probe` namespace, with these extra flags. */
  probe(args: readonly string[]): Promise<ProbeRun>;
  counters(): Record<string, number>;
  stop(): Promise<void>;
}

export async function startKernelLab(fault: KernelFault): Promise<KernelLab> {
  const path = createNetnsPath([{ name: 'probe' }, { name: 'quick', tcpRetries2: 5 }, { name: 'slow', tcpRetries2: 9 }]);
  let emulator: Emulator | undefined;
  try {
    emulator = await Emulator.start({ host: path.serverAddress });
    const kubeconfig = join(mkdtempSync(join(tmpdir(), 'ksp-kernel-')), 'kubeconfig');
    writeFileSync(kubeconfig, emulatorKubeconfig(emulator), { mode: 0o600 });
    applyFault(path, fault);
    const e = emulator;
    return {
      path,
      emulator: e,
      kubeconfig,
      place: (name) => {
        const c = path.client(name);
        return { spawn: (command, args, options) => c.spawn(command, args, options), localAddress: c.consoleAddress };
      },
      probe: (args) =>
        new Promise((resolve, reject) => {
          const t0 = performance.now();
          const child = path
            .client('probe')
            .spawn(process.execPath, ['--import', 'tsx', 'src/cli/main.ts', 'run', '--kubeconfig', kubeconfig, '-o', 'json', ...args], {
              env: { ...process.env, HOME: tmpdir() },
              stdio: ['ignore', 'pipe', 'pipe'],
            });
          let stdout = '';
          let stderr = '';
          child.stdout!.on('data', (c: Buffer) => (stdout += c.toString()));
          child.stderr!.on('data', (c: Buffer) => (stderr += c.toString()));
          child.on('close', (code) => {
            try {
              resolve({ report: JSON.parse(stdout) as ProbeReport, code, stderr, seconds: (performance.now() - t0) / 1000 });
            } catch (err) {
              reject(new Error(`the probe printed no JSON report (exit ${code}): ${stderr.slice(-2000)} ${stdout.slice(0, 500)}`, { cause: err }));
            }
          });
        }),
      counters: () => faultCounters(path),
      stop: async () => {
        await e.stop();
        path.stop();
      },
    };
  } catch (err) {
    await emulator?.stop();
    path.stop();
    throw err;
  }
}
