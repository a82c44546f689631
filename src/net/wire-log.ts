/**
 * What `-v` / `--wire-log` shows, as events from the layers that see them:
 * each upgrade's request line and headers, the reply's status line and
 * headers, plain API requests, and SPDY control frames (stream headers,
 * pings, resets, GOAWAY), WebSocket control frames (ping, pong, close) and the socket's end. The CLI formats them (src/cli/wire-log.ts), with
 * secrets masked; nothing here is logged unless a WireLog is configured.
 */
export type WireEvent =
  | {
      readonly kind: 'request';
      /** Which connection (numbered in the order they were opened). */
      readonly conn: number;
      readonly what: string;
      readonly method: string;
      readonly url: string;
      readonly headers: readonly (readonly [string, string])[];
    }
  | {
      readonly kind: 'response';
      readonly conn: number;
      readonly what: string;
      readonly status: number;
      readonly statusText: string;
      readonly headers: readonly (readonly [string, string])[];
    }
  | {
      /** A SPDY control frame, or a WebSocket control frame (ping, pong, close) or the socket's end under it. */
      readonly kind: 'spdy' | 'websocket';
      readonly conn: number;
      readonly what: string;
      readonly direction: 'sent' | 'received';
      readonly frame: string;
    };

export type WireLog = (event: WireEvent) => void;

let connections = 0;

/** The next connection number, for telling interleaved sessions apart in the log. */
export function nextConnectionNumber(): number {
  return ++connections;
}

/** `rawHeaders` ([name, value, name, value…]) as pairs, in the order they came. */
export function headerPairs(raw: readonly string[]): [string, string][] {
  const out: [string, string][] = [];
  for (let i = 0; i + 1 < raw.length; i += 2) out.push([raw[i]!, raw[i + 1]!]);
  return out;
}

/** Headers whose values are credentials, whatever they hold. */
const SECRET_HEADERS = /^(authorization|proxy-authorization|cookie|set-cookie|x-amz-security-token)$/i;

/** A header's value as logs and evidence show it: a credential's scheme, never its value. */
export function maskHeader(name: string, value: string): string {
  if (!SECRET_HEADERS.test(name)) return value;
  const scheme = /^(Bearer|Basic)\s/i.exec(value)?.[1];
  return scheme ? `${scheme} <masked>` : '<masked>';
}
