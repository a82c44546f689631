/**
 * Progress for long holds, on stderr. On a terminal: one line redrawn every second (per session elapsed / hold,
 * alive or lost at N s). Piped or in CI (no terminal to redraw): a plain line every 10 s, so a 65 s or 6 min hold
 * is not a silent wait and a log keeps one line per step, not a screenful of carriage returns.
 */
import type { SessionOptions } from '../probe/session.js';
import type { SessionSpec } from '../probe/types.js';
import { rowText } from '../probe/row-text.js';

/** How often a plain (non-terminal) progress line is written. */
export const PLAIN_PROGRESS_SECONDS = 10;

export function liveProgress(
  write: (t: string) => void,
  longestHoldSeconds: number,
  interactive = true,
): { onProgress: NonNullable<SessionOptions['onProgress']>; stop(): void } {
  const t0 = performance.now();
  const state = new Map<string, string>();
  const key = (s: SessionSpec) => `${s.operation}/${s.transport}/${s.keepalive}/${rowText(s)}`;
  const line = () => {
    const elapsed = Math.round((performance.now() - t0) / 1000);
    const holding = [...state.values()].filter((v) => v === 'holding').length;
    const moving = [...state.values()].filter((v) => v === 'transferring').length;
    const lost = [...state.entries()].filter(([, v]) => v.startsWith('lost')).map(([k, v]) => `${k} ${v}`);
    return `${elapsed}s / ${longestHoldSeconds}s: ${holding} holding, ${moving ? `${moving} transferring, ` : ''}${lost.length} lost${lost.length ? ` (${lost.slice(0, 3).join('; ')})` : ''}`;
  };
  const timer = interactive
    ? setInterval(() => write(`\r\x1b[2K${line()}`), 1000)
    : setInterval(() => write(`kube-stream-probe: ${line()}\n`), PLAIN_PROGRESS_SECONDS * 1000);
  timer.unref();
  return {
    onProgress: (e) => {
      state.set(key(e.spec), e.state === 'lost' ? `lost at ${e.atSeconds?.toFixed(1)}s` : e.state);
    },
    stop: () => {
      clearInterval(timer);
      if (interactive) write('\r\x1b[2K');
    },
  };
}
