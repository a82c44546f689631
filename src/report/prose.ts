/**
 * Our sentences as HTML: escaped, with the Markdown the diagnoses use (`code`) rendered, and http(s) addresses
 * as links. Nothing else of Markdown is written by the diagnoses, so nothing else is read.
 */
export const esc = (s: unknown): string => String(s).replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);

/** A diagnosis sentence as HTML: `code` as <code>, https://… as a link (its trailing punctuation left outside). */
export function prose(text: string): string {
  return text
    .split(/(`[^`]+`)/)
    .map((part) =>
      part.startsWith('`') && part.endsWith('`') && part.length > 2
        ? `<code>${esc(part.slice(1, -1))}</code>`
        : esc(part).replace(/https?:\/\/[^\s<>"']+?(?=[.,;:)]?(?:\s|$))/g, (url) => `<a href="${url}">${url}</a>`),
    )
    .join('');
}
