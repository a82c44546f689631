import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { DIAGNOSES, DIAGNOSIS_CODES, FIX_ORDER } from '../../src/probe/diagnosis-codes.js';
import { IDLE_DEVICES, type IdleDevice } from '../../src/probe/idle-devices.js';

const BEHAVIOUR: Readonly<Record<IdleDevice['behaviour'], string>> = {
  'forgets-reset': 'forgets the flow; resets its next packet',
  'forgets-silent': 'forgets the flow; drops its next packet',
  closes: 'closes at its timer',
  lifetime: 'ends it that long after it began, whatever moves',
};
/** A device's row in the doc's table, from the code's own record. */
const deviceRow = (d: IdleDevice) =>
  `| ${d.product} | ${d.seconds} s | ${d.fixed ? 'fixed' : d.range ? `${d.range[0]}–${d.range[1]} s` : 'settable'} | ${BEHAVIOUR[d.behaviour]} | ${d.fix} | ${d.source} |`;

describe('docs/diagnoses.md', () => {
  const doc = readFileSync('docs/diagnoses.md', 'utf8');

  it('documents exactly the diagnosis codes the code defines', () => {
    const documented = [...doc.matchAll(/^\| `([a-z0-9-]+)` \|/gm)].map((m) => m[1]);
    expect(documented.sort()).toEqual(Object.keys(DIAGNOSIS_CODES).sort());
  });

  it('each code’s row is the catalogue’s entry: its meaning and where the audit files it', () => {
    const rows = Object.fromEntries(
      [...doc.matchAll(/^\| `([a-z0-9-]+)` \| (.+) \| ([^|]+) \|$/gm)].map((m) => [m[1]!, { meaning: m[2]!.replace(/\\\|/g, '|'), audit: m[3]!.trim() }]),
    );
    expect(rows).toEqual(Object.fromEntries(Object.entries(DIAGNOSES).map(([code, e]) => [code, { meaning: e.meaning, audit: e.audit }])));
  });

  it('every code has a meaning and a filing the audit knows: a fix category, or why it is none', () => {
    const filings = [...FIX_ORDER, 'restates another', 'said, no fix', 'blocks the audit'];
    for (const [code, e] of Object.entries(DIAGNOSES)) {
      expect(e.meaning.length, code).toBeGreaterThan(10);
      expect(filings, code).toContain(e.audit);
    }
  });

  it('lists every documented device the diagnoses match against, with its fix and source, as the code has it', () => {
    for (const d of IDLE_DEVICES) expect(doc, d.product).toContain(deviceRow(d));
    expect(doc.split('\n').filter((l) => / s \| (fixed|settable|\d+–\d+ s) \| /.test(l))).toHaveLength(IDLE_DEVICES.length);
  });

  it('every diagnosis code is made somewhere', () => {
    const dirs = ['src/probe', 'src/lambda', 'src/cli'];
    const code = dirs
      .flatMap((d) => readdirSync(d).map((f) => join(d, f)))
      .filter((p) => p.endsWith('.ts') && !p.endsWith('diagnosis-codes.ts'))
      .map((p) => readFileSync(p, 'utf8'))
      .join('\n');
    expect(Object.keys(DIAGNOSIS_CODES).filter((c) => !code.includes(`'${c}'`))).toEqual([]);
  });
});
