/**
 * Probe histories for the alarm tests: how a path treats each session over time, replayed run by run through the
 * real verdicts() and reportDatums() (the kubectl model and the metric contract). The CloudWatch alarm-storm test
 * (test/infra/alarm-storm.test.ts) and the Prometheus rules test (test/lab/prometheus-rules.test.ts) replay the same
 * histories. Six healthy hours come first (WARM_UP).
 */
import type { ProbeConfig } from '../../src/config/probe-config.js';
import { perNodeDatums, reportDatums, type Datum } from '../../src/metrics/datums.js';
import type { PerNodeReport } from '../../src/probe/per-node.js';
import type { ProbeReport, SessionResult, UpgradeOutcome } from '../../src/probe/types.js';
import { OPERATIONS, TRANSPORTS, type KeepaliveMode, type Operation, type Transport } from '../../src/vocabulary.js';
import { OK_UPGRADE as SHARED_OK_UPGRADE, probeReport, session as sessionResult } from './sessions.js';

export const HOUR = 3600;
export const WARM_UP = 6 * HOUR;
export const LOCATION = 'eu-west-1-public';
export const CLUSTER = 'prod-eu';

export interface Spec {
  readonly operation: Operation;
  readonly transport: Transport;
  readonly keepalive: KeepaliveMode;
  readonly holdSeconds: number;
}
/** How the path treats one session of the run `run` (numbered per schedule) starting at `t`; undefined: the probe did not run at all. */
export type Path = (s: Spec, t: number, run: number) => Partial<SessionResult> | 'no-run';

const OK_UPGRADE: UpgradeOutcome = { ...SHARED_OK_UPGRADE, handshakeMs: 40 };
export const healthy: Path = () => ({});
export const unreachable: Partial<SessionResult> = {
  ok: false,
  firstEchoMs: null,
  echoMs: null,
  hold: { survived: null, disconnectSeconds: null, cause: null },
  upgrade: { ...OK_UPGRADE, ok: false, status: null, handshakeMs: null, error: 'connect ETIMEDOUT', errorCode: 'DIAL_TIMEOUT' },
};
export const refusedByHop: Partial<SessionResult> = {
  ok: false,
  firstEchoMs: null,
  echoMs: null,
  hold: { survived: null, disconnectSeconds: null, cause: null },
  upgrade: { ...OK_UPGRADE, ok: false, status: 403, handshakeMs: null, error: 'HTTP 403', errorCode: 'UPGRADE_REJECTED', kubernetesStatus: false },
};
export const unauthorized: Partial<SessionResult> = {
  ok: false,
  firstEchoMs: null,
  echoMs: null,
  hold: { survived: null, disconnectSeconds: null, cause: null },
  upgrade: { ...OK_UPGRADE, ok: false, status: 401, handshakeMs: null, error: 'HTTP 401', errorCode: 'UPGRADE_REJECTED', kubernetesStatus: true },
};
/** A session that failed once (its upgrade reset) and worked on its retry a second later (src/probe/retry.ts). */
export const flapped: Partial<SessionResult> = {
  retry: {
    outcome: 'passed',
    pauseMs: 1000,
    first: {
      upgrade: { ok: false, status: null, error: 'the connection broke during the handshake (ECONNRESET)', errorCode: 'UPGRADE_FAILED', handshakeMs: null },
      firstEchoMs: null,
      error: null,
      errorCode: null,
      durationMs: 4,
    },
  },
};
export const cutIdleAt = (seconds: number): Partial<SessionResult> => ({
  ok: false,
  echoMs: null,
  error: 'lost',
  errorCode: 'SESSION_LOST',
  hold: { survived: false, disconnectSeconds: seconds + 0.3, cause: 'fin', idleSeconds: seconds, sinceDataSeconds: seconds },
});

function session(s: Spec, over: Partial<SessionResult>): SessionResult {
  return sessionResult(s.transport, { ...s, upgrade: OK_UPGRADE, firstEchoMs: 2, echoMs: 2, ...over });
}

/** Per-node probing of three nodes at time `t`: how many fail this operation × transport, or why none was probed. */
export type NodesPath = (operation: Operation, transport: Transport, t: number) => number | 'no-targets' | 'unreachable';

