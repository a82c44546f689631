/**
 * Sessions that join the container's one process (SHARED_PROCESS_OPERATIONS: attach). Whatever one of them writes,
 * the process's output carries to every attached session (containerd, pkg/cri/io/container_io.go Attach), so a hold
 * is idle only while no other attached session writes. The runner therefore runs them by hold length, shortest first,
 * one length after another (`sharedProcessGroups`), and within a length every session's hold begins only once all of
 * them have proven their first echo (`HoldBarrier`): they hold together and echo together at the end, and no
 * session's echo lands inside another's quiet. Follow-up sessions that need a quiet connection (the idle ladder,
 * the activity check) run as exec, which starts a process of its own on the same path (`quietOperation`).
 */
import { SHARED_PROCESS_OPERATIONS, type Operation } from '../vocabulary.js';
import type { SessionSpec } from './types.js';

/** Whether a session joins the container's one process (and a transfer never does: it runs alone). */
export const sharesProcess = (s: SessionSpec): boolean => SHARED_PROCESS_OPERATIONS.includes(s.operation) && !s.transferBytes;

/** The operation a follow-up session of `operation` runs as: one whose hold no other session's echo can reach. */
export const quietOperation = (operation: Operation): Operation => (SHARED_PROCESS_OPERATIONS.includes(operation) ? 'exec' : operation);

/** The sessions (by index in `specs`) that share the process, grouped by hold, shortest hold first. */
export function sharedProcessGroups(specs: readonly SessionSpec[]): number[][] {
  const byHold = new Map<number, number[]>();
  specs.forEach((s, i) => {
    if (sharesProcess(s)) byHold.set(s.holdSeconds, [...(byHold.get(s.holdSeconds) ?? []), i]);
  });
  return [...byHold.entries()].sort(([a], [b]) => a - b).map(([, group]) => group);
}

/** One session's place at a HoldBarrier. */
export interface HoldTurn {
  /** This session is past its first echo (or failed before it): it will write nothing more until its hold is over. */
  arrive(): void;
  /** Resolves when every session of the group has arrived. */
  readonly ready: Promise<void>;
}

/**
 * The start line of one group's holds. Each session arrives once (again is a no-op); a session that ends any other
 * way (its deadline, an interruption) is arrived for by the runner, so nobody waits for a session that is gone.
 */
export class HoldBarrier {
  private waiting: number;
  private release!: () => void;
  private readonly all: Promise<void>;

  constructor(parties: number) {
    this.waiting = parties;
    this.all = new Promise((resolve) => (this.release = resolve));
    if (parties <= 0) this.release();
  }

  turn(): HoldTurn {
    let arrived = false;
    return {
      arrive: () => {
        if (arrived) return;
        arrived = true;
        if (--this.waiting === 0) this.release();
      },
      ready: this.all,
    };
  }
}
