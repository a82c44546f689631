/**
 * Pushing one run's metrics to a Prometheus Pushgateway (for a CronJob, which is gone before any scrape). The
 * exposition is prom-client's; this file only addresses the group and sends it, per the Pushgateway's API
 * (https://github.com/prometheus/pushgateway#url):
 *
 * - PUT replaces every metric of the group, so a series the run did not measure (a disconnect it did not see)
 *   disappears rather than outliving the run that saw it. The group is job + location + cluster + holds: each
 *   cluster's runs of one schedule (its holds) replace only their own series, not another schedule's. The Pushgateway itself adds `push_time_seconds` per group, which the
 *   "the probe stopped running" rule reads.
 * - Grouping-key values are sent `@base64` (URL-safe base64, RFC 4648 §5), as the API asks of values that may hold
 *   a `/`; an empty value is `=`.
 * - User info in the URL (`https://user:pass@host`) becomes a basic Authorization header and never appears in an
 *   error; redirects are not followed (a 3xx is a failure naming the status).
 */
import { probeError } from '../errors.js';
import type { Registry } from 'prom-client';

export const PUSHGATEWAY_TIMEOUT_MS = 10_000;

/** The Pushgateway job of a run's sessions, and of a per-node run's counts: two groups, so neither erases the other. */
export const PUSH_JOBS = { sessions: 'kube_stream_probe', perNode: 'kube_stream_probe_per_node' } as const;

export interface PushTarget {
  /** The Pushgateway's base URL, e.g. http://pushgateway.monitoring:9091 (a path prefix is kept). */
  readonly url: string;
  readonly job: string;
  readonly grouping: Readonly<Record<string, string>>;
}

function base64Segment(value: string): string {
  return value === '' ? '=' : Buffer.from(value, 'utf8').toString('base64url');
}

/** The URL without user info, query or fragment: what errors and logs may name. */
export function displayUrl(url: URL): string {
  return `${url.protocol}//${url.host}${url.pathname.replace(/\/$/, '')}`;
}

export function parsePushgatewayUrl(text: string): URL {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw probeError('USAGE', '--pushgateway is not a URL (expected e.g. http://pushgateway.monitoring:9091)', { field: 'pushgateway' });
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw probeError('USAGE', `--pushgateway must be an http:// or https:// URL, not ${url.protocol}`, { field: 'pushgateway' });
  }
  return url;
}

/** The group's path: /metrics/job@base64/…/label@base64/… under the URL's own path. */
export function groupPath(target: PushTarget): string {
  const parts = [`job@base64/${base64Segment(target.job)}`];
  for (const [label, value] of Object.entries(target.grouping)) {
    if (!/^[a-zA-Z_][a-zA-Z0-9_]*$/.test(label)) {
      throw probeError('INTERNAL', `grouping label ${JSON.stringify(label)} is not a Prometheus label name`, { where: 'metrics/pushgateway' });
    }
    parts.push(`${label}@base64/${base64Segment(value)}`);
  }
  return `/metrics/${parts.join('/')}`;
}

/** PUTs the registry's exposition as the group; resolves with the number of metric families sent. */
export async function pushRegistry(registry: Registry, target: PushTarget, timeoutMs = PUSHGATEWAY_TIMEOUT_MS): Promise<number> {
  const base = parsePushgatewayUrl(target.url);
  const headers: Record<string, string> = { 'content-type': registry.contentType };
  if (base.username || base.password) {
    const user = decodeURIComponent(base.username);
    const pass = decodeURIComponent(base.password);
    headers.authorization = `Basic ${Buffer.from(`${user}:${pass}`).toString('base64')}`;
  }
  const shown = displayUrl(base);
  const url = `${base.protocol}//${base.host}${base.pathname.replace(/\/$/, '')}${groupPath(target)}`;
  const body = await registry.metrics();
  let response: Response;
  try {
    response = await fetch(url, { method: 'PUT', headers, body, redirect: 'manual', signal: AbortSignal.timeout(timeoutMs) });
  } catch (err) {
    const timedOut = (err as Error).name === 'TimeoutError';
    const cause = (err as { cause?: { code?: string } }).cause?.code;
    throw probeError(
      'PUBLISH_FAILED',
      timedOut
        ? `the Pushgateway at ${shown} did not answer within ${timeoutMs / 1000} s`
        : `the Pushgateway at ${shown} could not be reached${cause ? ` (${cause})` : ''}`,
      { target: 'pushgateway', url: shown, ...(timedOut ? { timeoutMs } : {}) },
    );
  }
  const text = await response.text().catch(() => '');
  if (response.status < 200 || response.status > 299) {
    const bodyPrefix = text.slice(0, 200);
    const what =
      response.status >= 300 && response.status < 400
        ? `redirected (${response.status}); redirects are not followed: give the Pushgateway's own URL`
        : `answered ${response.status}${bodyPrefix ? `: ${bodyPrefix.trim()}` : ''}`;
    throw probeError('PUBLISH_FAILED', `the Pushgateway at ${shown} ${what}`, { target: 'pushgateway', url: shown, status: response.status, bodyPrefix });
  }
  return (await registry.getMetricsAsJSON()).length;
}
