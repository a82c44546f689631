/**
 * `-v` / `--wire-log`: the requests and replies the way `kubectl -v=7`/`-v=8`
 * shows them (request line and headers, status line and headers), plus SPDY
 * control frames, one timestamped line each on stderr. Credentials are masked
 * by header name and every line passes the redactor (tokens, client keys,
 * proxy passwords), so a log can be pasted into a ticket.
 */
import type { SecretRedactor } from '../kube/secrets.js';
import { maskHeader as mask, type WireEvent, type WireLog } from '../net/wire-log.js';
import { terminalSafe } from '../text.js';

/** HH:MM:SS.mmm, UTC, as kubectl's klog prints it (without the date). */
function time(d: Date): string {
  return d.toISOString().slice(11, 23);
}

export function formatWireEvent(e: WireEvent, at: Date): string[] {
  const p = `${time(at)} #${e.conn}`;
  switch (e.kind) {
    case 'request':
      return [`${p} ${e.what}: > ${e.method} ${e.url}`, ...e.headers.map(([k, v]) => `${p}     > ${k}: ${mask(k, v)}`)];
    case 'response':
      return [`${p} ${e.what}: < HTTP/1.1 ${e.status} ${e.statusText}`, ...e.headers.map(([k, v]) => `${p}     < ${k}: ${mask(k, v)}`)];
    case 'spdy':
    case 'websocket':
      return [`${p} ${e.what}: ${e.direction === 'sent' ? '>' : '<'} ${e.frame}`];
  }
}

export function wireLogger(write: (text: string) => void, redactor: SecretRedactor, now: () => Date = () => new Date()): WireLog {
  return (e) => write(terminalSafe(redactor.redact(formatWireEvent(e, now()).join('\n'))) + '\n');
}
