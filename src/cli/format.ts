/** Human output: the verdict table, the diagnoses, and per-session numbers with units. */
import { STREAMING_SUBRESOURCES } from '../kube/rbac.js';
import { KUBECTL_CLIENTS, type KubectlOutcome } from '../probe/kubectl-model.js';
import type { Diagnosis, ProbeReport, SessionResult, Verdict } from '../probe/types.js';
import { bytesText, rowText } from '../probe/row-text.js';

import { table } from '../text.js';

export { table };

/** A transfer's numbers with their units. */
function transferText(r: SessionResult): string {
  const t = r.transfer!;
  const rate = `${t.mibPerSecond} MiB/s, first byte ${t.firstByteMs ?? '-'} ms, longest stall ${t.longestStallSeconds}s`;
  if (t.end === 'complete') return `${bytesText(t.receivedBytes)} in ${t.seconds}s (${rate})`;
  if (t.end === 'truncated') return `LOST TAIL ${t.lostTailBytes}B (${t.receivedBytes}/${t.sentBytes}B back, exit ${r.exitCode ?? '-'})`;
  return `${t.end.toUpperCase()} at ${t.receivedBytes}/${t.bytes}B (${rate})`;
}
const ms = (v: number | null) => (v === null ? '-' : v < 10 ? v.toFixed(1) : v.toFixed(0));

function holdText(r: SessionResult): string {
  if (!r.upgrade.ok) return '-';
  if (r.firstEchoMs === null) return 'no echo';
  if (r.transfer) return transferText(r);
  if (r.holdSeconds === 0) return 'n/a';
  if (r.hold.survived) return 'survived';
  return r.hold.disconnectSeconds !== null ? `lost at ${r.hold.disconnectSeconds.toFixed(1)}s (${r.hold.cause})` : `lost (${r.hold.cause})`;
}

function upgradeText(r: SessionResult): string {
  if (r.upgrade.ok) return '101';
  if (r.upgrade.status !== null) return `${r.upgrade.status}${r.upgrade.kubernetesStatus ? ' Status' : ' (hop)'}`;
  return r.upgrade.errorCode?.toLowerCase().replace(/_/g, '-') ?? 'failed';
}

export function resultsTable(reports: readonly { path?: string; report: ProbeReport }[]): string {
  const withPath = reports.some((r) => r.path !== undefined);
  const headers = [
    ...(withPath ? ['PATH'] : []),
    'OPERATION',
    'TRANSPORT',
    'SUBPROTOCOL',
    'KEEPALIVE',
    'HOLD',
    'UPGRADE',
    'HANDSHAKE ms',
    'ECHO ms',
    'HOLD RESULT',
    'EXIT',
  ];
  const rows = reports.flatMap(({ path, report }) =>
    report.results.map((r) => [
      ...(withPath ? [path ?? ''] : []),
      r.operation,
      r.transport,
      r.subprotocol ?? '-',
      r.keepalive,
      rowText(r),
      upgradeText(r),
      `${ms(r.upgrade.handshakeMs)}${r.upgrade.ownCpu?.distorted ? '*' : ''}`,
      ms(r.echoMs ?? r.firstEchoMs),
      holdText(r),
      r.exitCode === null ? '-' : String(r.exitCode),
    ]),
  );
  const distorted = reports.flatMap(({ report }) => report.results).filter((r) => r.upgrade.ownCpu?.distorted);
  if (distorted.length === 0) return table(headers, rows);
  const worst = Math.max(...distorted.map((r) => r.upgrade.ownCpu!.busyMs));
  return `${table(headers, rows)}\n* this process's own event loop was busy for half or more of that handshake (up to ${worst} ms): the time is more this machine's CPU than the path's, and is not published as HandshakeLatency. Fewer sessions at once, or more CPU (Lambda: more memory), make it the path's.`;
}

const OUTCOME_WORDS: Readonly<Record<KubectlOutcome, string>> = { works: 'ok', 'works-via-fallback': 'fallback', breaks: 'BREAKS', unknown: '?' };

/** One cell per kubectl client: ok, fallback (works only by falling back to SPDY), BREAKS; '-' where the row does not model kubectl. */
export function kubectlCells(v: Verdict): string[] {
  return KUBECTL_CLIENTS.map((c) => {
    const e = v.kubectl?.find((k) => k.client === c.id);
    return e ? OUTCOME_WORDS[e.outcome] : '-';
  });
}

