/** kubectl's `-v=N` on our commands: from 6 (kubectl logs each request) it is --wire-log; below, nothing; never "Unknown option '-='". */
import { describe, expect, it } from 'vitest';
import { kubectlVerbosity, parse } from '../../src/cli/args.js';

const RUN_LIKE = { 'wire-log': { type: 'boolean', short: 'v' }, hold: { type: 'string' } } as const;

describe("kubectl's verbosity flag", () => {
  it.each([
    [['-v=8'], { 'wire-log': true }],
    [['--v=7'], { 'wire-log': true }],
    [['-v', '6', '--hold', '0s'], { 'wire-log': true, hold: '0s' }],
    [['-v=4'], {}],
    [['-v'], { 'wire-log': true }],
    [['--wire-log'], { 'wire-log': true }],
    [['--hold', '8', '-v=2'], { hold: '8' }],
  ])('%j parses as %j', (argv, values) => {
    expect({ ...parse(argv, RUN_LIKE).values }).toEqual(values);
  });

  it('leaves commands without -v alone: their -v=8 is still refused, by name', () => {
    expect(() => parse(['-v=8'], { hold: { type: 'string' } })).toThrow(/-v/);
    expect(kubectlVerbosity(['--hold', '6'])).toEqual(['--hold', '6']);
  });
});
