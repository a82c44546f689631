import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ERROR_CODES } from '../../src/errors.js';

/** Every TypeScript source below these folders, except the file that defines the codes. */
function sources(dirs: readonly string[]): string {
  const out: string[] = [];
  const walk = (d: string) => {
    for (const name of readdirSync(d)) {
      const p = join(d, name);
      if (statSync(p).isDirectory()) walk(p);
      else if (p.endsWith('.ts') && p !== join('src', 'errors.ts')) out.push(readFileSync(p, 'utf8'));
    }
  };
  dirs.forEach(walk);
  return out.join('\n');
}

const documentedCodes = (doc: string) => [...doc.matchAll(/^\| `([A-Z_]+)` \|/gm)].map((m) => m[1]);

describe('docs/errors.md', () => {
  const doc = readFileSync('docs/errors.md', 'utf8');

  it('documents exactly the error codes the code defines', () => {
    expect(documentedCodes(doc).sort()).toEqual(Object.keys(ERROR_CODES).sort());
  });

  it('every code is raised somewhere (a code nobody raises is a promise nobody keeps)', () => {
    const code = sources(['src', 'infra', 'functions']);
    const neverRaised = Object.keys(ERROR_CODES).filter((c) => !code.includes(`'${c}'`));
    expect(neverRaised).toEqual([]);
  });

  it('no message pastes a code into its text', () => {
    const code = sources(['src', 'infra', 'functions']);
    const pasted = Object.keys(ERROR_CODES).filter((c) => new RegExp('`' + c + ': ').test(code) || code.includes(`'${c}: `));
    expect(pasted).toEqual([]);
  });
});
