import { describe, expect, it } from 'vitest';
import { cgroupVcpus, cpuShare, lambdaVcpus } from '../../src/probe/cpu-share.js';
import { getEventListeners } from 'node:events';
import { SLOT_MS, StartPacer, UTILISATION, WINDOW_MS } from '../../src/probe/start-pacer.js';
import type { Clock } from '../../src/timers.js';

/** A clock the test moves by hand; timers fire in order as it passes them. */
class ManualClock implements Clock {
  t = 0;
  private timers: { at: number; fn: () => void; id: number }[] = [];
  private next = 0;
  now = () => this.t;
  after = (ms: number, fn: () => void) => {
    const id = this.next++;
    this.timers.push({ at: this.t + ms, fn, id });
    return () => {
      this.timers = this.timers.filter((x) => x.id !== id);
    };
  };
  get pending(): number {
    return this.timers.length;
  }
  async advance(ms: number): Promise<void> {
    const end = this.t + ms;
    for (;;) {
      this.timers.sort((a, b) => a.at - b.at);
      const due = this.timers[0];
      if (!due || due.at > end) break;
      this.timers.shift();
      this.t = due.at;
      due.fn();
      await flush();
    }
    this.t = end;
    await flush();
  }
}
const flush = () => new Promise<void>((r) => setImmediate(r));

const lambda512 = { vcpus: lambdaVcpus(512), source: 'lambda-memory' } as const;

describe('the start pacer', () => {
  it('at 512 MB lets one start through at a time, and the next only once the first is over', async () => {
    const clock = new ManualClock();
    const pacer = new StartPacer({ share: lambda512, clock, cpuMs: () => 0 });
    expect(pacer.maxInFlight).toBe(1);
    const first = await pacer.turn();
    let second: { waitedMs: number; done: () => void } | undefined;
    void pacer.turn().then((t) => (second = t));
    await clock.advance(5);
    expect(second).toBeUndefined();
    first.done();
    await flush();
    expect(second?.waitedMs).toBe(5);
    second!.done();
  });

  it('waits out the CPU the starts used beyond half the share before the next', async () => {
    const clock = new ManualClock();
    let cpu = 0;
    const pacer = new StartPacer({ share: lambda512, clock, cpuMs: () => cpu });
    const first = await pacer.turn();
    cpu += 12; // the first start's TLS, upgrade and echo
    await clock.advance(10);
    let second: { waitedMs: number } | undefined;
    void pacer.turn().then((t) => (second = t));
    first.done();
    await flush();
    // 12 ms of CPU, 10 ms passed at 0.145 CPU ms per ms: a debt of 10.55 ms, waited out at that rate.
    const rate = UTILISATION * lambda512.vcpus;
    const expected = (12 - rate * 10) / rate;
    await clock.advance(expected - 2);
    expect(second).toBeUndefined();
    await clock.advance(3);
    expect(second).toBeDefined();
    expect(second!.waitedMs).toBeGreaterThanOrEqual(expected - 1);
    expect(pacer.stats()).toMatchObject({ started: 2, forcedByWindow: 0 });
  });

  it('a start that never says it is over gives its place back after SLOT_MS (it is waiting on the network)', async () => {
    const clock = new ManualClock();
    const pacer = new StartPacer({ share: lambda512, clock, cpuMs: () => 0 });
    await pacer.turn();
    let second = false;
    void pacer.turn().then(() => (second = true));
    await clock.advance(SLOT_MS - 1);
    expect(second).toBe(false);
    await clock.advance(1);
    expect(second).toBe(true);
  });

  it('nobody waits past the window, whatever the CPU says; the forced starts are counted', async () => {
    const clock = new ManualClock();
    let cpu = 0;
    const pacer = new StartPacer({ share: lambda512, clock, cpuMs: () => cpu });
    (await pacer.turn()).done();
    cpu += 60_000; // a minute of CPU: the bucket alone would wait ~7 minutes
    let released = false;
    void pacer.turn().then(() => (released = true));
    await clock.advance(WINDOW_MS - 1);
    expect(released).toBe(false);
    await clock.advance(1);
    expect(released).toBe(true);
    expect(pacer.stats().forcedByWindow).toBe(1);
  });

  it('past the window the in-flight limit goes too: every waiting start is let through at once', async () => {
    const clock = new ManualClock();
    const pacer = new StartPacer({ share: lambda512, clock, cpuMs: () => 0, windowMs: 1_000 });
    let released = 0;
    // Each start holds its place until its slot runs out (SLOT_MS): 20 of them would take 2 s one at a time.
    for (let i = 0; i < 20; i++) void pacer.turn().then(() => released++);
    await flush();
    await clock.advance(999);
    expect(released).toBeLessThan(20);
    await clock.advance(1);
    expect(released).toBe(20);
  });

  it('an aborted run is let through at once (its session then ends interrupted)', async () => {
    const clock = new ManualClock();
    const pacer = new StartPacer({ share: lambda512, clock, cpuMs: () => 0 });
    await pacer.turn();
    const ac = new AbortController();
    let waited: number | undefined;
    void pacer.turn(ac.signal).then((t) => (waited = t.waitedMs));
    await flush();
    expect(waited).toBeUndefined();
    ac.abort('SIGINT');
    await flush();
    expect(waited).toBe(0);
  });

  it("a start that got its turn leaves no listener on the run's signal (hundreds of sessions share it)", async () => {
    const pacer = new StartPacer({ share: { vcpus: 1, source: 'cpus' }, clock: new ManualClock(), cpuMs: () => 0 });
    const ac = new AbortController();
    const turns = await Promise.all(Array.from({ length: 3 }, () => pacer.turn(ac.signal)));
    expect(getEventListeners(ac.signal, 'abort')).toHaveLength(0);
    for (const t of turns) t.done();
  });

  it('with a vCPU or more, several starts go at once (the event loop is one thread: more vCPUs add none)', () => {
    const one = new StartPacer({ share: { vcpus: 1, source: 'cpus' }, cpuMs: () => 0 });
    const eight = new StartPacer({ share: { vcpus: 8, source: 'cpus' }, cpuMs: () => 0 });
    expect(one.maxInFlight).toBe(5); // half of a 100 ms period over 10 ms a start
    expect(eight.maxInFlight).toBe(5);
    expect(new StartPacer({ share: lambda512, cpuMs: () => 0 }).maxInFlight).toBe(1);
  });

  it('leaves no timer behind once the queue is empty', async () => {
    const clock = new ManualClock();
    let cpu = 0;
    const pacer = new StartPacer({ share: lambda512, clock, cpuMs: () => cpu });
    const a = await pacer.turn();
    cpu += 50;
    const b = pacer.turn();
    a.done();
    await clock.advance(1_000);
    (await b).done();
    expect(clock.pending).toBe(0);
  });
});

