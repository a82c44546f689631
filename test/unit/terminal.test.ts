/**
 * The terminal check (probe/terminal.ts): the pty's echo of the line, then the size the process reads, found in
 * whatever order the bytes arrive (split across chunks, other attached sessions' lines between them); the size
 * compared with what was sent.
 */
import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { EchoReader } from '../../src/probe/echo.js';
import { SIZE_LINE, TERMINAL_SIZES, echoedLine, firstSizes, seenSize, sizeMismatch } from '../../src/probe/terminal.js';

const never = new Promise<{ cause: string }>(() => undefined);

describe('echoThen through a terminal', () => {
  it("finds the echoed line and then the size line, split across chunks and behind another session's line", async () => {
    const out = new PassThrough();
    const reader = new EchoReader(out);
    const sink = new PassThrough();
    const done = reader.echoThen(sink, 'ksp-1\n', { needle: echoedLine('ksp-1'), then: SIZE_LINE }, 1000, never);
    for (const chunk of ['stale 9 9\r\nks', 'p-1\r', '\nksp-other\r\n2', '4 80\r\n']) out.write(chunk);
    const r = await done;
    expect(seenSize(r.match)).toEqual({ height: 24, width: 80 });
  });

  it('a line without a size after the echo is not taken for one', async () => {
    const out = new PassThrough();
    const reader = new EchoReader(out);
    const done = reader.echoThen(new PassThrough(), 'ksp-2\n', { needle: echoedLine('ksp-2'), then: SIZE_LINE }, 200, never);
    out.write('ksp-2\r\nsh: stty: not found\r\n');
    await expect(done).rejects.toMatchObject({ code: 'ECHO_MISMATCH' });
  });
});

describe('sizeMismatch', () => {
  const start = TERMINAL_SIZES.start;
  it('agrees when the process reads the size sent; on a shared pty (attach) any size a probe sends, but never 0×0', () => {
    expect(sizeMismatch({ sent: start, seen: start }, 'start')).toBeUndefined();
    const plusOne = firstSizes('attach')[0]!;
    expect(plusOne).toEqual({ width: 81, height: 25 });
    expect(sizeMismatch({ sent: start, seen: plusOne }, 'start', true)).toBeUndefined();
    expect(sizeMismatch({ sent: start, seen: TERMINAL_SIZES.resized }, 'start', true)).toBeUndefined();
    expect(sizeMismatch({ sent: start, seen: { width: 0, height: 0 } }, 'start', true)).toMatchObject({ code: 'TTY_SIZE_LOST' });
    expect(sizeMismatch({ sent: start, seen: plusOne }, 'start')).toMatchObject({ code: 'TTY_SIZE_LOST' });
  });
  it('names the sizes sent and read, at the start and after a resize', () => {
    expect(sizeMismatch({ sent: start, seen: { width: 0, height: 0 } }, 'start')?.message).toBe(
      "the terminal's size was sent as 80×24 with the upgrade, but the process reads 0×0",
    );
    expect(sizeMismatch({ sent: TERMINAL_SIZES.resized, seen: start }, 'resize')?.message).toBe(
      'the terminal was resized to 132×43, but the process still reads 80×24',
    );
    expect(sizeMismatch({ sent: start, seen: null }, 'start')?.context).toEqual({ sent: '80×24', seen: 'no size', when: 'start' });
  });
});
