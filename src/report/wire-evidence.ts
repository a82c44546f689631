/**
 * The report's "What the wire showed" (src/probe/evidence-records.ts): per failed session (and per attempt of a
 * retried one), its upgrade request and reply, the first bytes of a refusal, and the control frames around its end,
 * dated in ms from the session's start: what the Lambda logs as its evidence lines, for the meeting. Each in a
 * <details>, closed until clicked, so the page stays short.
 */
import { evidenceRecords, type SessionEvidence } from '../probe/evidence-records.js';
import type { ProbeReport } from '../probe/types.js';
import { esc, prose } from './prose.js';

const ATTEMPT: Record<SessionEvidence['attempt'], string> = { only: '', first: ' (first attempt)', retry: ' (retry)' };

function one(e: SessionEvidence): string {
  const w = e.wire;
  const head = `${esc(e.session)} ${esc(e.row)}${ATTEMPT[e.attempt]}: ${e.ok ? 'worked' : esc(e.errorCode ?? e.upgrade.errorCode ?? 'failed')}`;
  const lines: string[] = [];
  if (w?.request) {
    lines.push(`${w.request.atMs.toFixed(1).padStart(9)} ms  > ${w.request.method} ${w.request.url}`);
    for (const [k, v] of w.request.headers) lines.push(`               >   ${k}: ${v}`);
  }
  if (w?.reply) {
    lines.push(`${w.reply.atMs.toFixed(1).padStart(9)} ms  < ${w.reply.status} ${w.reply.statusText}`);
    for (const [k, v] of w.reply.headers) lines.push(`               <   ${k}: ${v}`);
  }
  if (w && w.framesDropped) lines.push(`               … ${w.framesDropped} earlier control frame${w.framesDropped === 1 ? '' : 's'}`);
  for (const f of w?.frames ?? []) lines.push(`${f.atMs.toFixed(1).padStart(9)} ms  ${f.direction} ${f.frame}`);
  const body = e.upgrade.bodyPrefix ? `<p>The refusal's page began: <code>${esc(e.upgrade.bodyPrefix)}</code></p>` : '';
  const error = e.error ?? e.upgrade.error;
  const end = e.hold?.cause
    ? ` The session ended: ${esc(e.hold.cause)}${e.hold.disconnectSeconds != null ? ` at ${e.hold.disconnectSeconds} s after the 101` : ''}.`
    : '';
  return `<details class="wire" data-attempt="${e.attempt}"><summary>${head}</summary>${error ? `<p>${esc(error)}.${end}</p>` : ''}${e.diagnosis ? `<p><b>Diagnosis:</b> ${prose(e.diagnosis)}</p>` : ''}${body}${lines.length ? `<pre>${esc(lines.join('\n'))}</pre>` : '<p class="muted">No upgrade request went out (the dial failed first).</p>'}${w ? `<p class="muted">Session started ${esc(w.startedAt)}.</p>` : ''}</details>`;
}

export function wireEvidence(report: ProbeReport): string {
  const records = evidenceRecords(report);
  if (records.length === 0) return '<p class="ok">No session failed: nothing to show from the wire.</p>';
  return records.map(one).join('');
}
