/**
 * The start pacer (issue 26, "measure the path, not ourselves"). A session's start (dial, TLS, upgrade, first
 * echo) is the CPU-heavy part of it; its hold is idle. Started all at once, the sessions' starts queue behind each
 * other's CPU work, and under a CPU quota (Lambda's share of a vCPU for its memory, a container limit) the quota
 * runs out inside the handshakes: the 101 arrives while the process is throttled, and HandshakeLatency reads the
 * function's CPU as the path's latency (the lambda-cpu benchmark: SPDY ~10× unlimited at 512 MB).
 *
 * So starts are let through at a pace sized by the process's CPU share (cpu-share.ts):
 * - at most `maxInFlight` starts at once, where that many starts' CPU fits in half of one quota period
 *   ((1 − UTILISATION) × min(1, vCPUs) × PERIOD_MS / START_CPU_MS, at least 1: the event loop is one thread, so
 *   more than one vCPU does not make our handshakes' CPU work go faster); a start holds its place until its first
 *   echo (or its failure), or SLOT_MS at most: past that it is waiting on the network, not using CPU;
 * - and only while this process's measured CPU (process.cpuUsage, everything it does: REST calls, other
 *   sessions' pings, GC) stays within UTILISATION of the share, as a leaky bucket one period deep: CPU used beyond
 *   that rate is a debt the next start waits out.
 * Nobody waits forever: a start is let through WINDOW_MS after the pacer began at the latest, even if the CPU
 * budget says otherwise (the Lambda's time budget counts the window; a handshake our CPU still distorts is
 * marked by own-cpu.ts and not published). Unquota'd, on a laptop or with a vCPU or more, 5 starts go at once and
 * the pace is seldom felt; at Lambda's 512 MB (0.29 vCPU) one at a time.
 */
import { systemClock, unlessAborted, type Clock } from '../timers.js';
import { cpuShare, type CpuShare } from './cpu-share.js';

/** The CFS scheduler's default quota period (and a Lambda's accounting is no coarser for our purpose), ms. */
export const PERIOD_MS = 100;
/** The share of the CPU quota the starts may use; the rest is the headroom that keeps a handshake unthrottled. */
export const UTILISATION = 0.5;
/**
 * CPU of one session's start, ms (dial, TLS, upgrade, streams, first echo): 8-13 ms per session measured on the
 * development machine (x86, TLS to the emulator, `npm run bench -- lambda-cpu`); a prior only — the bucket
 * measures what is really used.
 */
export const START_CPU_MS = 10;
/** Longest a start holds its place in flight, ms: after that it is waiting on the network. */
export const SLOT_MS = 100;
/** Longest any start waits after the pacer began, ms (counted in the Lambda's time budget). */
export const WINDOW_MS = 20_000;

export interface PacerOptions {
  readonly share?: CpuShare;
  readonly clock?: Clock;
  /** This process's CPU time so far, ms (process.cpuUsage). */
  readonly cpuMs?: () => number;
  readonly windowMs?: number;
  /** Overrides the starts let through at once (the benchmark's one-at-a-time floor). */
  readonly maxInFlight?: number;
}

export interface PacerStats {
  readonly share: CpuShare;
  readonly maxInFlight: number;
  /** Starts let through so far. */
  readonly started: number;
  /** The longest any start waited for its turn, ms. */
  readonly longestWaitMs: number;
  /** Starts let through by the window rather than by the budget. */
  readonly forcedByWindow: number;
}

/** This process's share, read once: the memory size, the cgroup's quota and the CPUs do not change while it runs. */
let processShare: CpuShare | undefined;
const thisProcessShare = (): CpuShare => (processShare ??= cpuShare());

const processCpuMs = () => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
};

interface Waiter {
  readonly since: number;
  readonly resolve: (waitedMs: number) => void;
}

export class StartPacer {
  readonly share: CpuShare;
  readonly maxInFlight: number;
  private readonly clock: Clock;
  private readonly cpuMs: () => number;
  private readonly deadline: number;
  /** CPU used beyond the allowed rate, ms (the bucket's level). */
  private debt = 0;
  private lastAt: number;
  private lastCpu: number;
  private inFlight = 0;
  private readonly queue: Waiter[] = [];
  private cancelTimer: (() => void) | undefined;
  private started = 0;
  private longestWaitMs = 0;
  private forcedByWindow = 0;