export function verdictTable(reports: readonly { path?: string; report: ProbeReport }[]): string {
  const withPath = reports.some((r) => r.path !== undefined);
  const headers = [...(withPath ? ['PATH'] : []), 'OPERATION', 'KEEPALIVE', 'HOLD', 'SPDY', 'WEBSOCKET', 'VERDICT', ...KUBECTL_CLIENTS.map((c) => c.label)];
  const rows = reports.flatMap(({ path, report }) =>
    report.verdicts.map((v) => [...(withPath ? [path ?? ''] : []), v.operation, v.keepalive, rowText(v), v.spdy, v.websocket, v.verdict, ...kubectlCells(v)]),
  );
  return table(headers, rows);
}

/** What the KUBECTL columns mean, under the table. */
export const KUBECTL_LEGEND =
  `${KUBECTL_CLIENTS.map((c) => c.label).join(', ')}: what that kubectl does here. ok works; fallback works only through the silent\n` +
  'fallback to SPDY (1.38, KEP-4006 GA, keeps it but can no longer be forced onto SPDY); BREAKS fails; WS-only: clients with no\n' +
  'fallback: SDK clients and browser terminals, read from the SDK-client sessions (keepalive sdk: no pings, port-forward over the\n' +
  "kubelet's legacy protocol), and client-go ≥ 0.36 tools (kubectl's WebSocket path); unknown after a hold without an SDK-client\n" +
  'session (--keepalive sdk); "-" a hold without pings (kubectl always pings): it measures the path.';

export function diagnosisText(reports: readonly { path?: string; report: ProbeReport }[]): string {
  const out: string[] = [];
  for (const { path, report } of reports) {
    // Grouped by (code, check): the check once, then each distinct observation with the rows it explains.
    const groups = new Map<string, { code: string; check: string; seen: Map<string, string[]> }>();
    const add = (d: Diagnosis, row?: string) => {
      const key = `${d.code}|${d.check}`;
      const g = groups.get(key) ?? { code: d.code, check: d.check, seen: new Map<string, string[]>() };
      const rows = g.seen.get(d.summary) ?? [];
      if (row) rows.push(row);
      g.seen.set(d.summary, rows);
      groups.set(key, g);
    };
    for (const v of report.verdicts) for (const d of v.diagnosis) add(d, `${v.operation} ${v.keepalive} ${rowText(v)}`);
    for (const d of report.findings) add(d);
    if (groups.size === 0) continue;
    out.push(path ? `${path}:` : 'Diagnosis:');
    for (const g of groups.values()) {
      out.push(`  [${g.code}] ${g.check}`);
      for (const [summary, rows] of g.seen) out.push(`    - ${summary}${rows.length ? ` (${compactRows(rows)})` : ''}`);
    }
  }
  return out.join('\n');
}

/** "exec kubectl 0s, exec kubectl 2s, exec none 2s" → "exec kubectl 0s/2s, exec none 2s". */
function compactRows(rows: string[]): string {
  const groups = new Map<string, string[]>();
  for (const r of rows) {
    const i = r.lastIndexOf(' ');
    const k = r.slice(0, i);
    groups.set(k, [...(groups.get(k) ?? []), r.slice(i + 1)]);
  }
  return [...groups.entries()].map(([k, holds]) => `${k} ${holds.join('/')}`).join(', ');
}

export function reportHeader(report: ProbeReport): string {
  const version = report.server.version ?? `unknown (${report.server.versionError ?? 'not read'})`;
  const lines = [
    `location ${report.location}, cluster ${report.cluster}, API server ${report.server.url}, version ${version}${report.server.proxy ? `, via proxy ${report.server.proxy}` : ''}`,
  ];
  if (report.target.lookupError) {
    lines.push(`target: the label lookup failed (${report.target.lookupError}); probed the manifest's pod ${report.target.pod} by name`);
  }
  if (report.rbac.length > 0) {
    const cell = (sub: string, verb: string) => {
      const a = report.rbac.find((x) => x.subresource === sub && x.verb === verb);
      return a?.allowed === true ? 'yes' : a?.allowed === false ? 'NO' : '?';
    };
    lines.push(
      `RBAC (SelfSubjectAccessReview): ${STREAMING_SUBRESOURCES.map((s) => `pods/${s} get=${cell(s, 'get')} create=${cell(s, 'create')}`).join('; ')}`,
    );
  }
  return lines.join('\n');
}
