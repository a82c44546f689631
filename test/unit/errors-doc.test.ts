import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { ERROR_CODES } from '../../src/errors.js';

describe('docs/errors.md', () => {
  it('lists every error code the code defines', () => {
    const doc = readFileSync(new URL('../../docs/errors.md', import.meta.url), 'utf8');
    const missing = Object.keys(ERROR_CODES).filter((c) => !doc.includes(`\`${c}\``));
    expect(missing).toEqual([]);
  });
});
