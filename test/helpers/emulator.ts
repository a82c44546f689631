/** Starts emulators for tests and writes their kubeconfigs into a temp dir. */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { writeEmulatorKubeconfig } from '../../lab/emulator/kubeconfig.js';
import type { EmulatorOptions } from '../../lab/emulator/options.js';
import { Emulator } from '../../lab/emulator/server.js';

export interface TestEmulator {
  readonly emulator: Emulator;
  readonly kubeconfig: string;
  /** Upgrade records from index `from` on. */
  since(from: number): Emulator['upgrades'];
  stop(): Promise<void>;
}

export async function startTestEmulator(options: EmulatorOptions = {}): Promise<TestEmulator> {
  const emulator = await Emulator.start(options);
  const dir = mkdtempSync(join(tmpdir(), 'ksp-emu-'));
  const kubeconfig = writeEmulatorKubeconfig(emulator, join(dir, 'kubeconfig'));
  return {
    emulator,
    kubeconfig,
    since: (from) => emulator.upgrades.slice(from),
    stop: () => emulator.stop(),
  };
}
