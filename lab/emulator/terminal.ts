/**
 * A session's terminal in the emulated pod (exec -t, attach -t to a container with `tty: true`): its size, set by the
 * client's resize messages (WebSocket channel 4, or the SPDY `resize` stream: one JSON `{"Width":…,"Height":…}` each,
 * client-go tools/remotecommand resize.go), and the line discipline a real pty applies in the kernel: input echoed,
 * CR read as NL (ICRNL), NL written as CR NL (ONLCR). The resizes each upgrade sent are kept (`UpgradeRecord.resizes`),
 * so a test compares ours with kubectl's.
 */
export interface TerminalSize {
  readonly Width: number;
  readonly Height: number;
}

export class Terminal {
  /** A pty starts at 0×0 until someone sets its size (runc's console). */
  width = 0;
  height = 0;
  /** Drops every resize (the dropResize fault: a runtime that ignores the resize stream). */
  constructor(private readonly dropResizes = false) {}

  /** One resize message's payload; a malformed one is ignored, as the kubelet logs and skips it. */
  resize(payload: Buffer | string, record?: TerminalSize[]): void {
    for (const line of payload.toString('utf8').split('\n')) {
      if (!line.trim()) continue;
      let size: TerminalSize;
      try {
        size = JSON.parse(line) as TerminalSize;
      } catch {
        continue;
      }
      if (!Number.isInteger(size.Width) || !Number.isInteger(size.Height)) continue;
      record?.push({ Width: size.Width, Height: size.Height });
      if (this.dropResizes) continue;
      this.width = size.Width;
      this.height = size.Height;
    }
  }
}

/**
 * `while read -r l; do stty size; done` on a pty (the target's `tty` container, and exec -t's TTY check): every
 * input byte echoed by the line discipline, and for each line the size the process reads from its terminal
 * (`stty size` prints "ROWS COLS"); Ctrl-D on an empty line is the end of input (VEOF: `read` fails, the loop ends,
 * `onEnd`). Returns a function that takes input and writes what the terminal shows.
 */
export function sizeLoop(terminal: Terminal, write: (b: Buffer) => void, onEnd?: () => void): (input: Buffer) => void {
  let line = '';
  return (input) => {
    let out = '';
    for (const ch of input.toString('latin1')) {
      if (ch === '\x04' && line === '') {
        if (out) write(Buffer.from(out, 'latin1'));
        onEnd?.();
        return;
      }
      if (ch === '\r' || ch === '\n') {
        out += `\r\n${terminal.height} ${terminal.width}\r\n`;
        line = '';
      } else {
        out += ch;
        line += ch;
      }
    }
    if (out) write(Buffer.from(out, 'latin1'));
  };
}
