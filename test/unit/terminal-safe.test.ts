/** What a peer's text may do to a terminal once it is printed: nothing (src/text.ts terminalSafe, issue 57 §6). */
import { describe, expect, it } from 'vitest';
import { terminalSafe } from '../../src/text.js';

describe('terminalSafe', () => {
  it('shows every C0 control but newline and tab, DEL and every C1 control as \\xHH', () => {
    expect(terminalSafe('a\x1b[2Jb\x07c\rd\x00e\x7ff\u009bg')).toBe('a\\x1b[2Jb\\x07c\\x0dd\\x00e\\x7ff\\x9bg');
  });
  it('keeps lines, tabs and every printable character, Unicode too', () => {
    const text = 'PATH\tVERDICT\nl4-idle-6s  websocket-broken  ≤1.29 → 1.38 (GA) ✓\n';
    expect(terminalSafe(text)).toBe(text);
  });
});
