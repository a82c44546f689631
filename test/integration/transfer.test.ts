/**
 * The `kubectl cp` path (`--transfer`, issue 24) against the emulator: 64 MiB through exec and port-forward on
 * both transports, byte-exact; and the emulator's stream faults (a lost tail, a stall, a rate limit) each
 * reported with its own class, inside its deadline.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { EmulatorOptions } from '../../lab/emulator/options.js';
import { startEmulatorWithKubeconfig, type EmulatorWithKubeconfig } from '../../lab/emulator/kubeconfig.js';
import { runPlan } from '../../src/probe/runner.js';
import type { ProbePlan, ProbeReport, SessionResult } from '../../src/probe/types.js';
import { labPlan } from '../helpers/plan.js';

let lab: EmulatorWithKubeconfig | undefined;
afterEach(async () => {
  await lab?.stop();
  lab = undefined;
});

const MiB = 1024 * 1024;

async function transfer(options: EmulatorOptions, bytes: number, over: Partial<ProbePlan> = {}): Promise<ProbeReport> {
  lab = await startEmulatorWithKubeconfig(options);
  return runPlan(labPlan(lab.emulator.url, { transferBytes: bytes, ...over }), { skipPreflight: true });
}

const transfers = (r: ProbeReport): SessionResult[] => r.results.filter((x) => x.transferBytes);

describe('--transfer against the emulator', () => {
  it('64 MiB through exec and port-forward on both transports: byte-exact, with MiB/s, first byte and stalls', async () => {
    const r = await transfer({}, 64 * MiB);
    expect(transfers(r)).toHaveLength(4);
    for (const s of transfers(r)) {
      expect(s.error, `${s.operation}/${s.transport}`).toBeNull();
      expect(s.ok).toBe(true);
      expect(s.transfer).toMatchObject({ bytes: 64 * MiB, sentBytes: 64 * MiB, receivedBytes: 64 * MiB, lostTailBytes: 0, end: 'complete' });
      expect(s.transfer!.mibPerSecond).toBeGreaterThan(0);
      expect(s.transfer!.firstByteMs).toBeGreaterThan(0);
      expect(s.transfer!.exitBeforeLastByte).toBe(s.operation === 'exec' ? false : null);
      if (s.operation === 'exec') expect(s.exitCode).toBe(0);
    }
    const rows = r.verdicts.filter((v) => v.transferBytes === 64 * MiB);
    expect(rows.map((v) => [v.operation, v.verdict])).toEqual([
      ['exec', 'clean'],
      ['portforward', 'clean'],
    ]);
  }, 120_000);

  it('--transfer-shape upload,download,small (kubectl cp one way at a time, many small writes): each its own row, complete and counted as it moved', async () => {
    const r = await transfer({}, 4 * MiB, { transferShapes: ['echo', 'upload', 'download', 'small'] });
    const rows = r.verdicts.filter((v) => v.transferBytes).map((v) => `${v.operation} ${v.transferShape ?? 'echo'} ${v.verdict}`);
    expect(rows).toEqual([
      'exec echo clean',
      'exec upload clean',
      'exec download clean',
      'exec small clean',
      'portforward echo clean',
      'portforward small clean',
    ]);
    for (const s of transfers(r)) {
      expect(s.transfer, `${s.operation} ${s.transferShape} ${s.transport}`).toMatchObject({
        bytes: 4 * MiB,
        sentBytes: 4 * MiB,
        receivedBytes: 4 * MiB,
        end: 'complete',
      });
      // An upload gets nothing back but the pod's count: no first byte; the others time theirs.
      if (s.transferShape === 'upload') expect(s.transfer!.firstByteMs).toBeNull();
      else expect(s.transfer!.firstByteMs).toBeGreaterThan(0);
    }
    // Only the echo rows are published (metrics/datums.ts): the shapes are ad hoc questions.
    expect(transfers(r).filter((s) => !s.transferShape)).toHaveLength(4);
  }, 120_000);

  it('truncate-tail 4096: exit status Success with the last 4096 bytes missing is a lost tail, not ok', async () => {
    const r = await transfer({ faults: { truncateTailBytes: 4096 } }, 8 * MiB, { operations: ['exec'] });
    for (const s of transfers(r)) {
      expect(s.ok).toBe(false);
      expect(s.errorCode).toBe('TRANSFER_TRUNCATED');
      expect(s.exitCode).toBe(0);
      expect(s.transfer).toMatchObject({ end: 'truncated', sentBytes: 8 * MiB, receivedBytes: 8 * MiB - 4096, lostTailBytes: 4096, exitBeforeLastByte: true });
      expect(s.error).toMatch(/exit status 0 came with 8384512 of 8388608 bytes back: the last 4096 bytes were lost/);
    }
    const row = r.verdicts.find((v) => v.transferBytes)!;
    expect(row.verdict).toBe('both-broken');
    expect(row.diagnosis.map((d) => d.code)).toContain('transfer-tail-lost');
  }, 60_000);

  it('stall-after 1 MiB: each transfer ends as stalled within its 10 s stall deadline, at the byte count it stopped at', async () => {
    const r = await transfer({ faults: { stallAfterBytes: MiB } }, 8 * MiB, { operations: ['exec'] });
    for (const s of transfers(r)) {
      // The transfers run one after another; each one's own session ends at its stall deadline, not a hang.
      expect(s.durationMs).toBeLessThan(14_000);
      expect(s.errorCode, `${s.operation}/${s.transport}`).toBe('TRANSFER_STALLED');
      expect(s.transfer!.end).toBe('stalled');
      // The first echo's bytes went through the same stream before the transfer.
      expect(MiB - s.transfer!.receivedBytes).toBeLessThan(64);
      expect(s.transfer!.longestStallSeconds).toBeGreaterThanOrEqual(10);
    }
    for (const v of r.verdicts.filter((x) => x.transferBytes)) expect(v.diagnosis.map((d) => d.code)).toContain('transfer-stalled');
  }, 60_000);

  it('the transfers run one after another, each with the path to itself', async () => {
    const r = await transfer({ faults: { throttleBytesPerSecond: 4 * MiB } }, 2 * MiB);
    const t = transfers(r);
    expect(t).toHaveLength(4);
    // Each transfer takes ≈ 0.5 s at 4 MiB/s; one after another they take ≈ 2 s, not ≈ 0.5 s.
    expect(r.durationMs).toBeGreaterThan(1800);
    expect(Math.max(...t.map((s) => s.transfer!.mibPerSecond))).toBeLessThan(4.4);
  }, 60_000);

  it('throttle 1 MiB/s: complete, and the measured rate is the throttle, not the client', async () => {
    const r = await transfer({ faults: { throttleBytesPerSecond: MiB } }, 3 * MiB, { operations: ['portforward'], transports: ['spdy'] });
    const s = transfers(r)[0]!;
    expect(s.transfer!.end).toBe('complete');
    expect(s.transfer!.mibPerSecond).toBeGreaterThan(0.7);
    expect(s.transfer!.mibPerSecond).toBeLessThan(1.1);
  }, 60_000);
});
