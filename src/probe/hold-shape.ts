/**
 * Shaped holds (`--hold-shape`, exec only): what the pod runs and what moves during the hold, so that a hop
 * with one idle timer per direction (HAProxy `timeout client` / `timeout server` with
 * `option independent-streams`, one-way NAT and load-balancer timers) shows up.
 *
 * - `silent`: `cat`; nothing moves but the keepalive's pings (the default, and the only shape for port-forward).
 * - `output`: the pod writes a tick every HOLD_SHAPE_PERIOD_SECONDS and reads nothing (`tail -f`, `kubectl logs -f`
 *   through exec). Proven by a tick arriving right after the upgrade and another after the hold.
 * - `tty`: a silent hold in a terminal session (terminal.ts): the pod runs TTY_SIZE_SCRIPT on a pty.
 * - `input`: the client writes a tick every HOLD_SHAPE_PERIOD_SECONDS and the pod answers nothing (a slow upload).
 *   The pod runs `head -n 1` (the first echo) and then `wc -c`: after the hold stdin is closed and the count it
 *   prints must be every tick byte written, which proves each one arrived.
 *
 * The commands are busybox sh (the target image, `kube-stream-probe manifest`) and are emulated in
 * lab/emulator/processes.ts.
 */
import type { Writable } from 'node:stream';
import type { Clock } from '../timers.js';
import { HOLD_SHAPE_PERIOD_SECONDS, type HoldShape } from '../vocabulary.js';

export const TICK = 'ksp-tick\n';
/**
 * What a TTY session's process runs (exec -t; the target's `tty` container for attach): for every line read from the
 * terminal, the terminal's size as the process sees it ("ROWS COLS", busybox `stty size`).
 */
export const TTY_SIZE_SCRIPT = 'while read -r l; do stty size; done';

/** The command the target runs for each shape. */
export function holdShapeCommand(shape: HoldShape | undefined): string[] {
  switch (shape) {
    case 'output':
      return ['sh', '-c', `while true; do echo ${TICK.trim()}; sleep ${HOLD_SHAPE_PERIOD_SECONDS}; done`];
    case 'input':
      return ['sh', '-c', 'head -n 1; exec wc -c'];
    case 'tty':
      return ['sh', '-c', TTY_SIZE_SCRIPT];
    default:
      return ['cat'];
  }
}

/** Which side is quiet during a shaped hold, in words: the direction a one-way idle timer would see idle. */
export const QUIET_DIRECTION: Readonly<Record<Exclude<HoldShape, 'silent' | 'tty'>, string>> = {
  output: 'client → server (only the pod wrote)',
  input: 'server → client (only the client wrote)',
};

/** An input-shaped hold: TICK written every period until stopped; how many bytes it wrote. */
export function writeTicks(writer: Writable, clock: Clock): { stop(): void; readonly written: () => number } {
  let written = 0;
  let cancel = () => {};
  const tick = () => {
    writer.write(TICK);
    written += TICK.length;
    cancel = clock.after(HOLD_SHAPE_PERIOD_SECONDS * 1000, tick);
  };
  cancel = clock.after(HOLD_SHAPE_PERIOD_SECONDS * 1000, tick);
  return { stop: () => cancel(), written: () => written };
}
