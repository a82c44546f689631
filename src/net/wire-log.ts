/**
 * What `-v` / `--wire-log` shows, as events from the layers that see them:
 * each upgrade's request line and headers, the reply's status line and
 * headers, plain API requests, and SPDY control frames (stream headers,
 * pings, resets, GOAWAY). The CLI formats them (src/cli/wire-log.ts), with
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
  | { readonly kind: 'spdy'; readonly conn: number; readonly what: string; readonly direction: 'sent' | 'received'; readonly frame: string };

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
