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

/**
 * The most control frames shown per connection: a 20-minute hold's pings and pongs at kubectl's 5 s fit (480); a peer
 * that floods frames (10,000 streams of its own, a PING flood) cannot fill the terminal (issue 57). Past it, one line
 * says so and the rest of that connection's frames are not shown; requests and replies always are.
 */
export const WIRE_LOG_FRAMES_PER_CONNECTION = 500;

export function wireLogger(write: (text: string) => void, redactor: SecretRedactor, now: () => Date = () => new Date()): WireLog {
  const frames = new Map<number, number>();
  return (e) => {
    if (e.kind === 'spdy' || e.kind === 'websocket') {
      const n = (frames.get(e.conn) ?? 0) + 1;
      frames.set(e.conn, n);
      if (n > WIRE_LOG_FRAMES_PER_CONNECTION + 1) return;
      if (n === WIRE_LOG_FRAMES_PER_CONNECTION + 1) {
        write(
          `${time(now())} #${e.conn} ${terminalSafe(e.what)}: further frames on this connection not shown (${WIRE_LOG_FRAMES_PER_CONNECTION} shown, the -v bound)\n`,
        );
        return;
      }
    }
    write(terminalSafe(redactor.redact(formatWireEvent(e, now()).join('\n'))) + '\n');
  };
}
