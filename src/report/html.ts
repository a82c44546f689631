/**
 * `-o html`: one self-contained HTML file for the upgrade meeting (no script,
 * no font, no request at view time): the verdict matrix, what each kubectl
 * does on each path (the kubectl model), a timeline of every held session
 * with its disconnect against the documented devices' timers (idle-devices.ts) hops are
 * known for, handshake latency per transport, the diagnoses with what to
 * check, the server version and the RBAC preflight, and what the wire showed for each failed session.
 *
 * Plots are hand-written SVG, not a charting library: two chart shapes (bars
 * on a time axis) are ~100 lines; a library would be 100-300 KB to inline,
 * need JavaScript at view time, and not print (docs/decisions.md).
 */
import { rowText } from '../probe/row-text.js';
import { STREAMING_SUBRESOURCES } from '../kube/rbac.js';
import { KUBECTL_CLIENTS, type KubectlOutcome } from '../probe/kubectl-model.js';
import { IDLE_MARK_SECONDS } from '../probe/idle-devices.js';
import type { ProbeReport, SessionResult, Verdict, VerdictName } from '../probe/types.js';
import { VERSION } from '../version.js';
import { findingsOf, meetingSection } from './meeting.js';
import { esc, prose } from './prose.js';
import { wireEvidence } from './wire-evidence.js';

export interface ReportEntry {
  /** Where it was measured from, when several are combined (invoke: the location). */
  readonly path?: string;
  readonly report: ProbeReport;
}

const VERDICT_CLASS: Record<VerdictName, string> = {
  clean: 'ok',
  'websocket-broken': 'bad',
  'spdy-broken': 'bad',
  'both-broken': 'bad',
  'websocket-ok': 'ok',
  'spdy-ok': 'ok',
  'websocket-fails': 'bad',
  'spdy-fails': 'bad',
  'not-measured': 'warn',
  unreachable: 'bad',
  interrupted: 'warn',
};
const OUTCOME: Record<KubectlOutcome, [string, string]> = {
  works: ['works', 'ok'],
  'works-via-fallback': ['fallback', 'warn'],
  breaks: ['BREAKS', 'bad'],
  unknown: ['?', 'muted'],
};
const CELL_CLASS: Record<string, string> = { ok: 'ok', fail: 'bad', 'not-run': 'muted', interrupted: 'warn' };

const IDLE_MARKS = IDLE_MARK_SECONDS;
const AXIS_MIN_SECONDS = 65;
/** The plot's own width (px); the label column and the state column around it are sized from their texts. */
const PLOT_WIDTH = 460;
/** An upper bound of an 11 px system-ui glyph's advance (px): a column sized by it never clips its text. */
const CHAR_PX = 7;
const columnFor = (texts: readonly string[]): number => 16 + CHAR_PX * Math.max(0, ...texts.map((t) => t.length));

function verdictMatrix(e: ReportEntry): string {
  const rows = e.report.verdicts
    .map(
      (v) =>
        `<tr data-verdict="${esc(v.verdict)}"><td>${esc(v.operation)}</td><td>${esc(v.keepalive)}</td><td class="num">${esc(rowText(v))}</td>` +
        `<td class="${CELL_CLASS[v.spdy]}">${esc(v.spdy)}</td><td class="${CELL_CLASS[v.websocket]}">${esc(v.websocket)}</td>` +
        `<td class="${VERDICT_CLASS[v.verdict] ?? ''}"><b>${esc(v.verdict)}</b></td></tr>`,
    )
    .join('');
  return `<table class="verdicts"><caption>Verdicts: SPDY ok and WebSocket failing means a hop breaks WebSocket</caption><thead><tr><th>operation</th><th>keepalive</th><th>hold</th><th>SPDY</th><th>WebSocket</th><th>verdict</th></tr></thead><tbody>${rows}</tbody></table>`;
}

