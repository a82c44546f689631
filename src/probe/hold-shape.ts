/**
 * Shaped holds (`--hold-shape`, exec only): what the pod runs and what moves during the hold, so that a hop
 * with one idle timer per direction (HAProxy `timeout client` / `timeout server` with
 * `option independent-streams`, one-way NAT and load-balancer timers) shows up.
 *
 * - `silent`: `cat`; nothing moves but the keepalive's pings (the default, and the only shape for port-forward).
 * - `output`: the pod writes a tick every HOLD_SHAPE_PERIOD_SECONDS and reads nothing (`tail -f`, `kubectl logs -f`
 *   through exec). Proven by a tick arriving right after the upgrade and another after the hold.
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

/** The command the target runs for each shape. */
export function holdShapeCommand(shape: HoldShape | undefined): string[] {
  switch (shape) {
    case 'output':
      return ['sh', '-c', `while true; do echo ${TICK.trim()}; sleep ${HOLD_SHAPE_PERIOD_SECONDS}; done`];
    case 'input':
      return ['sh', '-c', 'head -n 1; exec wc -c'];
    default:
      return ['cat'];
  }
}

/** Which side is quiet during a shaped hold, in words: the direction a one-way idle timer would see idle. */
export const QUIET_DIRECTION: Readonly<Record<Exclude<HoldShape, 'silent'>, string>> = {
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
