/**
 * The transfer's classification on in-memory streams (the network paths are in test/integration/transfer.test.ts
 * and test/lab/kubectl-cp.test.ts): a corrupted byte found at its offset, a tail lost before the exit status, a
 * connection ended mid-way; and the vocabulary around it (sizes, the event, the plan's rows).
 */
import { PassThrough, Transform } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { parseProbeEvent } from '../../src/lambda/event.js';
import { rowText } from '../../src/probe/row-text.js';
import { expandPlan } from '../../src/probe/runner.js';
import { runTransfer } from '../../src/probe/transfer.js';
import type { ExecExit } from '../../src/streaming/types.js';
import { systemClock } from '../../src/timers.js';
import { parseSize } from '../../src/vocabulary.js';

const MiB = 1024 * 1024;
const never = new Promise<{ cause: string }>(() => undefined);

/** A pipe from writer to reader through `alter` (per chunk, with the stream offset). */
function pipe(alter: (chunk: Buffer, at: number) => Buffer) {
  let at = 0;
  const writer = new Transform({
    transform(chunk: Buffer, _enc, done) {
      const out = alter(chunk, at);
      at += chunk.length;
      done(null, out);
    },
  });
  const reader = new PassThrough();
  writer.pipe(reader);
  return { writer, reader };
}

describe('runTransfer', () => {
  it('a byte altered on the way is TRANSFER_MISMATCH at its offset', async () => {
    const bad = 3 * 65536 + 17;
    const p = pipe((c, at) => {
      if (bad >= at && bad < at + c.length) {
        const copy = Buffer.from(c);
        copy[bad - at] = copy[bad - at]! ^ 0xff;
        return copy;
      }
      return c;
    });
    const { outcome, failure } = await runTransfer({ ...p, lost: never }, { bytes: MiB, clock: systemClock });
    expect(outcome.end).toBe('mismatch');
    expect(failure).toMatchObject({ code: 'TRANSFER_MISMATCH', context: { offset: bad } });
  });

  it('a 64 KiB block repeated (same length, stale bytes) is caught at the repeat', async () => {
    let first: Buffer | undefined;
    const p = pipe((c, at) => {
      if (at === 0) first = Buffer.from(c);
      return at === 65536 ? first!.subarray(0, c.length) : c;
    });
    const { failure } = await runTransfer({ ...p, lost: never }, { bytes: 4 * 65536, clock: systemClock });
    expect(failure).toMatchObject({ code: 'TRANSFER_MISMATCH' });
    expect((failure!.context as { offset: number }).offset).toBeGreaterThanOrEqual(65536);
    expect((failure!.context as { offset: number }).offset).toBeLessThan(65536 + 64);
  });

  it('exit 0 with the last 4096 bytes missing: truncated, the lost tail counted, the exit before the last byte', async () => {
    const bytes = MiB;
    let exit!: (e: ExecExit) => void;
    const exitP = new Promise<ExecExit>((r) => (exit = r));
    const p = pipe((c, at) => {
      const keep = Math.max(0, Math.min(c.length, bytes - 4096 - at));
      if (at + c.length >= bytes) setImmediate(() => exit({ exitCode: 0 }));
      return c.subarray(0, keep);
    });
    const { outcome, failure } = await runTransfer({ ...p, exit: exitP, lost: never }, { bytes, clock: systemClock });
    expect(outcome).toMatchObject({
      end: 'truncated',
      sentBytes: bytes,
      receivedBytes: bytes - 4096,
      lostTailBytes: 4096,
      exitBeforeLastByte: true,
      exitCode: 0,
    });
    expect(failure!.message).toBe('exit status 0 came with 1044480 of 1048576 bytes back: the last 4096 bytes were lost');
  });

  it('exit 0 before the last 4096 bytes, which then all arrive: complete, and the exit said to have come first', async () => {
    const bytes = MiB;
    let exit!: (e: ExecExit) => void;
    const exitP = new Promise<ExecExit>((r) => (exit = r));
    // The server's side: stdout minus its last 4096 bytes, then the status, then (20 ms later, within the
    // tail's grace) the held-back tail, and only then the end of stdout.
    const reader = new PassThrough();
    const held: Buffer[] = [];
    let at = 0;
    const writer = new Transform({
      transform(chunk: Buffer, _enc, done) {
        const keep = Math.max(0, Math.min(chunk.length, bytes - 4096 - at));
        at += chunk.length;
        if (keep < chunk.length) held.push(chunk.subarray(keep));
        done(null, chunk.subarray(0, keep));
      },
      flush(done) {
        exit({ exitCode: 0 });
        setTimeout(() => (reader.end(Buffer.concat(held)), done()), 20);
      },
    });
    writer.pipe(reader, { end: false });
    const { outcome, failure } = await runTransfer({ writer, reader, exit: exitP, lost: never }, { bytes, clock: systemClock });
    expect(failure).toBeUndefined();
    expect(outcome).toMatchObject({ end: 'complete', receivedBytes: bytes, lostTailBytes: 0, exitBeforeLastByte: true, exitCode: 0 });
  });

  it('every byte back, then a non-zero exit: not complete (truncated, the status named), though no byte was lost', async () => {
    const bytes = MiB;
    let exit!: (e: ExecExit) => void;
    const exitP = new Promise<ExecExit>((r) => (exit = r));
    const p = pipe((c, at) => {
      if (at + c.length >= bytes) setTimeout(() => exit({ exitCode: 2 }), 20);
      return c;
    });
    const { outcome, failure } = await runTransfer({ ...p, exit: exitP, lost: never }, { bytes, clock: systemClock });
    expect(outcome).toMatchObject({ end: 'truncated', receivedBytes: bytes, exitBeforeLastByte: false, exitCode: 2 });
    expect(failure!.message).toBe('exit status 2 after all 1048576 bytes came back');
  });

  it('every byte back and no exit status: ends no-status after the 3 s grace, not at the transfer limit', async () => {
    const p = pipe((c) => c);
    const t0 = performance.now();
    const { outcome, failure } = await runTransfer({ ...p, exit: new Promise<ExecExit>(() => undefined), lost: never }, { bytes: MiB, clock: systemClock });
    expect(outcome).toMatchObject({ end: 'no-status', receivedBytes: MiB, lostTailBytes: 0 });
    expect(failure).toMatchObject({ code: 'EXEC_NO_STATUS', message: 'all 1048576 bytes came back, but no exit status within 3 s' });
    expect(performance.now() - t0).toBeLessThan(6_000);
  });

  it('the connection ending mid-way is TRANSFER_ENDED with what came back', async () => {
    let end!: (e: { cause: string }) => void;
    const lost = new Promise<{ cause: string }>((r) => (end = r));
    const p = pipe((c, at) => {
      if (at >= 256 * 1024) {
        setImmediate(() => end({ cause: 'rst' }));
        return Buffer.alloc(0);
      }
      return c;
    });
    const { outcome, failure } = await runTransfer({ ...p, lost }, { bytes: MiB, clock: systemClock });
    expect(outcome.end).toBe('ended');
    expect(outcome.receivedBytes).toBe(256 * 1024);
    expect(failure).toMatchObject({ code: 'TRANSFER_ENDED', context: { receivedBytes: 256 * 1024, cause: 'rst' } });
  });
});

