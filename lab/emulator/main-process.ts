/**
 * The target container's main process (`cat`, `stdin: true`, not `stdinOnce`) as attach sees it on a real node:
 * ONE process per pod, every attached client's stdin merged into it and its output broadcast to every attached
 * client; a client's end of stdin detaches that client (its attach ends with Success) and leaves the process
 * running. containerd, pkg/cri/io/container_io.go Attach (stdoutGroup/stderrGroup; "Only close the stdin when it's
 * StdinOnce"). So two attach sessions at once see each other's bytes: an attach hold is idle only while no other
 * attached client writes.
 */
import type { PodFilesystem } from './pod-fs.js';
import type { ProcessIO } from './process-io.js';

export class MainProcess {
  private readonly attached = new Set<(b: Buffer) => void>();

  /** How many clients are attached now. */
  get clients(): number {
    return this.attached.size;
  }

  /** Attaches `io` until its stdin ends or its session goes away; resolves 0 (the attach ends with Success). */
  attach(io: ProcessIO): Promise<number> {
    const out = io.stdout;
    this.attached.add(out);
    return new Promise((resolve) => {
      const detach = () => {
        this.attached.delete(out);
        resolve(0);
      };
      io.signal.addEventListener('abort', detach, { once: true });
      if (!io.stdin) return;
      // cat: what any attached client writes comes back to every attached client.
      io.stdin.on('data', (c: Buffer) => {
        for (const write of this.attached) write(c);
      });
      io.stdin.once('end', detach);
      io.stdin.once('close', detach);
      io.stdin.resume();
    });
  }
}

/** One main process per pod (the pod's filesystem stands for the pod: one per emulator). */
const MAIN = new WeakMap<PodFilesystem, MainProcess>();
export function mainProcessOf(fs: PodFilesystem): MainProcess {
  let m = MAIN.get(fs);
  if (!m) MAIN.set(fs, (m = new MainProcess()));
  return m;
}
