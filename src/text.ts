/** Small text helpers for messages people read. */

/**
 * Text for a terminal, from anything a peer may have written into it: every C0 control but newline and tab, DEL and
 * every C1 control (U+0080-U+009F, which a terminal may read as CSI/OSC) is shown as `\xHH`, so a server's
 * `ESC[2J` cannot wipe the screen, retitle it or paint a forged row (issue 57 §6). Table and text output pass through
 * it once, where they are written; JSON escapes C0 itself and HTML is escaped by its renderer.
 */
export function terminalSafe(text: string): string {
  return text.replace(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/g, (c) => `\\x${c.charCodeAt(0).toString(16).padStart(2, '0')}`);
}

/**
 * A peer's text (a header, a body, a status message, a close reason, an echo) kept to `max` characters; a clipped text
 * says how long it was ("… (52,428,800 characters)", issue 57). Secrets are masked where the text is shown
 * (SecretRedactor matches any 12-character piece of one, so a cut through a token cannot leave a piece to print).
 */
export function peerText(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max)}… (${text.length.toLocaleString('en-US')} characters)`;
}

/** At most `max` characters, cut at a word boundary with an ellipsis, never mid-word. */
export function clip(text: string, max: number): string {
  if (text.length <= max) return text;
  const cut = text.slice(0, max);
  const space = cut.lastIndexOf(' ');
  return `${(space > max / 2 ? cut.slice(0, space) : cut).replace(/[\s,.;:]+$/, '')}…`;
}

/** Aligned columns, two spaces apart, the last column unpadded. */
export function table(headers: readonly string[], rows: readonly (readonly string[])[]): string {
  const widths = headers.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: readonly string[]) =>
    cells
      .map((c, i) => (i === cells.length - 1 ? c : c.padEnd(widths[i]!)))
      .join('  ')
      .trimEnd();
  return [line(headers), ...rows.map(line)].join('\n');
}
