/** Request paths and queries exactly as client-go builds them. */
import type { ExecOptions, PodTarget } from './types.js';

const UNRESERVED = /^[A-Za-z0-9\-_.~]*$/;

/** Go's url.QueryEscape: only [A-Za-z0-9-_.~] stay; space becomes '+'. */
export function goQueryEscape(s: string): string {
  if (UNRESERVED.test(s)) return s;
  return encodeURIComponent(s)
    .replace(/[!'()*]/g, (c) => '%' + c.charCodeAt(0).toString(16).toUpperCase())
    .replace(/%20/g, '+');
}

/** Go's url.Values.Encode: keys sorted, values of one key in order. */
export function encodeQuery(values: ReadonlyArray<readonly [string, string]>): string {
  // A stable sort by key keeps the values of one key in their order.
  const sorted = [...values].sort(byKey);
  let out = '';
  for (const [k, v] of sorted) out += `${out ? '&' : ''}${goQueryEscape(k)}=${goQueryEscape(v)}`;
  return out;
}

function byKey(a: readonly [string, string], b: readonly [string, string]): number {
  return a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0;
}

export function podPath(t: PodTarget, subresource: 'exec' | 'attach' | 'portforward'): string {
  return `/api/v1/namespaces/${encodeURIComponent(t.namespace)}/pods/${encodeURIComponent(t.pod)}/${subresource}`;
}

/** The PodExecOptions query: booleans only when true (omitempty), command repeated in order. */
export function execQuery(o: ExecOptions): string {
  const stdout = o.stdout ?? true;
  const stderr = o.stderr ?? !o.tty;
  const v: [string, string][] = o.command.map((c) => ['command', c] as [string, string]);
  if (o.container) v.push(['container', o.container]);
  if (o.stdin) v.push(['stdin', 'true']);
  if (stdout) v.push(['stdout', 'true']);
  if (stderr) v.push(['stderr', 'true']);
  if (o.tty) v.push(['tty', 'true']);
  return encodeQuery(v);
}

/** exec's path and query, or attach's: the same PodAttachOptions fields without a command (client-go's AttachOptions). */
export function execPath(o: ExecOptions): string {
  return `${podPath(o, o.subresource ?? 'exec')}?${execQuery(o)}`;
}