function kubectlMatrix(e: ReportEntry): string {
  const modelled = e.report.verdicts.filter((v) => v.kubectl);
  if (modelled.length === 0) return '';
  const cell = (v: Verdict, id: string) => {
    const x = v.kubectl!.find((k) => k.client === id);
    if (!x) return '<td class="muted">-</td>';
    const [word, cls] = OUTCOME[x.outcome];
    return `<td class="${cls}" title="${esc(x.reason)}">${word}<div class="why">${esc(x.reason)}</div></td>`;
  };
  const rows = modelled
    .map((v) => `<tr><td>${esc(v.operation)}</td><td class="num">${esc(rowText(v))}</td>${KUBECTL_CLIENTS.map((c) => cell(v, c.id)).join('')}</tr>`)
    .join('');
  return `<table class="kubectl"><caption>What each kubectl does on this path (kubectl model: fallback to SPDY only when the WebSocket upgrade is refused; 1.38 is KEP-4006 GA as planned: the fallback stays, SPDY can no longer be forced), and clients that have no fallback</caption><thead><tr><th>operation</th><th>hold</th>${KUBECTL_CLIENTS.map((c) => `<th title="${esc(`${c.speaks}. Source: ${c.source}`)}">${c.id === 'websocket-only' ? 'WebSocket-only clients' : `kubectl ${esc(c.label)}`}</th>`).join('')}</tr></thead><tbody>${rows}</tbody></table>`;
}

const lostAtSeconds = (r: SessionResult): number | null => (r.hold.survived === false ? (r.hold.disconnectSeconds ?? r.hold.idleSeconds ?? null) : null);

/** What became of a held session, as its bar's label says it. */
function holdState(r: SessionResult): string {
  const lostAt = lostAtSeconds(r);
  if (r.hold.survived) return 'survived';
  if (r.hold.cause === 'interrupted') return `interrupted after ${r.hold.heldSeconds ?? '?'} s`;
  if (lostAt !== null) return `lost at ${lostAt.toFixed(1)} s (${r.hold.cause})`;
  return r.upgrade.ok ? `lost (${r.hold.cause ?? r.errorCode ?? 'error'})` : 'no upgrade';
}

/** One bar per held session: how long it lived, against the known idle timeouts. */
function timeline(e: ReportEntry): string {
  const held = e.report.results.filter((r) => r.holdSeconds > 0);
  if (held.length === 0) return '<p class="muted">No holds in this run (hold 0 s): no timeline.</p>';
  // The axis always reaches past 60 s, so the meeting sees which of the usual idle timeouts a run's holds covered.
  const maxS = Math.max(AXIS_MIN_SECONDS, ...held.map((r) => r.holdSeconds * 1.05));
  const labels = held.map((r) => `${r.operation} ${r.transport} ${r.keepalive} ${rowText(r)}`);
  const states = held.map(holdState);
  const left = columnFor(labels);
  const W = left + PLOT_WIDTH + columnFor(states);
  const rowH = 22;
  const H = held.length * rowH + 40;
  const x = (s: number) => left + (Math.min(s, maxS) / maxS) * PLOT_WIDTH;
  const marks =
    `<line class="axis" x1="${left}" x2="${left}" y1="10" y2="${H - 20}"/><text class="marklabel axislabel" x="${left}" y="${H - 6}">0 s</text>` +
    IDLE_MARKS.filter((m) => m <= maxS)
      .map((m) => `<line class="mark" x1="${x(m)}" x2="${x(m)}" y1="10" y2="${H - 20}"/><text class="marklabel" x="${x(m)}" y="${H - 6}">${m} s</text>`)
      .join('');
  const bars = held
    .map((r, i) => {
      const y = 14 + i * rowH;
      const label = labels[i]!;
      const state = states[i]!;
      const lostAt = lostAtSeconds(r);
      const end = r.hold.cause === 'interrupted' ? (r.hold.heldSeconds ?? 0) : (lostAt ?? (r.hold.survived ? r.holdSeconds : 0));
      const cls = r.hold.survived ? 'ok' : r.hold.cause === 'interrupted' ? 'warn' : 'bad';
      const cross = lostAt !== null ? `<text class="cut" x="${x(lostAt)}" y="${y + 13}">✕</text>` : '';
      return (
        `<g class="session ${cls}" data-session="${esc(label)}"><title>${esc(`${label}: ${state}`)}</title><text class="label" x="${left - 8}" y="${y + 12}">${esc(label)}</text>` +
        `<rect class="planned" x="${left}" y="${y + 2}" width="${x(r.holdSeconds) - left}" height="${rowH - 8}"/><rect class="${cls}" x="${left}" y="${y + 2}" width="${Math.max(1, x(end) - left)}" height="${rowH - 8}"/>${cross}<text class="state" x="${Math.max(x(end), x(r.holdSeconds)) + 8}" y="${y + 12}">${esc(state)}</text></g>`
      );
    })
    .join('');
  return `<figure><svg class="timeline" viewBox="0 0 ${W} ${H}" width="${W}" height="${H}" role="img" aria-label="held sessions against 30, 60 and 350 s idle timeouts">${marks}${bars}</svg><figcaption>Each held session from its 101 (s); the dotted outline is the hold it was asked for. Red lines: idle timeouts hops are known for (30 s: GKE backends and some proxies; 60 s: nginx proxy_read_timeout, AWS ALB; 350 s: AWS NLB, NAT gateway, VPC endpoints). ✕ where a session was lost.</figcaption></figure>`;
}

