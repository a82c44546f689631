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

/** `promise`'s value, or `fallback` as soon as `signal` aborts; the listener is removed either way. */
export function unlessAborted<T>(promise: Promise<T>, signal: AbortSignal | undefined, fallback: T): Promise<T>;
export function unlessAborted<T, F>(promise: Promise<T>, signal: AbortSignal | undefined, fallback: F): Promise<T | F>;
export function unlessAborted<T, F>(promise: Promise<T>, signal: AbortSignal | undefined, fallback: F): Promise<T | F> {
  if (!signal) return promise;
  if (signal.aborted) return Promise.resolve(fallback);
  return new Promise<T | F>((resolve, reject) => {
    const onAbort = () => resolve(fallback);
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
  });
}
