/** The PutMetricData publisher with the real SDK client against the local endpoint: batching and compression. */
import { CloudWatchClient } from '@aws-sdk/client-cloudwatch';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { batches, MAX_DATUMS_PER_REQUEST, publishCloudWatch } from '../../src/metrics/cloudwatch.js';
import type { Datum } from '../../src/metrics/datums.js';
import { startLocalAws, type LocalAws } from '../helpers/local-aws.js';

let aws: LocalAws;
beforeAll(async () => {
  aws = await startLocalAws();
});
afterAll(() => aws.close());

const datum = (i: number): Datum => ({
  name: 'HandshakeLatency',
  dimensions: { Location: 'l', Cluster: `cluster-${i % 7}`, Operation: 'exec', Transport: i % 2 ? 'spdy' : 'websocket' },
  value: i,
  timestamp: new Date(1_800_000_000_000),
});

describe('publishCloudWatch', () => {
  it(`batches at ${MAX_DATUMS_PER_REQUEST} data per request (the API limit)`, () => {
    const sizes = batches(Array.from({ length: 2500 }, (_, i) => datum(i))).map((b) => b.length);
    expect(sizes).toEqual([1000, 1000, 500]);
    expect(batches(Array.from({ length: 1000 }, (_, i) => datum(i)))).toHaveLength(1);
  });

  it('publishes 2500 data in 3 requests, gzip-compressed by the SDK, all values arriving', async () => {
    const client = new CloudWatchClient({ endpoint: aws.url, region: 'eu-west-1', credentials: { accessKeyId: 'AKIDLOCALTEST0000000', secretAccessKey: 'x' } });
    const before = aws.puts.length;
    const out = await publishCloudWatch(
      Array.from({ length: 2500 }, (_, i) => datum(i)),
      { client, deadline: performance.now() + 20_000, log: () => undefined, location: 'l' },
    );
    expect(out).toMatchObject({ published: 2500, requests: 3, emfFallback: 0 });
    const values = aws.puts.slice(before).flatMap((p) => p.metricData.map((d) => d.Value));
    expect(values.sort((a, b) => a! - b!)).toEqual(Array.from({ length: 2500 }, (_, i) => i));
  });
});
