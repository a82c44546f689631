/**
 * Terminal sessions (`--hold-shape tty`, `--tty`): what `kubectl exec -it` and `kubectl attach -it` do with a terminal,
 * and how the probe proves the size reached the process.
 *
 * kubectl puts the local terminal in raw mode, sends its size first and then each change (kubectl's term.TTY
 * MonitorSize → client-go tools/remotecommand resize.go): one JSON `{"Width":…,"Height":…}` per message, on
 * WebSocket channel 4 or the SPDY `resize` stream (v3+ of channel.k8s.io). With a terminal there is no stderr stream.
 * The probe sends TERMINAL_SIZES.start with the upgrade and TERMINAL_SIZES.resized after the hold; the pod's process
 * (hold-shape.ts TTY_SIZE_SCRIPT) answers every line with the size it reads from its pty, which follows the terminal's
 * line discipline echo of the line itself. A runtime or hop that loses a resize shows as the old size there: what a
 * user sees as a full-screen program (vim, top, less) that never redraws at the new size.
 */
import { probeError, type ProbeError } from '../errors.js';
import type { Operation } from '../vocabulary.js';

export interface TerminalSize {
  readonly width: number;
  readonly height: number;
}

/** A classic 80×24 to start, then a size no terminal starts at, so a lost resize cannot pass for one applied. */
export const TERMINAL_SIZES = { start: { width: 80, height: 24 }, resized: { width: 132, height: 43 } } as const satisfies Record<string, TerminalSize>;

/**
 * The sizes kubectl sends as a session starts: exec its window's size; attach that size plus one column and row and
 * then the size itself, so that a process attached to before redraws (kubectl pkg/cmd/attach/attach.go: "fake resize
 * +1 and then back to normal"; seen on the wire from real kubectl 1.29, 1.33 and 1.36 attach -it, test/interop/tty.test.ts).
 */
export function firstSizes(operation: Operation): readonly TerminalSize[] {
  const s = TERMINAL_SIZES.start;
  return operation === 'attach' ? [{ width: s.width + 1, height: s.height + 1 }, s] : [s];
}

/** The line a pty echoes for `nonce\n`, and the size line that follows it ("ROWS COLS" from `stty size`). */
export const echoedLine = (nonce: string): string => `${nonce}\r\n`;
export const SIZE_LINE = /^(?:[^\n]*\n)*?(\d+) (\d+)\r?\n/;

/** Ctrl-D: the pty's VEOF character; on an empty line the process's read sees the end of input. */
export const TTY_EOF = '\x04';

export const sizeText = (s: TerminalSize): string => `${s.width}×${s.height}`;

/** What the session's terminal check saw: the size sent, and the size the process read (null: no size line). */
export interface TerminalCheck {
  readonly sent: TerminalSize;
  readonly seen: TerminalSize | null;
}

/** The size in a SIZE_LINE match. */
export function seenSize(match: RegExpExecArray | undefined): TerminalSize | null {
  if (!match) return null;
  return { height: Number(match[1]), width: Number(match[2]) };
}

/** Every size a probe session sends: a shared pty (attach) may show any of them, set by another session or run. */
const probeSizes = (): readonly TerminalSize[] => [...firstSizes('attach'), TERMINAL_SIZES.resized];

/**
 * The failure when the process reads another size than the one sent; undefined when they agree. `shared`: the pty is
 * the container's, which other attach sessions (of this run, or of another run or location probing the same target
 * at the same time) resize too: any size a probe sends shows that resizes reach it; only another size (0×0: none
 * ever did) is a lost one.
 */
export function sizeMismatch(check: TerminalCheck, when: 'start' | 'resize', shared = false): ProbeError<'TTY_SIZE_LOST'> | undefined {
  const { sent, seen } = check;
  if (seen && [sent, ...(shared ? probeSizes() : [])].some((s) => seen.width === s.width && seen.height === s.height)) return undefined;
  const read = seen ? sizeText(seen) : 'no size';
  return probeError(
    'TTY_SIZE_LOST',
    when === 'start'
      ? `the terminal's size was sent as ${sizeText(sent)} with the upgrade, but the process reads ${read}`
      : `the terminal was resized to ${sizeText(sent)}, but the process still reads ${read}`,
    { sent: sizeText(sent), seen: read, when },
  );
}