/** Handshake latency (dial start → 101) per session, grouped by transport. */
function latency(e: ReportEntry): string {
  const up = e.report.results.filter((r) => r.upgrade.handshakeMs !== null);
  if (up.length === 0) return '<p class="muted">No upgrade succeeded: no handshake latency.</p>';
  const maxMs = Math.max(...up.map((r) => r.upgrade.handshakeMs!));
  const sorted = [...up].sort((a, b) => a.transport.localeCompare(b.transport) || a.operation.localeCompare(b.operation));
  const labels = sorted.map((r) => `${r.transport} ${r.operation} ${r.keepalive} ${rowText(r)}`);
  const values = sorted.map((r) => `${r.upgrade.handshakeMs!.toFixed(1)} ms`);
  const left = columnFor(labels);
  const W = left + PLOT_WIDTH + columnFor(values);
  const rowH = 20;
  const H = sorted.length * rowH + 10;
  const bars = sorted
    .map((r: SessionResult, i) => {
      const y = 4 + i * rowH;
      const w = Math.max(1, (r.upgrade.handshakeMs! / maxMs) * PLOT_WIDTH);
      return `<g class="latency ${r.transport}"><text class="label" x="${left - 8}" y="${y + 12}">${esc(labels[i])}</text><rect class="${r.transport}" x="${left}" y="${y + 2}" width="${w}" height="${rowH - 6}"/><text class="state" x="${left + w + 6}" y="${y + 12}">${values[i]}</text></g>`;
    })
    .join('');
  return `<figure><svg class="latency" viewBox="0 0 ${W} ${H}" width="${W}" height="${H}" role="img" aria-label="handshake latency per session">${bars}</svg><figcaption>Handshake latency, ms: start of dialing (DNS, TCP, proxy, TLS) to the 101.</figcaption></figure>`;
}

/**
 * The evidence beside the findings (the meeting section says each finding once, with its hop, clients and fix):
 * what else the run's diagnoses and cross-checks said, each once, sentences first and the code last.
 */