function perNodeReport(nodes: NodesPath, t: number, location: string): PerNodeReport {
  const base = { probeVersion: 'test', location, cluster: CLUSTER, selector: 'x', nodes: [], operations: OPERATIONS, transports: TRANSPORTS };
  const first = nodes(OPERATIONS[0], TRANSPORTS[0], t);
  if (first === 'no-targets') return { ...base, summary: [], error: 'no Running pod labelled x' };
  if (first === 'unreachable') return { ...base, summary: [], error: 'could not be listed', errorCode: 'DIAL_TIMEOUT' };
  const summary = OPERATIONS.flatMap((operation) =>
    TRANSPORTS.map((transport) => {
      const n = nodes(operation, transport, t) as number;
      return {
        operation,
        transport,
        probed: 3,
        failing: Array.from({ length: n }, (_, i) => ({
          node: `node-${i}`,
          class: 'stream-error-after-upgrade',
          kubeletVersion: 'v1.36.0',
          extendWebSockets: true,
        })),
        text: '',
      };
    }),
  );
  return { ...base, summary };
}

/** One schedule of a history: how often it runs, its holds and keepalives. */
export interface HistorySchedule {
  readonly every: number;
  readonly holds: readonly number[];
  readonly keepalives: readonly KeepaliveMode[];
}

/** The example config's schedules (rate(1 minute), rate(5 minutes), rate(1 hour)) as history schedules. */
export function historySchedules(config: ProbeConfig): HistorySchedule[] {
  return config.schedules.map((s) => {
    const every = s.expression === 'rate(1 minute)' ? 60 : s.expression === 'rate(5 minutes)' ? 300 : s.expression === 'rate(1 hour)' ? HOUR : NaN;
    if (!Number.isFinite(every)) throw new Error(`history: unsupported schedule ${s.expression}`);
    return { every, holds: [...s.holdsSeconds], keepalives: s.keepalives };
  });
}

/** One run of a schedule: when it started (s), when it published (after its longest hold), and what. */
export interface HistoryRun {
  readonly t: number;
  readonly publishedAt: number;
  readonly schedule: HistorySchedule;
  /** The run's report (its sessions: the evidence lines' source). */
  readonly report: ProbeReport;
  readonly datums: readonly Datum[];
  /** The per-node run's data points (a run of their own in a CronJob: another Pushgateway group); null without. */
  readonly perNode: readonly Datum[] | null;
}

/** Where the history is seen from: its location (LOCATION), and its schedules' phase (s, whole minutes; 0). */
export interface HistoryWhere {
  readonly location?: string;
  readonly offset?: number;
}

/** Every run of `phases` (each a path for so many hours) after the healthy warm-up, minute by minute; and the end (s). */
export function historyRuns(
  schedules: readonly HistorySchedule[],
  phases: readonly [Path, number][],
  nodes?: NodesPath,
  where: HistoryWhere = {},
): { runs: HistoryRun[]; end: number } {
  const location = where.location ?? LOCATION;
  const offset = where.offset ?? 0;
  const timeline: [number, Path][] = [];
  let t0 = 0;
  for (const [path, hours] of [[healthy, WARM_UP / HOUR], ...phases] as [Path, number][]) {
    timeline.push([t0, path]);
    t0 += hours * HOUR;
  }
  const end = t0;
  const pathAt = (t: number) => [...timeline].reverse().find(([from]) => t >= from)![1];
  const runs: HistoryRun[] = [];
  for (let t = 0; t < end; t += 60) {
    for (const s of schedules) {
      if ((t - offset) % s.every !== 0 || t < offset) continue;
      const run = (t - offset) / s.every;
      const path = pathAt(t);
      const results: SessionResult[] = [];
      let ran = true;
      for (const operation of OPERATIONS)
        for (const keepalive of s.keepalives)
          for (const holdSeconds of s.holds)
            for (const transport of TRANSPORTS) {
              const spec = { operation, transport, keepalive, holdSeconds };
              const over = path(spec, t, run);
              if (over === 'no-run') ran = false;
              else results.push(session(spec, over));
            }
      if (!ran) continue;
      const report = probeReport(results, location, CLUSTER);
      // Published when the run ends: after its longest hold.
      const publishedAt = t + Math.max(...s.holds) + 5;
      const perNode = nodes ? perNodeDatums(perNodeReport(nodes, t, location), new Date(publishedAt * 1000)) : null;
      runs.push({ t, publishedAt, schedule: s, report, datums: reportDatums(report, new Date(publishedAt * 1000)), perNode });
    }
  }
  return { runs, end };
}