describe('the CPU share', () => {
  const files = (m: Record<string, string>) => (p: string) => m[p];
  it("reads Lambda's share from the function's memory (one vCPU at 1769 MB)", () => {
    expect(cpuShare({ AWS_LAMBDA_FUNCTION_MEMORY_SIZE: '512' }, files({}), 2)).toEqual({ vcpus: 512 / 1769, source: 'lambda-memory' });
    expect(cpuShare({ AWS_LAMBDA_FUNCTION_MEMORY_SIZE: '4096' }, files({}), 2)).toEqual({ vcpus: 2, source: 'cpus' });
  });
  it('reads a cgroup v2 quota along the path, the tightest winning; "max" is none', () => {
    const read = files({
      '/proc/self/cgroup': '0::/kubepods/pod1/ctr\n',
      '/sys/fs/cgroup/kubepods/pod1/ctr/cpu.max': 'max 100000\n',
      '/sys/fs/cgroup/kubepods/pod1/cpu.max': '50000 100000\n',
      '/sys/fs/cgroup/kubepods/cpu.max': '400000 100000\n',
    });
    expect(cgroupVcpus(read)).toEqual({ vcpus: 0.5, version: 2 });
    expect(cpuShare({}, read, 4)).toEqual({ vcpus: 0.5, source: 'cgroup-v2' });
    expect(cgroupVcpus(files({ '/proc/self/cgroup': '0::/\n', '/sys/fs/cgroup/cpu.max': 'max 100000' }))).toBeUndefined();
  });
  it('reads a cgroup v1 CFS quota (-1 is none)', () => {
    const read = files({
      '/proc/self/cgroup': '4:memory:/x\n1:cpu,cpuacct:/bench\n',
      '/sys/fs/cgroup/cpu,cpuacct/cpu.cfs_period_us': '100000',
      '/sys/fs/cgroup/cpu,cpuacct/cpu.cfs_quota_us': '-1',
      '/sys/fs/cgroup/cpu,cpuacct/bench/cpu.cfs_period_us': '100000',
      '/sys/fs/cgroup/cpu,cpuacct/bench/cpu.cfs_quota_us': '28944',
    });
    expect(cgroupVcpus(read)).toEqual({ vcpus: 0.28944, version: 1 });
  });
  it('no cgroup files (macOS, a locked-down container): the CPUs the OS gives, never a made-up quota', () => {
    expect(cpuShare({}, files({}), 3)).toEqual({ vcpus: 3, source: 'cpus' });
  });
});