function diagnoses(e: ReportEntry): string {
  const findings = findingsOf(e.report);
  const said = new Set(findings.map((f) => `${f.primary.code}|${f.primary.check}`));
  const others = new Map<string, { code: string; check: string; summary: string }>();
  for (const d of [...e.report.verdicts.flatMap((v) => v.diagnosis), ...e.report.findings]) {
    const key = `${d.code}|${d.check}`;
    if (!said.has(key) && !others.has(key) && d.code !== 'silent-fallback' && d.code !== 'kubectl-breaks-today') others.set(key, d);
  }
  if (findings.length === 0 && others.size === 0) return '<p class="ok">Nothing to diagnose: every verdict is clean.</p>';
  if (others.size === 0) return '<p class="muted">The findings above are the whole diagnosis.</p>';
  return `<ul class="diagnoses">${[...others.values()]
    .map(
      (d) =>
        `<li data-code="${esc(d.code)}"><span class="what">${prose(d.summary)}</span> <span class="fix"><b>Check next:</b> ${prose(d.check)}</span> <code class="code">${esc(d.code)}</code></li>`,
    )
    .join('')}</ul>`;
}

function server(e: ReportEntry): string {
  const r = e.report;
  const version = r.server.version ?? `unknown (${r.server.versionError ?? 'not read'})`;
  const cell = (sub: string, verb: string) => {
    const a = r.rbac.find((x) => x.subresource === sub && x.verb === verb);
    return a?.allowed === true
      ? '<td class="ok">yes</td>'
      : a?.allowed === false
        ? '<td class="bad">NO</td>'
        : `<td class="muted" title="${esc(a?.unread ?? 'not asked')}">? not read</td>`;
  };
  // Unread answers are said once, with why (the review failed, the API server did not answer), not as a grid of "?".
  const unread = [...new Set(r.rbac.filter((a) => a.allowed === null).map((a) => a.unread ?? 'no answer'))];
  const rbac = r.rbac.length
    ? `<table class="rbac"><caption>RBAC preflight (SelfSubjectAccessReview)${unread.length ? `: not read — ${esc(unread.join('; '))}` : ''}</caption><thead><tr><th>subresource</th><th>get (SPDY: POST; WebSocket: GET)</th><th>create (WebSocket from 1.35)</th></tr></thead><tbody>${STREAMING_SUBRESOURCES.map((s) => `<tr><td>pods/${s}</td>${cell(s, 'get')}${cell(s, 'create')}</tr>`).join('')}</tbody></table>`
    : '<p class="muted">RBAC preflight not run (--no-preflight, or the run stopped before it).</p>';
  return `<dl class="server"><dt>API server</dt><dd>${esc(r.server.url)}</dd><dt>version</dt><dd>${esc(version)}</dd>${r.server.proxy ? `<dt>via proxy</dt><dd>${esc(r.server.proxy)}</dd>` : ''}<dt>target</dt><dd>${esc(r.target.namespace)}/${esc(r.target.pod ?? '(none found)')}${r.target.selector ? ` (by ${esc(r.target.selector)})` : ''}</dd><dt>measured</dt><dd>${esc(r.startedAt)}, ${(r.durationMs / 1000).toFixed(1)} s</dd></dl>${rbac}`;
}

