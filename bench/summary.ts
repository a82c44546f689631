/**
 * npm run bench:summary [-- run.json ...]: the targets of several `npm run bench` runs side by side — the first
 * table of docs/benchmarks.md. Without files, the newest three full runs in .tmp/bench-runs (run.ts writes one per
 * run). A row is matched across runs by its bench and its text without the parenthesised figures.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { BENCH_RUNS_DIR, fmt, type BenchRun, type Row } from './common.js';

/** The text of a row without its parenthesised parts (figures of that run), spaces collapsed. */
export function rowKey(r: Pick<Row, 'bench' | 'what'>): string {
  let depth = 0;
  let out = '';
  for (const ch of r.what) {
    if (ch === '(') depth++;
    else if (ch === ')') depth = Math.max(0, depth - 1);
    else if (depth === 0) out += ch;
  }
  return `${r.bench} | ${out
    .replace(/\s+/g, ' ')
    .replace(/\s+([,:])/g, '$1')
    .trim()}`;
}

export function summaryTable(runs: readonly BenchRun[]): string {
  const machines = [...new Set(runs.map((r) => r.machine))];
  const keys: string[] = [];
  const byRun = runs.map((run) => {
    const m = new Map<string, Row>();
    for (const row of run.rows) {
      if (row.target === undefined) continue;
      const k = rowKey(row);
      if (!keys.includes(k)) keys.push(k);
      m.set(k, row);
    }
    return m;
  });
  const lines = [
    `${runs.length} runs in a row, ${runs.map((r) => r.startedAt).join(', ')}; ${machines.join(' / ')}.`,
    '',
    `| bench | what | target | ${runs.map((_, i) => `run ${i + 1}`).join(' | ')} | passes |`,
    `|---|---|---|${runs.map(() => '---|').join('')}---|`,
  ];
  for (const k of keys) {
    const rows = byRun.map((m) => m.get(k));
    const first = rows.find((r) => r)!;
    const cells = rows.map((r) => (r ? `${fmt(r.value)} ${r.unit}${r.ratio ? `, ${r.ratio}` : ''} **${r.pass ? 'pass' : 'FAIL'}**` : 'not run'));
    const passes = rows.filter((r) => r?.pass).length;
    const [bench, what] = k.split(' | ');
    lines.push(`| ${bench} | ${what} | ${first.target} | ${cells.join(' | ')} | ${passes} of ${runs.length} |`);
  }
  return lines.join('\n');
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const named = process.argv.slice(2);
  const dir = join(process.cwd(), BENCH_RUNS_DIR);
  const files = named.length
    ? named
    : readdirSync(dir)
        .filter((f) => f.endsWith('.json'))
        .sort()
        .map((f) => join(dir, f));
  const runs = files.map((f) => JSON.parse(readFileSync(f, 'utf8')) as BenchRun);
  const chosen = named.length ? runs : runs.filter((r) => r.full).slice(-3);
  if (chosen.length === 0) {
    console.error(`no full runs in ${dir}: run npm run bench first`);
    process.exit(2);
  }
  console.log(summaryTable(chosen));
}
