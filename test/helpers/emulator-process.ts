/**
 * `kube-stream-probe emulator` in a process of its own, as a real API server is: nothing it does can take this
 * process's CPU, so a test can tell our event loop's delays from the server's.
 */
import { spawn } from 'node:child_process';
import type { ClusterTarget } from '../../src/probe/types.js';

export interface EmulatorProcess {
  readonly url: URL;
  /** The emulated pod as a probe target. */
  target(name: string): ClusterTarget;
  stop(): void;
}

export async function startEmulatorProcess(): Promise<EmulatorProcess> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/cli/main.ts', 'emulator'], { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout!.on('data', (d) => (out += d));
  for (let i = 0; i < 200 && !/emulated API server: (\S+)/.test(out); i++) await new Promise((r) => setTimeout(r, 100));
  const found = /emulated API server: (\S+)/.exec(out);
  if (!found) {
    child.kill('SIGTERM');
    throw new Error(`the emulator process did not start in 20 s: ${out}`);
  }
  const url = new URL(found[1]!);
  return {
    url,
    target: (name) => ({ name, connection: { server: url }, namespace: 'default', pod: 'probe-target', container: 'main', port: 8080 }),
    stop: () => child.kill('SIGTERM'),
  };
}
