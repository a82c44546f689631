/** A V8 .cpuprofile summarised: the functions with the most self time, and the share the process was busy. */
import { readFileSync } from 'node:fs';

interface ProfileNode {
  readonly id: number;
  readonly callFrame: { readonly functionName: string; readonly url: string; readonly lineNumber: number };
  readonly children?: readonly number[];
}
interface CpuProfile {
  readonly nodes: readonly ProfileNode[];
  readonly samples: readonly number[];
  readonly timeDeltas: readonly number[];
}

export interface ProfileSummary {
  readonly totalMs: number;
  /** Share of the samples not idle, in %. */
  readonly busyPercent: number;
  /** [function (file:line), % of all samples], most self time first. */
  readonly top: readonly (readonly [string, number])[];
}

export function summarizeProfile(path: string, count = 15): ProfileSummary {
  const p = JSON.parse(readFileSync(path, 'utf8')) as CpuProfile;
  const byId = new Map(p.nodes.map((n) => [n.id, n]));
  const self = new Map<string, number>();
  let total = 0;
  p.samples.forEach((id, i) => {
    const dt = p.timeDeltas[i] ?? 0;
    total += dt;
    const f = byId.get(id)!.callFrame;
    const key = `${f.functionName || '(anonymous)'} ${f.url.split('/').slice(-2).join('/')}${f.url ? `:${f.lineNumber + 1}` : ''}`.trim();
    self.set(key, (self.get(key) ?? 0) + dt);
  });
  const idle = [...self].filter(([k]) => k.startsWith('(idle)')).reduce((a, [, t]) => a + t, 0);
  const pct = (t: number) => (total > 0 ? (100 * t) / total : 0);
  return {
    totalMs: total / 1000,
    busyPercent: pct(total - idle),
    top: [...self]
      .filter(([k]) => !k.startsWith('(idle)'))
      .sort((a, b) => b[1] - a[1])
      .slice(0, count)
      .map(([k, t]) => [k, pct(t)] as const),
  };
}
