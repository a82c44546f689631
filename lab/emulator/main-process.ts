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
import { Terminal, sizeLoop } from './terminal.js';
import { TARGET_DEFAULTS } from '../../src/kube/target.js';

/** The target's containers that attach can join (kube-stream-probe manifest): `main` runs cat, `tty` the size loop on a pty. */
const TTY_CONTAINER = TARGET_DEFAULTS.ttyContainer;

export class MainProcess {
  private readonly attached = new Set<(b: Buffer) => void>();
  private readonly process: (input: Buffer) => void;

  /** `terminal`: the container has `tty: true` (its process runs the size loop on it); else it runs cat. */
  constructor(readonly terminal?: Terminal) {
    const broadcast = (b: Buffer) => {
      for (const write of this.attached) write(b);
    };
    this.process = terminal ? sizeLoop(terminal, broadcast) : broadcast;
  }

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
      // What any attached client writes reaches the one process, whose output goes to every attached client.
      io.stdin.on('data', (c: Buffer) => this.process(c));
      io.stdin.once('end', detach);
      io.stdin.once('close', detach);
      io.stdin.resume();
    });
  }
}

/** One main process per container of the pod (the pod's filesystem stands for the pod: one per emulator). */
const MAIN = new WeakMap<PodFilesystem, Map<string, MainProcess>>();
export function mainProcessOf(fs: PodFilesystem, container = 'main', dropResizes = false): MainProcess {
  let pod = MAIN.get(fs);
  if (!pod) MAIN.set(fs, (pod = new Map()));
  let m = pod.get(container);
  if (!m) pod.set(container, (m = new MainProcess(container === TTY_CONTAINER ? new Terminal(dropResizes) : undefined)));
  return m;
}
