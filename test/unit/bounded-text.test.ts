/** What a peer writes on a stream read whole is kept to a bound and counted past it (issue 57 §3). */
import { describe, expect, it } from 'vitest';
import { BoundedBytes, ERROR_STREAM_MAX_BYTES } from '../../src/streaming/bounded-text.js';
import { MESSAGE_MAX_CHARS, boundedMessage, decodeExecStatus } from '../../src/streaming/channel/exec-status.js';

describe('BoundedBytes', () => {
  it('keeps the first max bytes across chunks and counts every byte', () => {
    const b = new BoundedBytes(10);
    for (const c of ['abcd', 'efgh', 'ijkl', 'mnop']) b.push(Buffer.from(c));
    expect([b.text(), b.total, b.overflowed]).toEqual(['abcdefghij', 16, true]);
  });
});

describe('decodeExecStatus with a bounded stream', () => {
  it('more than the bound is never a Status believed: EXEC_STATUS naming the size', () => {
    const kept = `{"kind":"Status","status":"Failure","message":"${'x'.repeat(ERROR_STREAM_MAX_BYTES)}`.slice(0, ERROR_STREAM_MAX_BYTES);
    const r = decodeExecStatus(kept, 'v5.channel.k8s.io', 52_428_800);
    expect(r.exitCode).toBeUndefined();
    expect(r.error?.code).toBe('EXEC_STATUS');
    expect(r.error?.message).toMatch(
      /^error stream protocol error: 52,428,800 bytes, more than the 65,536 bytes a status may take; it began "\{"kind":"Status"/,
    );
    expect(r.error!.message.length).toBeLessThan(300);
  });
  it('a Status under the bound with a long message: the message cut at MESSAGE_MAX_CHARS, its length said', () => {
    const message = 'm'.repeat(20_000);
    const r = decodeExecStatus(JSON.stringify({ kind: 'Status', status: 'Failure', reason: 'InternalError', message }), 'v4.channel.k8s.io');
    expect(r.error?.code).toBe('EXEC_FAILED');
    expect(r.error?.message).toBe(`${'m'.repeat(MESSAGE_MAX_CHARS)}… (20,000 characters)`);
    expect(r.status?.message).toBe(r.error?.message);
    expect(boundedMessage('short')).toBe('short');
  });
});
