/** Live progress for long holds, on a terminal only: per session elapsed / hold, alive or lost at N s. */
import type { SessionOptions } from '../probe/session.js';
import type { SessionSpec } from '../probe/types.js';
import { rowText } from '../probe/row-text.js';

export function liveProgress(write: (t: string) => void, longestHoldSeconds: number): { onProgress: NonNullable<SessionOptions['onProgress']>; stop(): void } {
  const t0 = performance.now();
  const state = new Map<string, string>();
  const key = (s: SessionSpec) => `${s.operation}/${s.transport}/${s.keepalive}/${rowText(s)}`;
  const timer = setInterval(() => {
    const elapsed = Math.round((performance.now() - t0) / 1000);
    const holding = [...state.values()].filter((v) => v === 'holding').length;
    const moving = [...state.values()].filter((v) => v === 'transferring').length;
    const lost = [...state.entries()].filter(([, v]) => v.startsWith('lost')).map(([k, v]) => `${k} ${v}`);
    write(
      `\r\x1b[2K${elapsed}s / ${longestHoldSeconds}s: ${holding} holding, ${moving ? `${moving} transferring, ` : ''}${lost.length} lost${lost.length ? ` (${lost.slice(0, 3).join('; ')})` : ''}`,
    );
  }, 1000);
  timer.unref();
  return {
    onProgress: (e) => {
      state.set(key(e.spec), e.state === 'lost' ? `lost at ${e.atSeconds?.toFixed(1)}s` : e.state);
    },
    stop: () => {
      clearInterval(timer);
      write('\r\x1b[2K');
    },
  };
}
