/** withRetry's rules (src/probe/retry.ts): what is retried, how the attempts are told, and the deadline it keeps. */
import { describe, expect, it } from 'vitest';
import { withRetry } from '../../src/probe/retry.js';
import type { SessionResult } from '../../src/probe/types.js';
import { OK_UPGRADE, session } from '../helpers/sessions.js';

const refused = session('websocket', {
  ok: false,
  firstEchoMs: null,
  echoMs: null,
  upgrade: { ...OK_UPGRADE, ok: false, status: 403, handshakeMs: null, error: 'HTTP 403', errorCode: 'UPGRADE_REJECTED', kubernetesStatus: false },
});
const worked = session('websocket', {});
const cut = session('websocket', {
  holdSeconds: 65,
  ok: false,
  error: 'lost',
  errorCode: 'SESSION_LOST',
  hold: { survived: false, disconnectSeconds: 61, cause: 'fin' },
});

function attempts(...results: SessionResult[]) {
  let n = 0;
  const fn = async () => results[Math.min(n++, results.length - 1)]!;
  return { fn, count: () => n };
}

describe('withRetry', () => {
  it('a failure before the hold is tried once more: passed, failed the same way, failed differently', async () => {
    const a = attempts(refused, worked);
    expect((await withRetry(a.fn, { pauseMs: 0 })).retry).toMatchObject({ outcome: 'passed', first: { upgrade: { status: 403 } } });
    expect(a.count()).toBe(2);
    expect((await withRetry(attempts(refused, refused).fn, { pauseMs: 0 })).retry?.outcome).toBe('failed-same');
    const timeout = session('websocket', { ...refused, upgrade: { ...refused.upgrade, status: null, errorCode: 'UPGRADE_TIMEOUT' } });
    expect((await withRetry(attempts(refused, timeout).fn, { pauseMs: 0 })).retry?.outcome).toBe('failed-differently');
  });

  it('a hold that was cut, or a session that worked, is not retried', async () => {
    for (const r of [cut, worked]) {
      const a = attempts(r, worked);
      expect(await withRetry(a.fn, { pauseMs: 0 })).toBe(r);
      expect(a.count()).toBe(1);
    }
  });

  it("not when a second attempt could end after the run's deadline: the first failure stands", async () => {
    const late = attempts(refused, worked);
    expect(await withRetry(late.fn, { pauseMs: 0, untilMs: performance.now() + 5_000, attemptMs: 30_000 })).toBe(refused);
    expect(late.count()).toBe(1);
    const inTime = attempts(refused, worked);
    expect((await withRetry(inTime.fn, { pauseMs: 0, untilMs: performance.now() + 60_000, attemptMs: 30_000 })).retry?.outcome).toBe('passed');
  });
});