describe('sizes, the event and the plan', () => {
  it('parseSize: binary units only, 0/off is none, at most 1GiB', () => {
    expect(parseSize('--transfer', '8MiB')).toBe(8 * MiB);
    expect(parseSize('--transfer', '512KiB')).toBe(512 * 1024);
    expect(parseSize('--transfer', '1Gi')).toBe(1024 * MiB);
    expect(parseSize('--transfer', '4096')).toBe(4096);
    expect(parseSize('--transfer', '0')).toBeUndefined();
    expect(parseSize('--transfer', 'off')).toBeUndefined();
    expect(() => parseSize('--transfer', '8MB')).toThrow(/--transfer "8MB" is not a size/);
    expect(() => parseSize('--transfer', '2GiB')).toThrow(/"2GiB" is not a size \(.*at most 1GiB\)/);
    expect(() => parseSize('--transfer', '-1MiB')).toThrow(/is not a size/);
  });

  it('the event: transfer and holdShapes validated with their field names', () => {
    expect(parseProbeEvent({ transfer: '8MiB', holdShapes: ['silent', 'output'] })).toMatchObject({ transferBytes: 8 * MiB, holdShapes: ['silent', 'output'] });
    expect(() => parseProbeEvent({ transfer: 8e9 })).toThrow(/event.transfer 8000000000 is not a transfer size \(.*at most 1GiB\)/);
    expect(() => parseProbeEvent({ transfer: { size: 1 } })).toThrow(/event.transfer \{"size":1\} is not a transfer size/);
    expect(() => parseProbeEvent({ holdShapes: ['loud'] })).toThrow(/event.holdShapes\[0\] "loud" is not one of silent, output, input/);
  });

  it('the plan: shapes only on exec holds, transfers once per operation × transport, each row named', () => {
    const specs = expandPlan({
      operations: ['exec', 'portforward'],
      transports: ['websocket', 'spdy'],
      keepalives: ['none'],
      holdsSeconds: [0, 65],
      holdShapes: ['silent', 'output'],
      transferBytes: 8 * MiB,
    });
    expect([...new Set(specs.map((s) => `${s.operation} ${s.keepalive} ${rowText(s)}`))]).toEqual([
      'exec none 0s',
      'exec none 65s',
      'exec none 65s-output',
      'portforward none 0s',
      'portforward none 65s',
      'exec kubectl cp 8MiB',
      'portforward kubectl 8MiB',
    ]);
    expect(specs).toHaveLength(14);
  });
});

describe('the plan with SDK-client sessions (keepalive sdk)', () => {
  it('WebSocket only, silent, at every hold including 0 s; kubectl and none still share hold 0', () => {
    const specs = expandPlan({
      operations: ['exec', 'portforward'],
      transports: ['websocket', 'spdy'],
      keepalives: ['kubectl', 'none', 'sdk'],
      holdsSeconds: [0, 65],
      holdShapes: ['silent', 'output'],
    });
    const sdk = specs.filter((s) => s.keepalive === 'sdk');
    expect(sdk.map((s) => `${s.operation} ${s.transport} ${s.holdSeconds}${s.holdShape ? ` ${s.holdShape}` : ''}`)).toEqual([
      'exec websocket 0',
      'exec websocket 65',
      'portforward websocket 0',
      'portforward websocket 65',
    ]);
    expect(specs.filter((s) => s.holdSeconds === 0 && s.keepalive !== 'sdk').every((s) => s.keepalive === 'kubectl')).toBe(true);
  });
});
