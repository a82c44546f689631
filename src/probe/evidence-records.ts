/**
 * A run's evidence: one record per failed session (and per attempt of a retried one), with its row's verdict and
 * diagnosis, what its upgrade and hold showed and its wire (evidence.ts). The Lambda writes each as one log line
 * (`msg: "evidence"`, src/lambda/evidence-log.ts), which the page's Logs Insights link finds by run; the CLI's JSON
 * and HTML carry the same. Each record is bounded (EVIDENCE_MAX_CHARS): frames, then headers, are dropped oldest
 * first until it fits.
 */
import { rowKey, type AttemptRecord, type ProbeReport, type SessionResult, type Verdict } from './types.js';
import { rowText, sessionWords } from './row-text.js';
import type { WireTrace } from './evidence.js';
import type { DiagnosisCode } from './diagnosis-codes.js';

/** The most one record may take as JSON, characters (a CloudWatch Logs event holds 256 KiB; a page's reader, less). */
export const EVIDENCE_MAX_CHARS = 6000;

export interface SessionEvidence {
  readonly cluster: string;
  /** The row as tables name it (`65s`, `cp 8MiB`) and the session ("WebSocket exec"). */
  readonly row: string;
  readonly session: string;
  readonly operation: string;
  readonly transport: string;
  readonly keepalive: string;
  readonly holdSeconds: number;
  /** `only`: not retried; `first` / `retry`: the two attempts of a retried session (retry.ts). */
  readonly attempt: 'only' | 'first' | 'retry';
  readonly ok: boolean;
  /** The row's verdict, and its first diagnosis: its code, its sentence (`code: summary`, for people) and what to check. */
  readonly verdict: string;
  readonly diagnosisCode: DiagnosisCode | null;
  readonly diagnosis: string | null;
  readonly check: string | null;
  readonly upgrade: AttemptRecord['upgrade'];
  readonly hold: SessionResult['hold'] | null;
  readonly error: string | null;
  readonly errorCode: string | null;
  readonly wire: WireTrace | null;
}

/** The row's sentence for a page: its first diagnosis that is not the fallback's note. */
function rowDiagnosis(v: Verdict | undefined): Pick<SessionEvidence, 'diagnosisCode' | 'diagnosis' | 'check'> {
  const d = v?.diagnosis.find((x) => x.code !== 'silent-fallback') ?? v?.diagnosis[0];
  return d ? { diagnosisCode: d.code, diagnosis: `${d.code}: ${d.summary}`, check: d.check } : { diagnosisCode: null, diagnosis: null, check: null };
}

function bounded(e: SessionEvidence): SessionEvidence {
  let out = e;
  const size = () => JSON.stringify(out).length;
  while (size() > EVIDENCE_MAX_CHARS && out.wire && out.wire.frames.length) {
    const w: WireTrace = out.wire;
    out = { ...out, wire: { ...w, frames: w.frames.slice(1), framesDropped: w.framesDropped + 1 } };
  }
  for (const part of ['request', 'reply'] as const) {
    const w = out.wire;
    if (size() <= EVIDENCE_MAX_CHARS || !w?.[part]) continue;
    out = { ...out, wire: { ...w, [part]: { ...w[part], headers: w[part].headers.slice(0, 4) } } };
  }
  if (size() > EVIDENCE_MAX_CHARS) out = { ...out, wire: null, upgrade: { ...out.upgrade, bodyPrefix: undefined } };
  return out;
}

/** The evidence of every failed session of a report, and of both attempts of a retried one. */
export function evidenceRecords(report: ProbeReport): SessionEvidence[] {
  const out: SessionEvidence[] = [];
  for (const r of report.results) {
    if (r.ok && !r.retry) continue;
    if (r.errorCode === 'INTERRUPTED') continue;
    const key = rowKey(r.keepalive === 'sdk' ? { ...r, keepalive: 'kubectl' } : r);
    const v = report.verdicts.find((x) => rowKey(x) === key);
    const common = {
      cluster: report.cluster,
      row: rowText(r),
      session: sessionWords(r),
      operation: r.operation,
      transport: r.transport,
      keepalive: r.keepalive,
      holdSeconds: r.holdSeconds,
      verdict: v?.verdict ?? 'unknown',
      ...rowDiagnosis(v),
    };
    if (r.retry) {
      const f = r.retry.first;
      out.push(
        bounded({ ...common, attempt: 'first', ok: false, upgrade: f.upgrade, hold: null, error: f.error, errorCode: f.errorCode, wire: f.wire ?? null }),
      );
    }
    out.push(
      bounded({
        ...common,
        attempt: r.retry ? 'retry' : 'only',
        ok: r.ok,
        upgrade: {
          ok: r.upgrade.ok,
          status: r.upgrade.status,
          error: r.upgrade.error,
          errorCode: r.upgrade.errorCode,
          handshakeMs: r.upgrade.handshakeMs,
          ...(r.upgrade.server ? { server: r.upgrade.server } : {}),
          ...(r.upgrade.via ? { via: r.upgrade.via } : {}),
          ...(r.upgrade.hop ? { hop: r.upgrade.hop } : {}),
          ...(r.upgrade.bodyPrefix ? { bodyPrefix: r.upgrade.bodyPrefix } : {}),
        },
        hold: r.holdSeconds > 0 || r.hold.survived !== null ? r.hold : null,
        error: r.error,
        errorCode: r.errorCode,
        wire: r.wire ?? null,
      }),
    );
  }
  return out;
}
