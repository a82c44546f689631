/** The audit as text (the table view) and as HTML sections (the report view). */
import { rowText } from '../probe/row-text.js';
import { table } from '../text.js';
import { htmlPage, reportSections } from '../report/html.js';
import type { AuditReport } from './audit.js';
import { KUBELET_COUNTER } from './kubelet-metrics.js';
import { holdToCross } from '../config/device-holds.js';

const KUBELET_STATE_WORDS: Record<AuditReport['kubelets']['nodes'][number]['state'], string> = {
  read: 'yes',
  'not-in-version': 'no: only from 1.36 (absent is not zero)',
  'not-seen': 'no sample: nothing passed through yet',
};

const NOTHING_FOUND = 'nothing found that breaks kubectl exec or port-forward at the upgrade, at 1.38 (KEP-4006 GA), or for WebSocket-only clients';

/** How far the holds saw: "idle timeouts up to 65 s measured", or that none were (no A/B). */
function measuredIdle(a: AuditReport): string {
  const h = a.idleNotMeasured.longestHoldSeconds;
  return h === null ? 'no idle timeout measured (no A/B)' : h === 0 ? 'no idle timeout measured (every hold was 0 s)' : `idle timeouts up to ${h} s measured`;
}

/**
 * The headline: the verdict, and what it can speak for. READY never stands without the idle timeouts its holds could
 * not see (issue 53), nor, when the roles could not be read, without saying RBAC was not checked: a role without
 * 1.35's `create` for WebSocket upgrades would not have been seen.
 */
export function verdictWords(a: AuditReport): string {
  const h = a.idleNotMeasured.longestHoldSeconds;
  const unseen = a.idleNotMeasured.devices.length ? `; ${measuredIdle(a)}${h ? ', longer ones not' : ''} (see below)` : '';
  if (a.verdict === 'ready' && a.rbac.state !== 'read')
    return `READY, RBAC UNCHECKED: ${NOTHING_FOUND}${unseen}; the cluster's roles could not be read (${a.rbac.detail ?? a.rbac.state}), so a role without create on pods/exec or pods/portforward (WebSocket upgrades need it from 1.35) would not be seen.`;
  if (a.verdict === 'ready') return `READY: ${NOTHING_FOUND}${unseen}.`;
  if (a.verdict === 'ready-after-fixes') return `READY AFTER FIXES: fix these first, most likely causes first${unseen}.`;
  return 'BLOCKED: the audit could not establish readiness.';
}

/** The shortest documented timeout not measured (the first of `devices`, shortest first), and a hold that crosses it. */
function nextHold(devices: AuditReport['idleNotMeasured']['devices']): string | undefined {
  const next = devices[0];
  if (!next) return undefined;
  const products = [...new Set(devices.filter((d) => d.seconds === next.seconds).map((d) => shortProduct(d.product)))].join(', ');
  return `--hold ${holdToCross(next.seconds)}s crosses ${next.seconds} s (${products})`;
}

/** A device's name without its parenthesised detail. */
const shortProduct = (product: string) => product.replace(/ \(.*\)$/, '');

/** The idle timeouts not measured, grouped by their seconds, and the hold that would see the next of them. */
export function notMeasuredWords(a: AuditReport): string | undefined {
  const { devices, longestHoldSeconds } = a.idleNotMeasured;
  if (!devices.length) return undefined;
  const bySeconds = new Map<number, string[]>();
  for (const d of devices) bySeconds.set(d.seconds, [...(bySeconds.get(d.seconds) ?? []), shortProduct(d.product)]);
  const groups = [...bySeconds].map(([sec, products]) => `${sec} s (${[...new Set(products)].join(', ')})`).join('; ');
  const above =
    longestHoldSeconds === null ? ' (no A/B)' : longestHoldSeconds === 0 ? ' (every hold was 0 s)' : ` above ${longestHoldSeconds} s, the longest hold`;
  const hint = nextHold(devices);
  return `Not measured: idle timeouts${above}. Documented ones a path may have: ${groups}.${hint ? ` To see them, hold past them: ${hint}.` : ''}`;
}