const STYLE = `body{font:14px/1.4 system-ui,sans-serif;margin:24px;color:#222;max-width:1100px}h1{font-size:22px}h2{font-size:18px;border-bottom:1px solid #ccc;margin-top:32px}h3{font-size:15px}
table{border-collapse:collapse;margin:8px 0 16px}caption{text-align:left;font-weight:600;padding:4px 0}th,td{border:1px solid #ddd;padding:4px 8px;vertical-align:top}th{background:#f4f4f4}
.num{text-align:right}.ok{background:#e6f4ea}.bad{background:#fce8e6;color:#a50e0e}.warn{background:#fef7e0}.muted{color:#888}.why{font-size:11px;color:#555;max-width:220px}
svg text{font:11px system-ui,sans-serif}svg .label{text-anchor:end}svg rect.ok{fill:#34a853}svg rect.bad{fill:#ea4335}svg rect.warn{fill:#fbbc04}svg rect.spdy{fill:#4285f4}svg rect.websocket{fill:#a142f4}
svg .mark{stroke:#d62728;stroke-dasharray:4 3}svg .axis{stroke:#999}svg .axislabel{fill:#666}svg rect.planned{fill:none;stroke:#bbb;stroke-dasharray:2 2}svg .marklabel{fill:#d62728;text-anchor:middle}svg .cut{fill:#a50e0e;font-weight:700;text-anchor:middle}figure{margin:8px 0}figcaption{font-size:12px;color:#555}
.diagnoses li{margin-bottom:10px}.check{margin:2px 0 0}dl.server{display:grid;grid-template-columns:max-content auto;gap:2px 12px}dt{font-weight:600}dd{margin:0}
details.wire{margin:4px 0}details.wire pre{font-size:11px;background:#f8f9fa;padding:6px;overflow-x:auto}.meeting ol{padding-left:20px}.meeting li{margin:6px 0;padding:6px 8px;border-radius:4px}.fix{display:block;margin-top:2px}code{background:#f1f3f4;padding:0 3px;border-radius:3px}code.code{font-size:11px;color:#666}
@media print{body{margin:0;max-width:none;font-size:11pt}h2{break-after:avoid}section.report,figure,table,.meeting li{break-inside:avoid}a{color:inherit;text-decoration:none}.why{display:none}.ok,.bad,.warn{print-color-adjust:exact;-webkit-print-color-adjust:exact}}`;

/** The reports' sections, for a page of their own or another's (the audit's). */
export function reportSections(entries: readonly ReportEntry[]): string {
  return entries
    .map((e) => {
      const title = `${e.path ? `${esc(e.path)}: ` : ''}${esc(e.report.cluster)} from ${esc(e.report.location)}`;
      return `<section class="report" data-cluster="${esc(e.report.cluster)}"><h2>${title}</h2><h3>More evidence</h3>${diagnoses(e)}<h3>Verdicts</h3>${verdictMatrix(e)}<h3>What kubectl does here</h3>${kubectlMatrix(e) || '<p class="muted">Only holds without pings: they measure the path, kubectl always pings.</p>'}<h3>Held sessions</h3>${timeline(e)}<h3>Handshake latency</h3>${latency(e)}<h3>Server and RBAC</h3>${server(e)}<h3>What the wire showed</h3>${wireEvidence(e.report)}</section>`;
    })
    .join('');
}

/** One self-contained page: the style inline, no script. */
export function htmlPage(title: string, body: string, broken: boolean, summary?: string, generatedAt = new Date()): string {
  const line = summary ?? (broken ? 'A broken path was found: see the verdicts and the diagnosis.' : 'Every measured path works over both transports.');
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1"><title>${esc(title)}</title><style>${STYLE}</style></head><body><h1>${esc(title)}</h1><p class="summary ${broken ? 'bad' : 'ok'}">${esc(line)}</p><p class="muted">kube-stream-probe ${esc(VERSION)}, generated ${esc(generatedAt.toISOString())}. Self-contained: no network is used to view it.</p>${body}</body></html>\n`;
}

/** The report as one HTML document. */
export function htmlReport(entries: readonly ReportEntry[], generatedAt = new Date()): string {
  const broken = entries.some((e) => e.report.verdicts.some((v) => VERDICT_CLASS[v.verdict] === 'bad'));
  // The banner counts; the meeting section right below it names each finding's hop, its clients and its fix.
  const count = entries.reduce((n, e) => n + findingsOf(e.report).length, 0);
  const summary = count
    ? `A broken path was found: ${count === 1 ? 'one finding' : `${count} findings`} below, each with its hop, who it breaks for and the fix.`
    : undefined;
  return htmlPage('kube-stream-probe report', meetingSection(entries) + reportSections(entries), broken, summary, generatedAt);
}
