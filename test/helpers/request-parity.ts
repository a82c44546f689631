/**
 * One request as a hop sees it, and what differs between real kubectl's and the probe's: method, path, every query
 * parameter (order aside: Go's url.Values.Encode sorts keys), the header names, the upgrade headers' values, the
 * offered subprotocols in order. The test (test/interop/request-parity.test.ts) allows only the differences it lists
 * with their reasons.
 */
import type { IncomingHttpHeaders } from 'node:http';

export interface WireRequest {
  readonly method: string;
  readonly path: string;
  /** Every query parameter's values, in the order they came. */
  readonly query: Readonly<Record<string, readonly string[]>>;
  readonly headers: IncomingHttpHeaders;
}

/** A request from its method, target (path?query) and headers. */
export function wireRequest(method: string, target: string, headers: IncomingHttpHeaders): WireRequest {
  const url = new URL(target, 'http://x');
  const query: Record<string, string[]> = {};
  for (const [k, v] of url.searchParams) (query[k] ??= []).push(v);
  return { method, path: url.pathname, query, headers };
}

/**
 * The headers whose values say what the request is (the upgrade and its subprotocols, what it accepts and sends);
 * the rest are compared by name only (Host, Sec-WebSocket-Key, User-Agent and Content-Length carry per-request values).
 */
const COMPARED_VALUES = ['connection', 'upgrade', 'sec-websocket-version', 'sec-websocket-protocol', 'x-stream-protocol-version', 'accept', 'content-type'];

/** Each difference as one line `<where> <name>: kubectl <…> probe <…>`; none when the two are the same request. */
export function differences(kubectl: WireRequest, probe: WireRequest): string[] {
  const out: string[] = [];
  if (kubectl.method !== probe.method) out.push(`method: kubectl ${kubectl.method} probe ${probe.method}`);
  if (kubectl.path !== probe.path) out.push(`path: kubectl ${kubectl.path} probe ${probe.path}`);
  for (const k of union(Object.keys(kubectl.query), Object.keys(probe.query))) {
    const a = kubectl.query[k] ?? [];
    const b = probe.query[k] ?? [];
    if (JSON.stringify(a) !== JSON.stringify(b)) out.push(`query ${k}: kubectl ${JSON.stringify(a)} probe ${JSON.stringify(b)}`);
  }
  for (const h of union(Object.keys(kubectl.headers), Object.keys(probe.headers))) {
    const a = kubectl.headers[h];
    const b = probe.headers[h];
    if (a === undefined || b === undefined)
      out.push(`header ${h}: kubectl ${a === undefined ? 'absent' : 'sent'} probe ${b === undefined ? 'absent' : 'sent'}`);
    else if (COMPARED_VALUES.includes(h) && norm(a) !== norm(b)) out.push(`header ${h}: kubectl ${JSON.stringify(a)} probe ${JSON.stringify(b)}`);
  }
  return out;
}

/** A header's value as a hop compares it: case of the words aside (`Upgrade` / `upgrade`), list spacing aside. */
function norm(v: string | string[]): string {
  return (Array.isArray(v) ? v.join(',') : v)
    .split(',')
    .map((s) => s.trim().toLowerCase())
    .join(',');
}

function union(a: readonly string[], b: readonly string[]): string[] {
  return [...new Set([...a, ...b])].sort();
}

/** The differences no allowed rule explains: `allowed` maps a difference's prefix (`query command`, `header user-agent`) to why. */
export function unexplained(diffs: readonly string[], allowed: Readonly<Record<string, string>>): string[] {
  return diffs.filter((d) => !Object.keys(allowed).some((prefix) => d.startsWith(`${prefix}:`)));
}