  constructor(options: PacerOptions = {}) {
    this.share = options.share ?? thisProcessShare();
    this.clock = options.clock ?? systemClock;
    this.cpuMs = options.cpuMs ?? processCpuMs;
    this.maxInFlight = options.maxInFlight ?? Math.max(1, Math.floor(((1 - UTILISATION) * this.loopVcpus * PERIOD_MS) / START_CPU_MS));
    this.lastAt = this.clock.now();
    this.deadline = this.lastAt + (options.windowMs ?? WINDOW_MS);
    this.lastCpu = this.cpuMs();
  }

  /**
   * The vCPUs our starts can use: JavaScript, TLS and zlib run on the one event-loop thread, so a share above one
   * vCPU does not make a handshake's CPU work go faster (it only leaves the kernel and GC threads room).
   */
  private get loopVcpus(): number {
    return Math.min(1, this.share.vcpus);
  }

  /** CPU ms per wall ms the starts may keep the process at. */
  private get rate(): number {
    return UTILISATION * this.loopVcpus;
  }

  /**
   * Waits for this start's turn; resolves with how long it waited (ms) and a function to call when the start is
   * over (first echo done or failed). Calling it more than once is harmless. An aborted signal lets it through
   * at once (the session then ends `interrupted` on its own).
   */
  async turn(signal?: AbortSignal): Promise<{ waitedMs: number; done: () => void }> {
    let w!: Waiter;
    const queued = new Promise<number>((resolve) => {
      w = { since: this.clock.now(), resolve };
      this.queue.push(w);
      this.pump();
    });
    // Aborted while waiting: it goes at once, holding a place like any other start until done() (unlessAborted
    // removes its listener either way: hundreds of sessions share the run's signal).
    const waitedMs = await unlessAborted(queued, signal, 'aborted' as const);
    if (waitedMs === 'aborted') {
      const i = this.queue.indexOf(w);
      if (i >= 0) {
        this.queue.splice(i, 1);
        this.inFlight++;
      }
    }
    let over = false;
    const cancelSlot = this.clock.after(SLOT_MS, () => done());
    const done = () => {
      if (over) return;
      over = true;
      cancelSlot();
      this.inFlight--;
      this.pump();
    };
    return { waitedMs: waitedMs === 'aborted' ? 0 : waitedMs, done };
  }

  stats(): PacerStats {
    return {
      share: this.share,
      maxInFlight: this.maxInFlight,
      started: this.started,
      longestWaitMs: Math.round(this.longestWaitMs),
      forcedByWindow: this.forcedByWindow,
    };
  }

  /** The bucket's level now: CPU used since the last look, less what the rate allowed. */
  private settle(now: number): void {
    const cpu = this.cpuMs();
    this.debt = Math.max(0, this.debt + (cpu - this.lastCpu) - this.rate * (now - this.lastAt));
    this.lastCpu = cpu;
    this.lastAt = now;
  }

  private pump(): void {
    this.cancelTimer?.();
    this.cancelTimer = undefined;
    for (;;) {
      const now = this.clock.now();
      // Past the window every waiting start goes, in-flight limit or not: the time budget counts no more.
      const forced = now >= this.deadline;
      if (!this.queue.length || (this.inFlight >= this.maxInFlight && !forced)) return;
      this.settle(now);
      if (this.debt > 0 && !forced) {
        // Wait the debt out (never less than a millisecond, never past the window).
        const waitMs = Math.max(1, Math.min(this.debt / this.rate, this.deadline - now));
        this.cancelTimer = this.clock.after(waitMs, () => this.pump());
        return;
      }
      if (forced && (this.debt > 0 || this.inFlight >= this.maxInFlight)) this.forcedByWindow++;
      const w = this.queue.shift()!;
      this.inFlight++;
      this.started++;
      const waited = now - w.since;
      this.longestWaitMs = Math.max(this.longestWaitMs, waited);
      w.resolve(Math.round(waited * 10) / 10);
    }
  }
}
