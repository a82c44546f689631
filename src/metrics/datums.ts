/** Probe results → metric data points, per the contract. */
import { probeError } from '../errors.js';
import { TODAYS_KUBECTL, kubectlGetsStream } from '../probe/kubectl-model.js';
import { flapped } from '../probe/retry.js';
import { forgotten, resolved } from '../probe/idle-bracket.js';
import type { PerNodeReport } from '../probe/per-node.js';
import { rowKey, type ProbeReport, type SessionResult } from '../probe/types.js';
import { METRICS, METRIC_KEEPALIVES, type DimensionName, type MetricName } from './contract.js';

export interface Datum {
  readonly name: MetricName;
  readonly dimensions: Readonly<Partial<Record<DimensionName, string>>>;
  readonly value: number;
  readonly timestamp: Date;
}

function datum(name: MetricName, dims: Record<string, string>, value: number, timestamp: Date): Datum {
  // Only the contract's dimensions, all of them: alarms match on the exact set.
  const dimensions: Partial<Record<DimensionName, string>> = {};
  for (const d of METRICS[name].dimensions) {
    const v = dims[d];
    if (v === undefined) throw probeError('INTERNAL', `metric ${name} needs dimension ${d}`, { where: 'metrics/datums' });
    dimensions[d] = v;
  }
  return { name, dimensions, value, timestamp };
}

/**
 * The report's data points. Sessions of a not-measured verdict publish no
 * measurement (they say nothing about the path): ProbeError says the probe
 * could not measure, once per cluster and run, 0 when it could.
 */
export function reportDatums(report: ProbeReport, timestamp = new Date()): Datum[] {
  const out: Datum[] = [];
  const base = { Location: report.location, Cluster: report.cluster };
  // Interrupted sessions say nothing about the path either.
  const notMeasured = report.verdicts.filter((v) => v.verdict === 'not-measured' || v.verdict === 'interrupted');
  const measured = (r: SessionResult) => METRIC_KEEPALIVES.includes(r.keepalive) && !notMeasured.some((v) => rowKey(v) === rowKey(r));
  out.push(datum('ProbeError', base, report.verdicts.some((v) => v.verdict === 'not-measured') ? 1 : 0, timestamp));
  for (const r of report.results.filter(measured)) {
    const dims = { ...base, Operation: r.operation, Transport: r.transport, Keepalive: r.keepalive, HoldSeconds: String(r.holdSeconds) };
    if (r.transferBytes) {
      // A transfer session publishes what it measured about the cp path, not a second UpgradeSuccess for hold 0; an
      // upload, download or small-writes transfer is an ad hoc question (like a shaped hold): printed, not published.
      if (r.transferShape) continue;
      if (r.upgrade.ok && r.firstEchoMs !== null && r.transfer) {
        out.push(datum('TransferComplete', dims, r.transfer.end === 'complete' ? 1 : 0, timestamp));
        out.push(datum('TransferThroughput', dims, r.transfer.mibPerSecond, timestamp));
      }
      continue;
    }
    // A shaped hold (--hold-shape output) is an ad hoc question; its sessions would blur the silent holds' series.
    if (r.holdShape) continue;
    const upgraded = r.upgrade.ok && r.firstEchoMs !== null;
    out.push(datum('UpgradeSuccess', dims, upgraded ? 1 : 0, timestamp));
    // A handshake our own CPU distorted (own-cpu.ts) would report this process as the path: not published.
    if (r.upgrade.handshakeMs !== null && !r.upgrade.ownCpu?.distorted) out.push(datum('HandshakeLatency', dims, r.upgrade.handshakeMs, timestamp));
    if (r.holdSeconds > 0 && upgraded) {
      out.push(datum('HoldSurvived', dims, r.hold.survived ? 1 : 0, timestamp));
      if (r.hold.survived === false && r.hold.disconnectSeconds !== null) out.push(datum('DisconnectTime', dims, r.hold.disconnectSeconds, timestamp));
    }
  }
  for (const r of report.results.filter(measured)) {
    // A session without pings that was cut measured the path's idle timeout; that is a measurement, not an alarm.
    // A hop's own cut dates its timer; a forgotten flow is dated only by its bracket (idle-bracket.ts), published as
    // its upper end once narrowed to a second or a tenth, never the moment of the cut (that was our own packet's).
    if (r.keepalive !== 'none' || r.hold.survived !== false) continue;
    const b = report.idleBracket;
    const seconds = forgotten(r) ? (b && resolved(b) ? b.atMostSeconds : null) : r.hold.cause !== 'echo-timeout' ? (r.hold.idleSeconds ?? null) : null;
    if (seconds !== null) out.push(datum('IdleTimeout', { ...base, Operation: r.operation, Transport: r.transport }, seconds, timestamp));
  }
  const measuredResults = report.results.filter(measured);
  if (measuredResults.length) out.push(datum('Flapping', { Location: report.location }, flapped(measuredResults).length ? 1 : 0, timestamp));
  for (const v of report.verdicts) {
    const today = v.kubectl?.find((k) => k.client === TODAYS_KUBECTL);
    if (today && countsForSlo(v, report.verdicts) && v.verdict !== 'not-measured' && v.verdict !== 'interrupted') {
      const row = measuredResults.filter((r) => rowKey(r) === rowKey(v));
      const gets = kubectlGetsStream(
        row.find((r) => r.transport === 'spdy'),
        row.find((r) => r.transport === 'websocket'),
      );
      if (gets !== null) out.push(datum('KubectlUpgrade', base, gets ? 1 : 0, timestamp));
    }
    // Exactly "today's kubectl works here only because it falls back"; nothing when the model does not apply.
    if (!today || today.outcome === 'unknown') continue;
    const dims = { ...base, Operation: v.operation };
    out.push(datum('SilentFallback', dims, today.outcome === 'works-via-fallback' ? 1 : 0, timestamp));
    out.push(datum('KubectlWorks', dims, today.outcome === 'breaks' ? 0 : 1, timestamp));
  }
  return out;
}

