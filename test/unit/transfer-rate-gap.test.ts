/**
 * A rate gap between the transports is a finding only when the slower transfer lasted long enough for its rate to
 * mean something (src/probe/transfer-diagnosis.ts RATE_GAP_MIN_SECONDS): a 1 MiB upload that took 90 ms on a busy host
 * against 20 ms is no hop (seen as a false transfer-slow in test/lab/kubectl-cp.test.ts under load).
 */
import { describe, expect, it } from 'vitest';
import { RATE_GAP_MIN_SECONDS, SLOW_RATIO, transferRateGap } from '../../src/probe/transfer-diagnosis.js';
import type { TransferOutcome } from '../../src/probe/transfer.js';
import { session } from '../helpers/sessions.js';

const MiB = 1024 * 1024;
const moved = (bytes: number, seconds: number): TransferOutcome =>
  ({
    bytes,
    sentBytes: bytes,
    receivedBytes: bytes,
    seconds,
    mibPerSecond: Math.round((bytes / MiB / seconds) * 100) / 100,
    firstByteMs: 1,
    longestStallSeconds: 0,
    longestStallAtBytes: 0,
    exitBeforeLastByte: false,
    exitCode: 0,
    lostTailBytes: 0,
    end: 'complete',
  }) as TransferOutcome;

describe('transferRateGap', () => {
  it('a gap over a transfer too short to measure a rate is no finding', () => {
    const spdy = session('spdy', { transfer: moved(MiB, 0.02) });
    const ws = session('websocket', { transfer: moved(MiB, 0.09) });
    expect(ws.transfer!.seconds).toBeLessThan(RATE_GAP_MIN_SECONDS);
    expect(transferRateGap(spdy, ws)).toBeUndefined();
  });

  it('the same gap over transfers that took seconds is one', () => {
    const spdy = session('spdy', { transfer: moved(64 * MiB, 0.5) });
    const ws = session('websocket', { transfer: moved(64 * MiB, 0.5 * (SLOW_RATIO + 1)) });
    expect(transferRateGap(spdy, ws)).toMatchObject({
      code: 'transfer-slow',
      summary: expect.stringMatching(/^WebSocket exec moved 64 MiB at [\d.]+ MiB\/s, 5× slower than SPDY/),
    });
  });
});
