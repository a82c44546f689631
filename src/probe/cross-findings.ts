/**
 * Findings that need more than one session of a run: kubectl's keepalive against none (keepalive-dependent,
 * pings-ignored, only where the no-ping twin's measurement supports it) and exec against port-forward.
 */
import { kubectlPingPeriodMs } from '../streaming/keepalive.js';
import { TRANSPORT_WORDS } from '../vocabulary.js';
import { fmt, idleBeforeCut, noPingTwin, opWords, what } from './diagnosis.js';
import type { Diagnosis, SessionResult } from './types.js';

/** Findings that compare results: keepalive modes, exec against port-forward. */
export function crossFindings(results: readonly SessionResult[]): Diagnosis[] {
  const out: Diagnosis[] = [];
  const find = (r: SessionResult, change: Partial<SessionResult>) =>
    results.find(
      (x) =>
        !x.transferBytes &&
        !x.holdShape &&
        (['operation', 'transport', 'keepalive', 'holdSeconds'] as const).every((k) => x[k] === ((change as Record<string, unknown>)[k] ?? r[k])),
    );
  for (const r of results) {
    if (r.keepalive !== 'kubectl' || r.holdSeconds === 0 || !r.upgrade.ok) continue;
    const twin = noPingTwin(r, results);
    if (!twin) continue;
    const at = idleBeforeCut(twin);
    const pingSeconds = kubectlPingPeriodMs(r.operation, r.transport) / 1000;
    if (r.ok) {
      out.push({
        code: 'keepalive-dependent',
        summary: `${what(r)}: with kubectl's keepalive pings the session survived the ${r.holdSeconds} s hold; without pings it was cut after ${fmt(at)} s idle.`,
        check: `kubectl's own pings (every ${pingSeconds} s on this session) keep it open here; clients that send no pings (browser terminals, SDK clients) break at about ${Math.round(at)} s. Raise the hop's idle timeout if they matter.`,
      });
      continue;
    }
    // Pings are ignored only when they should have kept it open (the hop's timeout, measured without pings, is longer
    // than the ping interval) and the session with pings was cut all the same, about as late as the one without.
    const cutWithPings = r.hold.survived === false ? (r.hold.sinceDataSeconds ?? r.hold.disconnectSeconds) : null;
    if (cutWithPings !== null && cutWithPings !== undefined && at > pingSeconds && Math.abs(cutWithPings - at) <= Math.max(1.5, at * 0.25)) {
      out.push({
        code: 'pings-ignored',
        summary: `${what(r)}: cut ${fmt(cutWithPings)} s after its last data with kubectl's pings (every ${pingSeconds} s), and after ${fmt(at)} s without pings.`,
        check: `The hop counts only application data as activity and ignores keepalive frames: its idle timeout (about ${Math.round(at)} s, measured without pings) decides for kubectl too. Raise it above the longest quiet period you need.`,
      });
    }
  }
  for (const r of results) {
    // Transfers and shaped holds have no port-forward twin to compare with: their own diagnoses say it.
    if (r.operation !== 'exec' || r.transferBytes || r.holdShape) continue;
    const pf = find(r, { operation: 'portforward' });
    if (!pf || pf.ok === r.ok) continue;
    const [good, bad] = r.ok ? [r, pf] : [pf, r];
    const refused = !bad.upgrade.ok;
    const goodPing = kubectlPingPeriodMs(good.operation, good.transport) / 1000;
    const badPing = kubectlPingPeriodMs(bad.operation, bad.transport) / 1000;
    out.push({
      code: 'exec-portforward-disagree',
      summary: `${TRANSPORT_WORDS[r.transport]} ${opWords(good)} works but ${opWords(bad)} does not (keepalive "${r.keepalive}", hold ${r.holdSeconds} s)${refused ? '' : `: ${opWords(bad)} upgraded, then was lost during the hold`}.`,
      check: refused
        ? r.transport === 'websocket'
          ? `The ${opWords(bad)} upgrade was refused: they are separate server features (TranslateStreamCloseWebsocketRequests for exec, PortForwardWebsockets for port-forward) and separate RBAC subresources (pods/exec, pods/portforward). Check both.`
          : 'They use different subresources and RBAC (pods/exec vs pods/portforward); check both.'
        : r.keepalive === 'kubectl' && goodPing !== badPing
          ? `Not a feature gate (it upgraded): kubectl pings ${opWords(good)} every ${goodPing} s but ${opWords(bad)} only every ${badPing} s, so a hop with an idle timeout between the two cuts only ${opWords(bad)}. Raise the idle timeout well above ${Math.max(goodPing, badPing)} s.`
          : `Not a feature gate (it upgraded): see the ${opWords(bad)} session's diagnosis.`,
    });
  }
  const seen = new Set<string>();
  return out.filter((d) => (seen.has(d.summary) ? false : (seen.add(d.summary), true)));
}