/**
 * The SLO's events: one per kubectl invocation, i.e. per kubectl row; a hold-0 row without pings is the same invocation
 * as kubectl's hold-0 row (no ping is sent in a hold of 0), so it counts only where the plan has no kubectl row for it.
 */
function countsForSlo(v: ProbeReport['verdicts'][number], all: ProbeReport['verdicts']): boolean {
  if (v.keepalive === 'kubectl') return true;
  const twin = (x: ProbeReport['verdicts'][number]) => x.keepalive === 'kubectl' && rowKey(x) === rowKey({ ...v, keepalive: 'kubectl' });
  return v.keepalive === 'none' && v.holdSeconds === 0 && !all.some(twin);
}

export function publishFailureDatum(location: string, timestamp = new Date()): Datum {
  return datum('PublishFailures', { Location: location }, 1, timestamp);
}

/**
 * Per-node probing: how many nodes were probed and failed, per operation × transport (never a Node dimension).
 * When the API server answered but nothing could be probed (no target deployed, listing forbidden), NodesProbed
 * is 0 for every operation × transport (the "no nodes probed" alarm); when it could not be reached, nothing is
 * published here: the main target's results already say so, and one outage should not raise two alarms.
 */
export function perNodeDatums(report: PerNodeReport, timestamp = new Date()): Datum[] {
  const base = { Location: report.location, Cluster: report.cluster };
  if (report.error) {
    if (report.errorCode) return [];
    return report.operations.flatMap((op) => report.transports.map((t) => datum('NodesProbed', { ...base, Operation: op, Transport: t }, 0, timestamp)));
  }
  return report.summary.flatMap((s) => {
    const dims = { ...base, Operation: s.operation, Transport: s.transport };
    return [datum('NodesProbed', dims, s.probed, timestamp), datum('NodesFailing', dims, s.failing.length, timestamp)];
  });
}
