import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { DIAGNOSIS_CODES } from '../../src/probe/diagnosis-codes.js';

describe('docs/diagnoses.md', () => {
  const doc = readFileSync('docs/diagnoses.md', 'utf8');

  it('documents exactly the diagnosis codes the code defines', () => {
    const documented = [...doc.matchAll(/^\| `([a-z0-9-]+)` \|/gm)].map((m) => m[1]);
    expect(documented.sort()).toEqual(Object.keys(DIAGNOSIS_CODES).sort());
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
