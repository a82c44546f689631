/**
 * Time limits that always clean up after themselves: every timer is cleared
 * as soon as the race is decided, so a finished session never keeps the
 * process (or a Lambda invocation) alive. The clock is injectable, so tests
 * can drive time instead of waiting for it.
 */

/** A clock the engine reads and schedules on instead of the global one. */
export interface Clock {
  /** Monotonic milliseconds (performance.now()). */
  now(): number;
  /** Calls `fn` after `ms`; the returned function cancels it. */
  after(ms: number, fn: () => void): () => void;
}

export const systemClock: Clock = {
  now: () => performance.now(),
  after: (ms, fn) => {
    const timer = setTimeout(fn, ms);
    return () => clearTimeout(timer);
  },
};

/** `promise`'s value, or undefined once `ms` have passed; the timer is cancelled either way. */
export async function withTimeout<T>(promise: Promise<T>, ms: number, clock: Clock = systemClock): Promise<T | undefined> {
  let cancel: (() => void) | undefined;
  try {
    return await Promise.race([promise, new Promise<undefined>((resolve) => (cancel = clock.after(ms, () => resolve(undefined))))]);
  } finally {
    cancel?.();
  }
}
