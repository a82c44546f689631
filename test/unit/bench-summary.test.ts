/** The summary of several bench runs (docs/benchmarks.md's first table): rows matched across runs by their text. */
import { describe, expect, it } from 'vitest';
import type { BenchRun, Row } from '../../bench/common.js';
import { rowKey, summaryTable } from '../../bench/summary.js';

const run = (startedAt: string, rows: Row[]): BenchRun => ({ startedAt, machine: 'node v20, 2 × cpu', sections: ['x'], full: true, failed: false, rows });

describe('bench summary', () => {
  it("a row's key drops its parenthesised figures, nested or not", () => {
    expect(rowKey({ bench: 'b', what: 'ours over spdy (median of 7 (paired) rounds: 1.4, 1.5), 512 MB (29% of a vCPU): p99' })).toBe(
      'b | ours over spdy, 512 MB: p99',
    );
  });

  it('puts each targeted row of every run side by side and counts the passes', () => {
    const t = summaryTable([
      run('t1', [
        { bench: 'cpu', what: 'ours (1.2 s)', value: 1.2, unit: 'CPU s/GiB', ratio: '0.6×', target: '≤ 0.5×', pass: false },
        { bench: 'info', what: 'kubectl', value: 2, unit: 'CPU s/GiB' },
        { bench: 'mem', what: 'spdy × 100 (live 12)', value: 15, unit: 'KiB', target: '≤ 25', pass: true },
      ]),
      run('t2', [
        { bench: 'cpu', what: 'ours (1.0 s)', value: 1.0, unit: 'CPU s/GiB', ratio: '0.5×', target: '≤ 0.5×', pass: true },
        { bench: 'mem', what: 'spdy × 100 (live 13)', value: 16, unit: 'KiB', target: '≤ 25', pass: true },
      ]),
    ]);
    const lines = t.split('\n');
    expect(lines[0]).toBe('2 runs in a row, t1, t2; node v20, 2 × cpu.');
    expect(lines.slice(4)).toEqual([
      '| cpu | ours | ≤ 0.5× | 1.20 CPU s/GiB, 0.6× **FAIL** | 1.00 CPU s/GiB, 0.5× **pass** | 1 of 2 |',
      '| mem | spdy × 100 | ≤ 25 | 15.00 KiB **pass** | 16.00 KiB **pass** | 2 of 2 |',
    ]);
  });

  it('a row missing from a run says so, and does not pass there', () => {
    const t = summaryTable([run('t1', [{ bench: 'a', what: 'x', value: 1, unit: 'u', target: '1', pass: true }]), run('t2', [])]);
    expect(t).toContain('| a | x | 1 | 1.00 u **pass** | not run | 1 of 2 |');
  });
});