export function auditText(a: AuditReport): string {
  const out: string[] = [];
  out.push(`audit of context ${a.context}: API server ${a.server.url}, version ${a.server.version ?? `unknown (${a.server.error ?? 'not read'})`}`, '');
  out.push("Feature gates and streaming counters (the API server's /metrics):");
  if (a.metrics.state !== 'read') out.push(`  not read: ${a.metrics.detail ?? a.metrics.state}`);
  else {
    out.push(
      table(
        ['  GATE', 'STATE', 'STAGE', 'WHAT'],
        a.gates.map((g) => [`  ${g.name}`, g.enabled === null ? 'absent (not in this version)' : g.enabled ? 'on' : 'off', g.stage ?? '-', g.what]),
      ),
    );
    out.push(
      table(
        ['  COUNTER', 'READ', 'TOTAL', 'FAILED (non-101)', 'BY CODE / SUBRESOURCE'],
        a.counters.map((c) => [
          `  ${c.name}`,
          c.state === 'read'
            ? 'yes'
            : c.state === 'not-in-version'
              ? `no: only from 1.${c.since} (absent is not zero)`
              : 'MISSING (the server should expose it)',
          c.total === null ? '-' : String(c.total),
          c.failed === null ? '-' : String(c.failed),
          Object.entries(c.bySubresource ?? c.byCode)
            .map(([k, v]) => `${k}=${v}`)
            .join(' ') || '-',
        ]),
      ),
    );
    if ((a.server.minor ?? 0) >= 36)
      out.push(
        '  From 1.36 the translator and tunnel counters count only what the API server still translates; apiserver_websocket_streaming_requests_total counts all WebSocket streaming.',
      );
  }
  out.push('', `Kubelets (${KUBELET_COUNTER}, 1.36+: WebSocket streams the API server passed to the kubelet):`);
  if (a.kubelets.state !== 'read') out.push(`  not read: ${a.kubelets.detail}`);
  if (a.kubelets.nodes.length)
    out.push(
      table(
        ['  NODE', 'KUBELET', 'READ', 'TOTAL', 'BY SUBRESOURCE'],
        a.kubelets.nodes.map((k) => [
          `  ${k.node}`,
          k.kubeletVersion ?? '?',
          KUBELET_STATE_WORDS[k.state],
          k.total === null ? '-' : String(k.total),
          Object.entries(k.bySubresource)
            .map(([s, n]) => `${s}=${n}`)
            .join(' ') || '-',
        ]),
      ),
    );
  else if (a.kubelets.state === 'read') out.push('  no nodes listed');
  if (a.kubelets.skippedNodes.length) out.push(`  ${a.kubelets.skippedNodes.length} more nodes not read (the first ${a.kubelets.nodes.length} by name are)`);
  out.push('', 'RBAC on pods/exec, pods/attach, pods/portforward (SPDY needs create; WebSocket needs get, and from 1.35 create too):');
  if (a.rbac.state !== 'read') out.push(`  not read: ${a.rbac.detail}`);
  else if (a.rbac.roles.length === 0) out.push('  no role grants them');
  else {
    out.push(
      table(
        ['  ROLE', 'GRANTS', 'SUBJECTS'],
        a.rbac.roles.map((r) => [
          `  ${r.kind} ${r.namespace ? `${r.namespace}/` : ''}${r.name}`,
          Object.entries(r.grants)
            .map(([k, v]) => `${k}:${v}`)
            .join(' '),
          r.subjects.join(', ') || '(unbound)',
        ]),
      ),
    );
  }
  out.push('', `Local kubectl clients (PATH), proxy ${a.clients.proxyScheme ?? 'none'}:`);
  out.push(...(a.clients.local.length ? a.clients.local.map((c) => `  ${c.path}: ${c.version ?? `unknown (${c.error})`}`) : ['  none on PATH']));
  if (a.toggles) {
    out.push('', `Toggles in automation (${a.toggles.filesScanned} files under ${a.toggles.roots.join(', ')}):`);
    out.push(...(a.toggles.hits.length ? a.toggles.hits.map((h) => `  ${h.file}:${h.line}: ${h.toggle}${h.value ? `=${h.value}` : ''}`) : ['  none']));
  }
  if (a.ab) {
    out.push(
      '',
      'A/B (run):',
      table(
        ['  OPERATION', 'KEEPALIVE', 'HOLD', 'SPDY', 'WEBSOCKET', 'VERDICT'],
        a.ab.verdicts.map((v) => [`  ${v.operation}`, v.keepalive, rowText(v), v.spdy, v.websocket, v.verdict]),
      ),
    );
  }
  out.push('', verdictWords(a));
  const unseen = notMeasuredWords(a);
  if (unseen && a.verdict !== 'blocked') out.push(unseen);
  for (const b of a.blockedBecause) out.push(`  - ${b}`);
  a.fixes.forEach((f, i) => out.push(`  ${i + 1}. [${f.category}] ${f.what}`, `     evidence: ${f.evidence}`));
  return out.join('\n') + '\n';
}

