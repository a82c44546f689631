/**
 * The metric contract (docs/architecture.md): names, units and dimensions, defined
 * once and imported by the publisher, the EMF writer and the CDK alarms and
 * dashboard.
 */
import { TODAYS_KUBECTL_LABEL } from '../probe/kubectl-clients.js';
import { BYTES_PER_MIB, type KeepaliveMode } from '../vocabulary.js';
export const METRIC_NAMESPACE = 'KubeStreamProbe';

/**
 * The keepalive modes whose sessions publish: kubectl's (does kubectl survive?) and none (the path's idle timer). An
 * SDK client's session (`sdk`) decides the WS-only forecast and publishes nothing of its own: its hold is a hold
 * without pings, already measured by `none`, and its upgrade would count WebSocket twice.
 */
export const METRIC_KEEPALIVES: readonly KeepaliveMode[] = ['kubectl', 'none'];

export const Dim = {
  Location: 'Location',
  Cluster: 'Cluster',
  Operation: 'Operation',
  Transport: 'Transport',
  Keepalive: 'Keepalive',
  HoldSeconds: 'HoldSeconds',
} as const;
export type DimensionName = (typeof Dim)[keyof typeof Dim];

export type MetricUnit = 'None' | 'Milliseconds' | 'Seconds' | 'Count';

export interface MetricSpec {
  /** CloudWatch's unit. */
  readonly unit: MetricUnit;
  /** What the value is in, when CloudWatch's units cannot say it (it has no MiB): every exporter reads it here. */
  readonly valueUnit?: 'MiB/s';
  readonly dimensions: readonly DimensionName[];
  readonly description: string;
}

/** Each value unit in bytes per second (probe/transfer.ts mibPerSecond computes it). */
export const VALUE_UNIT_BYTES_PER_SECOND: Readonly<Record<NonNullable<MetricSpec['valueUnit']>, number>> = { 'MiB/s': BYTES_PER_MIB };

const BASE = [Dim.Location, Dim.Cluster, Dim.Operation, Dim.Transport] as const;
const HOLD = [...BASE, Dim.Keepalive, Dim.HoldSeconds] as const;

export const METRICS = {
  UpgradeSuccess: { unit: 'None', dimensions: BASE, description: 'the upgrade returned 101 with our subprotocol and the first echo worked (0/1)' },
  HandshakeLatency: {
    unit: 'Milliseconds',
    dimensions: BASE,
    description:
      'start of dialing → 101; not published for a handshake our own CPU distorted (the event loop busy for half of it and ≥ 20 ms: src/probe/own-cpu.ts)',
  },
  HoldSurvived: { unit: 'None', dimensions: HOLD, description: 'the session was alive and echoed after the hold (0/1)' },
  DisconnectTime: { unit: 'Seconds', dimensions: HOLD, description: 'when a session was lost during its hold: seconds since the 101' },
  KubectlWorks: {
    unit: 'None',
    dimensions: [Dim.Location, Dim.Cluster, Dim.Operation],
    description: `today's kubectl (${TODAYS_KUBECTL_LABEL}) works on this path, with its keepalive, through any hold: 1 (via its fallback too), else 0`,
  },
  IdleTimeout: {
    unit: 'Seconds',
    dimensions: BASE,
    description:
      "the path's measured idle timeout: seconds with no byte moving before a hop cut a session without pings; for a device that forgets idle flows, the upper end of its bracket once narrowed to a second or a tenth",
  },
  SilentFallback: {
    unit: 'None',
    dimensions: [Dim.Location, Dim.Cluster, Dim.Operation],
    description: `today's kubectl (${TODAYS_KUBECTL_LABEL}) works only because it falls back to SPDY (0/1): a hop refuses WebSocket, which WebSocket-only clients cannot survive and which from kubectl 1.38 (KEP-4006 GA) can no longer be worked around by forcing SPDY`,
  },
  TransferThroughput: {
    unit: 'None',
    valueUnit: 'MiB/s',
    dimensions: BASE,
    description:
      '--transfer (the kubectl cp path): MiB/s (2^20 bytes per second) that came back through the session, first byte written to last byte back; CloudWatch has no MiB unit, so the unit is None and the value is MiB/s',
  },
  TransferComplete: {
    unit: 'None',
    dimensions: BASE,
    description: '--transfer: every byte came back, byte for byte, and (exec) the exit status came after the last of them (0/1)',
  },
  NodesProbed: {
    unit: 'Count',
    dimensions: BASE,
    description: 'per-node probing: nodes whose target was probed (no Node dimension: node names go to the log)',
  },
  NodesFailing: { unit: 'Count', dimensions: BASE, description: 'per-node probing: nodes where this operation over this transport failed' },
  KubectlUpgrade: {
    unit: 'None',
    dimensions: [Dim.Location, Dim.Cluster],
    description: `the SLO's event (src/metrics/slo.ts): one per kubectl row and run: today's kubectl (${TODAYS_KUBECTL_LABEL}) gets its stream, a 101 and a working first exchange, over WebSocket or through its fallback to SPDY (1), or not (0), after the retry (KEP-4006's upgrade SLI)`,
  },
  Flapping: {
    unit: 'None',
    // Per location: its ticket is the location's, and one alarm per location keeps a cluster's cost in alarms down
    // (infra/stack-limits.ts); which cluster and session flapped is in the run's evidence lines.
    dimensions: [Dim.Location],
    description:
      'per cluster probed in a run: a session failed before its hold and worked when tried again on a fresh connection (src/probe/retry.ts): 1, else 0',
  },
  ProbeError: {
    unit: 'None',
    dimensions: [Dim.Location, Dim.Cluster],
    description: 'the probe could not measure part of this cluster (credentials, target, port): 1, else 0',
  },
  PublishFailures: { unit: 'Count', dimensions: [Dim.Location], description: 'PutMetricData failed and the metrics went to EMF instead' },
} as const satisfies Record<string, MetricSpec>;

export type MetricName = keyof typeof METRICS;

/**
 * Runs with a flap (Flapping 1) within an hour, or within three runs of a schedule that runs less often, that make
 * the flapping ticket (CloudWatch: infra/alarms.ts; Prometheus: prometheus-rules.ts).
 */
export const FLAPPING_TICKET_RUNS = 3;
