/**
 * Publishes datums with PutMetricData: batched within the API's limits,
 * retried with backoff inside the caller's deadline; if it still fails the
 * datums are written as EMF log lines (nothing is lost) and the failure is
 * itself counted (PublishFailures).
 */
import type { CloudWatchClient, MetricDatum } from '@aws-sdk/client-cloudwatch';
import { METRIC_NAMESPACE, METRICS } from './contract.js';
import { publishFailureDatum, type Datum } from './datums.js';
import { emfLines } from './emf.js';

/** PutMetricData: at most 1000 metric data per request and 1 MB of payload. */
export const MAX_DATUMS_PER_REQUEST = 1000;
export const MAX_REQUEST_BYTES = 1_000_000;

export interface PublishOptions {
  readonly client: Pick<CloudWatchClient, 'send'>;
  /** performance.now() by which publishing must be over (retries included). */
  readonly deadline: number;
  /** Where EMF lines go (stdout in Lambda, so CloudWatch Logs picks them up). */
  readonly log: (line: string) => void;
  readonly location: string;
  readonly sleep?: (ms: number) => Promise<void>;
}

export interface PublishOutcome {
  readonly published: number;
  readonly requests: number;
  readonly attempts: number;
  readonly emfFallback: number;
  readonly error?: string;
}

export function toMetricDatum(d: Datum): MetricDatum {
  return {
    MetricName: d.name,
    Unit: METRICS[d.name].unit,
    Value: d.value,
    Timestamp: d.timestamp,
    Dimensions: Object.entries(d.dimensions).map(([Name, Value]) => ({ Name, Value: Value! })),
  };
}

export function batches(datums: readonly Datum[]): Datum[][] {
  const out: Datum[][] = [];
  let current: Datum[] = [];
  let bytes = 0;
  for (const d of datums) {
    const size = JSON.stringify(toMetricDatum(d)).length + 1;
    if (current.length >= MAX_DATUMS_PER_REQUEST || bytes + size > MAX_REQUEST_BYTES - 1024) {
      out.push(current);
      current = [];
      bytes = 0;
    }
    current.push(d);
    bytes += size;
  }
  if (current.length) out.push(current);
  return out;
}

export async function publishCloudWatch(datums: readonly Datum[], o: PublishOptions): Promise<PublishOutcome> {
  const sleep = o.sleep ?? ((ms: number) => new Promise<void>((r) => setTimeout(r, ms)));
  let published = 0;
  let requests = 0;
  let attempts = 0;
  const failed: Datum[] = [];
  let lastError: string | undefined;
  // Loaded on first use: the SDK client is a large part of a cold start.
  const { PutMetricDataCommand } = await import('@aws-sdk/client-cloudwatch');
  for (const batch of batches(datums)) {
    let ok = false;
    for (let attempt = 0; !ok; attempt++) {
      attempts++;
      const remaining = o.deadline - performance.now();
      if (remaining <= 0) break;
      try {
        const abort = AbortSignal.timeout(Math.max(1, Math.floor(remaining)));
        await o.client.send(new PutMetricDataCommand({ Namespace: METRIC_NAMESPACE, MetricData: batch.map(toMetricDatum) }), { abortSignal: abort });
        ok = true;
        requests++;
        published += batch.length;
      } catch (err) {
        const e = err as { name?: string; message?: string; $metadata?: { httpStatusCode?: number } };
        lastError =
          e.name === 'AbortError'
            ? `PutMetricData did not answer before the publish deadline (${Math.round(remaining)} ms were left): is CloudWatch (monitoring) reachable from here?`
            : `${e.name ?? 'Error'}${e.$metadata?.httpStatusCode ? ` (HTTP ${e.$metadata.httpStatusCode})` : ''}: ${e.message ?? ''}`.trim();
        // Exponential backoff with jitter, never past the deadline.
        const wait = Math.min(2000, 100 * 2 ** attempt) * (0.5 + Math.random() / 2);
        if (performance.now() + wait >= o.deadline || attempt >= 5) break;
        await sleep(wait);
      }
    }
    if (!ok) failed.push(...batch);
  }
  if (failed.length > 0) {
    for (const line of emfLines([...failed, publishFailureDatum(o.location)])) o.log(line);
  }
  return { published, requests, attempts, emfFallback: failed.length, ...(lastError && failed.length ? { error: lastError } : {}) };
}
