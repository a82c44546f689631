/**
 * Faults on the bytes a pod sends back (exec stdout, a forwarded port's data), for the `kubectl cp` path
 * (issue 24): the tail lost before a Success status (the slow-reader truncation of knoppiks/k8s-exec-truncation-repro,
 * kubernetes#60140, #124571), a stream that stops moving after N bytes (a hop or runtime holding it), and a rate
 * limit (a hop's `limit_rate`).
 */

export interface StreamFaults {
  /**
   * Drop the last N bytes of exec stdout that are still in flight when the process exits (written within
   * TAIL_RELEASE_MS of its exit); the exit status (Success) is still sent. Output that then goes quiet (an echo)
   * is sent after TAIL_RELEASE_MS, as the race in the field loses only what is in flight at the exit.
   */
  readonly truncateTailBytes?: number;
  /** Forward only the first N bytes; nothing after them moves (the exit status neither), the connection stays open. */
  readonly stallAfterBytes?: number;
  /** Send at most this many bytes per second. */
  readonly throttleBytesPerSecond?: number;
  /**
   * Never pass stdin's end to an exec's process (v5's close signal on channel 255, the SPDY stdin stream's FIN): a
   * kubelet or runtime leg that loses it. The process keeps reading and never exits; no exit status comes.
   */
  readonly loseStdinEof?: boolean;
  /**
   * Ignore every terminal resize (WebSocket channel 4, the SPDY resize stream): a runtime that never applies them, so a
   * TTY session keeps the size it started with (0×0 for a container's pty) and a full-screen program never redraws.
   */
  readonly dropResize?: boolean;
}

/** How much may wait in the throttle's queue before the source is asked to pause. */
const HIGH_WATER_BYTES = 1024 * 1024;
const TICK_MS = 20;
/** How long held-back tail bytes wait for more output before they are sent after all. */
const TAIL_RELEASE_MS = 50;

/**
 * A sink with the faults applied. `write` returns false when the source should pause (then `onDrain` is called);
 * `flush` resolves once everything allowed through has been sent, and never when the stream stalled (nothing
 * after the stall moves, so neither does what follows it, such as the exit status).
 */
export class FaultySink {
  private passed = 0;
  private held = Buffer.alloc(0);
  private queue: Buffer[] = [];
  private queued = 0;
  private timer: NodeJS.Timeout | undefined;
  private release: NodeJS.Timeout | undefined;
  private stalled = false;
  private flushed: (() => void)[] = [];
  onDrain: () => void = () => undefined;

  constructor(
    private readonly sink: (b: Buffer) => void,
    private readonly faults: StreamFaults = {},
  ) {}

  static wrap(sink: (b: Buffer) => void, faults: StreamFaults | undefined): FaultySink | undefined {
    return faults && (faults.truncateTailBytes || faults.stallAfterBytes !== undefined || faults.throttleBytesPerSecond)
      ? new FaultySink(sink, faults)
      : undefined;
  }

  write(chunk: Buffer): boolean {
    let b = chunk;
    const tail = this.faults.truncateTailBytes ?? 0;
    if (tail > 0) {
      // Hold back the last `tail` bytes seen: whatever is held when the process exits is never sent.
      const all = Buffer.concat([this.held, b]);
      this.held = all.subarray(Math.max(0, all.length - tail));
      b = all.subarray(0, Math.max(0, all.length - tail));
      clearTimeout(this.release);
      this.release = setTimeout(() => {
        const late = this.held;
        this.held = Buffer.alloc(0);
        if (late.length) this.pass(late);
      }, TAIL_RELEASE_MS);
    }
    return this.pass(b);
  }

  private pass(chunk: Buffer): boolean {
    let b = chunk;
    const stallAt = this.faults.stallAfterBytes;
    if (stallAt !== undefined) {
      if (this.passed >= stallAt) return ((this.stalled = true), true);
      if (this.passed + b.length > stallAt) {
        b = b.subarray(0, stallAt - this.passed);
        this.stalled = true;
      }
    }
    this.passed += b.length;
    if (b.length === 0) return true;
    if (!this.faults.throttleBytesPerSecond) {
      this.sink(b);
      return true;
    }
    this.queue.push(b);
    this.queued += b.length;
    this.timer ??= setInterval(() => this.tick(), TICK_MS);
    return this.queued < HIGH_WATER_BYTES;
  }

  private tick(): void {
    let budget = Math.max(1, Math.floor((this.faults.throttleBytesPerSecond! * TICK_MS) / 1000));
    while (budget > 0 && this.queue.length) {
      const head = this.queue[0]!;
      const n = Math.min(budget, head.length);
      this.sink(head.subarray(0, n));
      budget -= n;
      this.queued -= n;
      if (n === head.length) this.queue.shift();
      else this.queue[0] = head.subarray(n);
    }
    if (this.queued < HIGH_WATER_BYTES) this.onDrain();
    if (this.queue.length === 0) {
      clearInterval(this.timer);
      this.timer = undefined;
      for (const f of this.flushed.splice(0)) f();
    }
  }

  /** Resolves when what was let through has been sent; never after a stall. The truncated tail is dropped. */
  flush(): Promise<void> {
    clearTimeout(this.release);
    this.held = Buffer.alloc(0);
    if (this.stalled) return new Promise(() => undefined);
    if (this.queue.length === 0) return Promise.resolve();
    return new Promise((resolve) => this.flushed.push(resolve));
  }

  /** Stops the throttle's timer (the session went away). */
  dispose(): void {
    clearTimeout(this.release);
    clearInterval(this.timer);
    this.timer = undefined;
    this.queue = [];
  }
}
