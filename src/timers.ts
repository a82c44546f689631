/**
 * Time limits that always clean up after themselves: every timer is cleared
 * as soon as the race is decided, so a finished session never keeps the
 * process (or a Lambda invocation) alive.
 */

/** `promise`'s value, or undefined once `ms` have passed; the timer is cleared either way. */
export async function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T | undefined> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([promise, new Promise<undefined>((resolve) => (timer = setTimeout(() => resolve(undefined), ms)))]);
  } finally {
    clearTimeout(timer);
  }
}

/** A clock the engine reads instead of the global one, so tests can control time. */
export interface Clock {
  /** Monotonic milliseconds (performance.now()). */
  now(): number;
  /** Resolves after `ms`, or at once when `signal` aborts; the timer is cleared either way. */
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
}

export const systemClock: Clock = {
  now: () => performance.now(),
  sleep: (ms, signal) =>
    new Promise<void>((resolve) => {
      if (signal?.aborted) return resolve();
      const done = () => {
        clearTimeout(timer);
        signal?.removeEventListener('abort', done);
        resolve();
      };
      const timer = setTimeout(done, ms);
      signal?.addEventListener('abort', done, { once: true });
    }),
};
