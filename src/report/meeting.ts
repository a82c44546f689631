/**
 * The report's first screen, for the upgrade meeting: per path, one sentence per finding — what breaks, on which
 * hop (the diagnosis names it), for which clients from which kubectl on (the kubectl model), and the one fix —
 * before any table. A clean path gets one line too, and a path that could not be measured says why.
 */
import { rowText } from '../probe/row-text.js';
import { KUBECTL_CLIENTS, type KubectlOutcome } from '../probe/kubectl-model.js';
import type { Diagnosis, ProbeReport, Verdict } from '../probe/types.js';
import { BROKEN_VERDICTS } from '../probe/types.js';
import { esc, prose } from './prose.js';

/** Diagnoses that restate another (the fallback, today's kubectl, a one-transport note): never a finding's headline. */
const RESTATEMENTS = new Set(['silent-fallback', 'kubectl-breaks-today', 'not-compared']);

export interface Finding {
  readonly primary: Diagnosis;
  readonly verdicts: Verdict[];
}

const wsOnlyBreaks = (v: Verdict) => v.kubectl?.find((k) => k.client === 'websocket-only')?.outcome === 'breaks';
const headline = (v: Verdict): Diagnosis | undefined => v.diagnosis.find((d) => !RESTATEMENTS.has(d.code)) ?? v.diagnosis[0];

/** A verdict worth a line: a broken path for some client, one only the fallback carries, or none measured. */
function noteworthy(v: Verdict): boolean {
  const today = v.kubectl?.some((k) => k.outcome === 'works-via-fallback') ?? false;
  return BROKEN_VERDICTS.includes(v.verdict) || wsOnlyBreaks(v) || today || v.verdict === 'not-measured' || v.verdict === 'unreachable';
}

/** The report's findings, one per headline diagnosis (code and fix), with the rows it was seen on. */
export function findingsOf(report: ProbeReport): Finding[] {
  const out = new Map<string, Finding>();
  for (const v of report.verdicts.filter(noteworthy)) {
    const primary = headline(v);
    if (!primary) continue;
    const key = `${primary.code}|${primary.check}`;
    const f = out.get(key) ?? { primary, verdicts: [] };
    f.verdicts.push(v);
    out.set(key, f);
  }
  return [...out.values()];
}

const WORDS: Record<KubectlOutcome, string> = {
  breaks: 'breaks for',
  'works-via-fallback': 'works only through the SPDY fallback for',
  works: 'works for',
  unknown: '',
};

/** The row held as kubectl holds it (its pings) beside a row held without: same operation and hold. */
const kubectlTwin = (v: Verdict, report: ProbeReport): Verdict | undefined =>
  report.verdicts.find(
    (k) => k.keepalive === 'kubectl' && k.operation === v.operation && k.holdSeconds === v.holdSeconds && !k.transferBytes && k.holdShape === v.holdShape,
  );

/** Who it breaks for, from which kubectl: the clients grouped by what each does on the finding's rows. */
export function whoBreaks(f: Finding, report: ProbeReport): string {
  if (f.verdicts.every((v) => v.keepalive === 'none')) {
    // Rows without pings measure the path as SDK clients and browser terminals hold it (they send none).
    const twins = f.verdicts.map((v) => kubectlTwin(v, report));
    const held = twins.every((t) => t?.verdict === 'clean');
    return `breaks for clients that send no pings: SDK clients and browser terminals (WebSocket-only)${
      held ? "; kubectl's own pings keep it open here (its rows are clean)" : twins.some((t) => t) ? '; see the kubectl rows for kubectl' : ''
    }`;
  }
  const by = new Map<KubectlOutcome, string[]>();
  for (const c of KUBECTL_CLIENTS) {
    // The worst the client does on any of the finding's rows.
    const outcomes = f.verdicts.map((v) => v.kubectl?.find((k) => k.client === c.id)?.outcome ?? 'unknown');
    const worst = (['breaks', 'works-via-fallback', 'works', 'unknown'] as const).find((o) => outcomes.includes(o))!;
    const name = c.id === 'websocket-only' ? 'WebSocket-only clients (SDKs, browser terminals)' : `kubectl ${c.label}`;
    by.set(worst, [...(by.get(worst) ?? []), name]);
  }
  const parts = (['breaks', 'works-via-fallback', 'works'] as const).filter((o) => by.has(o)).map((o) => `${WORDS[o]} ${by.get(o)!.join(', ')}`);
  return parts.length ? parts.join('; ') : 'affects clients the kubectl model does not cover here';
}

const OPS: Record<string, string> = { exec: 'exec', portforward: 'port-forward' };

/** Where it was seen: operations and rows (`exec 0s, 65s; port-forward 0s`). */
function rows(f: Finding): string {
  const byOp = new Map<string, string[]>();
  for (const v of f.verdicts)
    byOp.set(v.operation, [...new Set([...(byOp.get(v.operation) ?? []), `${rowText(v)}${v.keepalive === 'kubectl' ? '' : ` (${v.keepalive})`}`])]);
  return [...byOp].map(([op, r]) => `${OPS[op] ?? op} ${r.join(', ')}`).join('; ');
}

/** One finding as the meeting's sentence (HTML). */
export function findingSentence(f: Finding, report: ProbeReport): string {
  const measured = f.verdicts.every((v) => v.verdict !== 'not-measured');
  // Who, per operation when the operations differ (kubectl 1.30 falls back for exec, not for port-forward).
  const ops = [...new Set(f.verdicts.map((v) => v.operation))];
  const perOp = ops.map((op) => ({ op, who: whoBreaks({ ...f, verdicts: f.verdicts.filter((v) => v.operation === op) }, report) }));
  const who = new Set(perOp.map((p) => p.who)).size === 1 ? `It ${perOp[0]!.who}.` : perOp.map((p) => `${OPS[p.op] ?? p.op}: it ${p.who}.`).join(' ');
  return (
    `<span class="what">${prose(f.primary.summary)}</span> ` +
    (measured ? `<span class="who">${esc(who)}</span> ` : '') +
    `<span class="where muted">(${esc(rows(f))})</span> <span class="fix"><b>Fix:</b> ${prose(f.primary.check)}</span>`
  );
}

/** The first screen's section: per path, its findings, or the one line that says it is clean. */
export function meetingSection(entries: readonly { path?: string; report: ProbeReport }[]): string {
  const items = entries.flatMap((e) => {
    const where = `${e.path ? `${e.path}: ` : ''}${e.report.cluster} from ${e.report.location}`;
    const fs = findingsOf(e.report);
    if (fs.length === 0) {
      const holds = [...new Set(e.report.verdicts.map((v) => rowText(v)))].join(', ');
      return [`<li class="ok"><b>${esc(where)}</b>: nothing breaks — every kubectl and WebSocket-only clients work over both transports (${esc(holds)}).</li>`];
    }
    return fs.map(
      (f) =>
        `<li class="${f.verdicts.some((v) => v.verdict === 'not-measured') ? 'warn' : 'bad'}" data-code="${esc(f.primary.code)}"><b>${esc(where)}</b>: ${findingSentence(f, e.report)} <code class="code">${esc(f.primary.code)}</code></li>`,
    );
  });
  return `<section class="meeting"><h2>For the upgrade meeting</h2><ol>${items.join('')}</ol></section>`;
}
