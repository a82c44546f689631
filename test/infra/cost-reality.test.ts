/**
 * The cost estimate against what is really billed, so a new alarm or metric changes the estimate or fails here:
 * the alarms and composites are counted in the synthesized stack; the custom metrics are the distinct series
 * the publisher itself (reportDatums, perNodeDatums, the PublishFailures datum) emits for every session the
 * configured schedules run, in the worst case (every hold cut, so DisconnectTime and IdleTimeout exist too).
 */
import { readFileSync } from 'node:fs';
import { App } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { describe, expect, it } from 'vitest';
import { LocationStack } from '../../infra/location-stack.js';
import { estimateMonthlyCost } from '../../src/config/cost.js';
import { readConfigDocument } from '../../src/config/load.js';
import { parseProbeConfig, runtimeConfigFor, type ProbeConfig } from '../../src/config/probe-config.js';
import { perNodeDatums, publishFailureDatum, reportDatums } from '../../src/metrics/datums.js';
import type { PerNodeReport } from '../../src/probe/per-node.js';
import { expandPlan } from '../../src/probe/runner.js';
import { OPERATIONS, TRANSPORTS } from '../../src/vocabulary.js';
import type { TransferOutcome } from '../../src/probe/transfer.js';
import { OK_UPGRADE, probeReport, session } from '../helpers/sessions.js';

type Json = any;

/** A transfer that lost its tail: it publishes everything a transfer can. */
const lostTail = (bytes: number): TransferOutcome => ({
  bytes,
  sentBytes: bytes,
  receivedBytes: bytes - 4096,
  seconds: 1,
  mibPerSecond: 8,
  firstByteMs: 1,
  longestStallSeconds: 0,
  longestStallAtBytes: 0,
  exitBeforeLastByte: true,
  exitCode: 0,
  lostTailBytes: 4096,
  end: 'truncated',
});

/** Every series the publisher emits for one location over its schedules, worst case. */
function publishedSeries(config: ProbeConfig): number {
  const location = config.locations[0]!;
  const series = new Set<string>();
  const add = (d: { name: string; dimensions: Record<string, string> }) => series.add(`${d.name}|${JSON.stringify(Object.entries(d.dimensions).sort())}`);
  for (const cluster of runtimeConfigFor(config, location).clusters) {
    for (const s of config.schedules) {
      const specs = expandPlan(s);
      // Every hold is cut a second before its end: each session publishes all it can (a disconnect time, an idle timeout).
      const results = specs.map((spec) =>
        session(spec.transport, {
          ...spec,
          upgrade: { ...OK_UPGRADE, handshakeMs: 10 },
          hold:
            spec.holdSeconds > 0
              ? {
                  survived: false,
                  disconnectSeconds: spec.holdSeconds - 1,
                  cause: 'fin',
                  idleSeconds: spec.holdSeconds - 1,
                  sinceDataSeconds: spec.holdSeconds - 1,
                }
              : { survived: true, disconnectSeconds: null, cause: null },
          echoMs: null,
          exitCode: null,
          ok: spec.holdSeconds === 0,
          ...(spec.transferBytes ? { transfer: lostTail(spec.transferBytes) } : {}),
        }),
      );
      const report = probeReport(results, location.name, cluster.name);
      reportDatums(report).forEach(add);
      if (cluster.target.perNode) {
        const ops = s.operations ?? OPERATIONS;
        const pn = {
          location: location.name,
          cluster: cluster.name,
          operations: ops,
          transports: TRANSPORTS,
          summary: ops.flatMap((operation) => TRANSPORTS.map((transport) => ({ operation, transport, probed: 3, failing: [] }))),
        } as unknown as PerNodeReport;
        perNodeDatums(pn).forEach(add);
      }
    }
  }
  add(publishFailureDatum(location.name));
  return series.size;
}

function variant(example: string, mutate: (c: Json) => void = () => undefined): ProbeConfig {
  const c = readConfigDocument(`infra/examples/${example}.yaml`) as Json;
  mutate(c);
  return parseProbeConfig(c);
}

const CONFIGS: [string, () => ProbeConfig][] = [
  ['single-location', () => variant('single-location')],
  ['private-vpc', () => variant('private-vpc')],
  ['a cluster probed per node', () => variant('single-location', (c) => (c.clusters[0].target.perNode = true))],
  [
    'two clusters, one per node',
    () =>
      variant('single-location', (c) =>
        c.clusters.push({ ...structuredClone(c.clusters[0]), name: 'prod-us', target: { namespace: 'kube-stream-probe', perNode: true } }),
      ),
  ],
  [
    'an hourly 8MiB transfer',
    () => variant('single-location', (c) => c.schedules.push({ name: 'cp', expression: 'rate(1 hour)', holds: ['0s'], transfer: '8MiB' })),
  ],
  ['holds without pings ticketed', () => variant('single-location', (c) => (c.alarms = { ticketHoldsWithoutPings: true }))],
  [
    'exec only, no pings',
    () =>
      variant(
        'private-vpc',
        (c) => (c.schedules = [{ name: 'x', expression: 'rate(10 minutes)', holds: ['0s', '30s', '65s'], keepalives: ['none'], operations: ['exec'] }]),
      ),
  ],
];

describe('the cost estimate counts what is billed', () => {
  it.each(CONFIGS)(
    '%s: alarms and composites as synthesized, custom metrics as the publisher emits them',
    (_name, make) => {
      const config = make();
      const location = config.locations[0]!;
      const estimate = estimateMonthlyCost(config, location);
      const t = Template.fromStack(new LocationStack(new App(), 'cost', { config, location }));
      const alarms = Object.keys(t.findResources('AWS::CloudWatch::Alarm')).length + Object.keys(t.findResources('AWS::CloudWatch::CompositeAlarm')).length;
      expect(estimate.alarms).toBe(alarms);
      expect(estimate.metrics).toBe(publishedSeries(config));
    },
    120_000,
  );
});

describe("the README's transfer cost", () => {
  it('says what the estimate says for an hourly 8MiB transfer to one cluster', () => {
    const config = variant('single-location', (c) => (c.schedules = [{ name: 'cp', expression: 'rate(1 hour)', holds: ['0s'], transfer: '8MiB' }]));
    const e = estimateMonthlyCost(config, config.locations[0]!);
    const m = /hourly, ≈ (\d+) GB a month, ≈ \$([\d.]+) through a NAT gateway/.exec(readFileSync('README.md', 'utf8'));
    expect(m, 'the README sentence').not.toBeNull();
    expect(Number(m![1])).toBe(Math.round(e.transferGbPerMonth));
    expect(Number(m![2])).toBe(e.transferUsd);
  });
});