const esc = (s: unknown) => String(s).replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);

export function auditHtml(a: AuditReport): string {
  const rows = (cells: unknown[][]) => cells.map((r) => `<tr>${r.map((c) => `<td>${esc(c)}</td>`).join('')}</tr>`).join('');
  const body = [
    `<section class="audit"><h2>Audit of ${esc(a.context)}</h2><p class="verdict ${a.verdict === 'ready' ? 'ok' : a.verdict === 'blocked' ? 'bad' : 'warn'}"><b>${esc(verdictWords(a))}</b></p>`,
    notMeasuredWords(a) && a.verdict !== 'blocked' ? `<p class="not-measured">${esc(notMeasuredWords(a))}</p>` : '',
    a.blockedBecause.length ? `<ul>${a.blockedBecause.map((b) => `<li>${esc(b)}</li>`).join('')}</ul>` : '',
    a.fixes.length
      ? `<ol class="fixes">${a.fixes.map((f) => `<li data-category="${esc(f.category)}"><b>[${esc(f.category)}]</b> ${esc(f.what)}<div class="why">${esc(f.evidence)}</div></li>`).join('')}</ol>`
      : '',
    `<h3>Server</h3><p>${esc(a.server.url)}, version ${esc(a.server.version ?? 'unknown')}</p>`,
    a.metrics.state === 'read'
      ? `<table class="gates"><caption>Feature gates</caption><thead><tr><th>gate</th><th>state</th><th>stage</th></tr></thead><tbody>${rows(a.gates.map((g) => [g.name, g.enabled === null ? 'absent' : g.enabled ? 'on' : 'off', g.stage ?? '-']))}</tbody></table>` +
        `<table class="counters"><caption>Streaming counters</caption><thead><tr><th>counter</th><th>read</th><th>total</th><th>failed</th></tr></thead><tbody>${rows(a.counters.map((c) => [c.name, c.state, c.total ?? '-', c.failed ?? '-']))}</tbody></table>`
      : `<p class="warn">/metrics not read: ${esc(a.metrics.detail ?? a.metrics.state)}</p>`,
    `<table class="kubelets"><caption>Kubelets: ${KUBELET_COUNTER} (1.36+)${a.kubelets.state === 'read' ? '' : ` — not read: ${esc(a.kubelets.detail)}`}</caption><thead><tr><th>node</th><th>kubelet</th><th>read</th><th>total</th></tr></thead><tbody>${rows(a.kubelets.nodes.map((k) => [k.node, k.kubeletVersion ?? '?', KUBELET_STATE_WORDS[k.state], k.total ?? '-']))}</tbody></table>` +
      `<table class="rbac-roles"><caption>RBAC on the streaming subresources</caption><thead><tr><th>role</th><th>grants</th><th>subjects</th></tr></thead><tbody>${rows(
        a.rbac.roles.map((r) => [
          `${r.kind} ${r.name}`,
          Object.entries(r.grants)
            .map(([k, v]) => `${k}:${v}`)
            .join(' '),
          r.subjects.join(', '),
        ]),
      )}</tbody></table>`,
    a.toggles
      ? `<table class="toggles"><caption>Toggles in automation</caption><tbody>${rows(a.toggles.hits.map((h) => [`${h.file}:${h.line}`, h.toggle, h.value ?? '']))}</tbody></table>`
      : '',
    '</section>',
    a.ab ? reportSections([{ report: a.ab }]) : '',
  ].join('');
  return htmlPage('kube-stream-probe audit', body, a.verdict !== 'ready', verdictWords(a));
}
