/**
 * Findings that need more than one session of a run: kubectl's keepalive against none (keepalive-dependent; and
 * pings-ignored only where a session writing data proved it, activity-check.ts) and exec against port-forward.
 */
import { kubectlPingPeriodMs } from '../streaming/keepalive.js';
import { HOLD_SHAPE_PERIOD_SECONDS, TRANSPORT_WORDS } from '../vocabulary.js';
import { fmt, idleBeforeCut, noPingTwin, opWords, what } from './diagnosis.js';
import { bracketText, forgotten } from './idle-bracket.js';
import { cutDespitePings } from './activity-check.js';
import type { Diagnosis, IdleBracket, LifetimeCheck, SessionResult } from './types.js';

/** What the run found about the path beyond single sessions (follow-ups.ts). */
export interface CrossContext {
  readonly idle?: IdleBracket;
  readonly lifetime?: LifetimeCheck;
}

/** Findings that compare results: keepalive modes, exec against port-forward. */
export function crossFindings(results: readonly SessionResult[], context: CrossContext = {}): Diagnosis[] {
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
    const pingSeconds = kubectlPingPeriodMs(r.operation, r.transport) / 1000;
    if (r.ok) {
      // Without pings: a hop's timer cut it (its idle time is the timer), or a device forgot its flow (bracketed).
      const lost = forgotten(twin)
        ? `its flow was forgotten by a device whose idle timeout is ${context.idle ? bracketText(context.idle) : `at most ${fmt(twin.hold.quiet!.unanswered!.quietSeconds)} s`}`
        : `it was cut after ${fmt(idleBeforeCut(twin))} s idle`;
      const breakAt = forgotten(twin) ? `once idle ${context.idle ? bracketText(context.idle) : 'that long'}` : `at about ${Math.round(idleBeforeCut(twin))} s`;
      out.push({
        code: 'keepalive-dependent',
        summary: `${what(r)}: with kubectl's keepalive pings the session survived the ${r.holdSeconds} s hold; without pings ${lost}.`,
        check: `kubectl's own pings (every ${pingSeconds} s on this session) keep it open here; clients that send no pings (browser terminals, SDK clients) break ${breakAt}. Raise the hop's idle timeout if they matter.`,
      });
      continue;
    }
    // Cut as early with pings as without (by the hop, while pings moved): a timer that counts only data, or a cap on
    // the connection's life. Only the lifetime check (a session writing data) tells them apart.
    if (!cutDespitePings(r, twin)) continue;
    const cutWithPings = r.hold.sinceDataSeconds ?? r.hold.disconnectSeconds!;
    const at = idleBeforeCut(twin);
    const seen = `${what(r)}: cut ${fmt(cutWithPings)} s after its last data with kubectl's pings (every ${pingSeconds} s), and after ${fmt(at)} s without pings`;
    const l = context.lifetime;
    if (l?.outcome === 'data-only-timer') {
      out.push({
        code: 'pings-ignored',
        summary: `${seen}; an exec session writing every ${HOLD_SHAPE_PERIOD_SECONDS} s survived ${l.holdSeconds} s on the same path.`,
        check: `The hop counts only application data as activity and ignores keepalive frames: its idle timeout (about ${Math.round(at)} s, measured without pings) decides for kubectl too. Raise it above the longest quiet period you need.`,
      });
    } else if (l?.outcome !== 'lifetime-cap') {
      out.push({
        code: 'cut-despite-pings',
        summary: `${seen}.`,
        check: `Either the hop's idle timer counts only application data (pings do not reset it), or the hop caps a connection's life at about ${Math.round(at)} s whatever moves (GCP's external Application Load Balancer does, at its backend service timeout). ${l ? `The check session (exec writing every ${HOLD_SHAPE_PERIOD_SECONDS} s, ${l.holdSeconds} s) was inconclusive${l.checkCutSeconds !== null ? `: cut ${fmt(l.checkCutSeconds)} s after its 101` : ''}.` : 'The check that tells them apart did not fit the run: give it time (--follow-up-budget), or probe with --hold-shape input.'}`,
      });
    }
  }
  for (const r of results) {
    // Transfers and shaped holds have no port-forward twin to compare with: their own diagnoses say it; an SDK
    // client's port-forward is another protocol (the kubelet's legacy one), not the twin of its exec.
    if (r.operation !== 'exec' || r.transferBytes || r.holdShape || r.keepalive === 'sdk') continue;
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
  for (const r of results) {
    // attach against exec on the same path: the same channels and client code, but its own URL and RBAC subresource.
    if (r.operation !== 'attach' || r.transferBytes || r.holdShape) continue;
    const exec = find(r, { operation: 'exec' });
    if (!exec || exec.ok === r.ok) continue;
    const refused = !r.ok && !r.upgrade.ok;
    out.push({
      code: 'exec-attach-disagree',
      summary: `${TRANSPORT_WORDS[r.transport]} ${exec.ok ? 'exec works but attach does not' : 'attach works but exec does not'} (keepalive "${r.keepalive}", hold ${r.holdSeconds} s)${
        refused ? ': the attach upgrade was refused' : ''
      }.`,
      check: refused
        ? "attach has its own URL (…/pods/NAME/attach) and RBAC subresource (pods/attach): a proxy, WAF or identity-aware gateway that allows only …/exec refuses it (e.g. tailscale/tailscale#16490), and so does a Role without pods/attach. Check the hop's path rules and the Role; kubectl attach, kubectl run -it and kubectl debug go through it."
        : `Both upgraded: see the ${exec.ok ? 'attach' : 'exec'} session's diagnosis (attach joins the container's own process; exec starts one).`,
    });
  }
  const seen = new Set<string>();
  return out.filter((d) => (seen.has(d.summary) ? false : (seen.add(d.summary), true)));
}
