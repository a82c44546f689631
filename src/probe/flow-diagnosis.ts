/**
 * The diagnoses of the kernel's kind of hop: a device that forgot an idle flow (flow-forgotten), a cap on a
 * connection's life (lifetime-cap), and a transfer that never moved a byte while small exchanges passed
 * (mtu-black-hole). Each says what was seen with its numbers, which documented products behave so (idle-devices.ts),
 * what kubectl does there (kubectl-on-cut.ts), and the fix.
 */
import { SPDY_PING_PERIOD_MS, TUNNEL_PING_PERIOD_MS, WS_PING_PERIOD_MS, WS_PONG_DEADLINE_MS } from '../streaming/keepalive.js';
import { sessionWords } from './row-text.js';
import { bracketDevices, bracketText, resolved } from './idle-bracket.js';
import { devicesAt, deviceList, type IdleDevice } from './idle-devices.js';
import { kubectlOnCut, type CutKind } from './kubectl-on-cut.js';
import type { Diagnosis, IdleBracket, LifetimeCheck, SessionResult } from './types.js';

const fmt = (s: number) => (s >= 100 ? s.toFixed(0) : s.toFixed(1));

/** kubectl's symptom for every operation and transport, for a cut of this kind, deduplicated. */
export function kubectlSymptoms(cut: CutKind): string {
  const lines = [
    kubectlOnCut('exec', 'spdy', cut),
    kubectlOnCut('exec', 'websocket', cut),
    kubectlOnCut('portforward', 'spdy', cut),
    kubectlOnCut('portforward', 'websocket', cut),
  ];
  return [...new Set(lines)].join('; ');
}

/** Who keeps a flow known: kubectl's ping periods against the bracket. */
function whoKeepsItKnown(b: IdleBracket): string {
  const fastest = Math.min(WS_PING_PERIOD_MS, SPDY_PING_PERIOD_MS) / 1000;
  const tunnel = TUNNEL_PING_PERIOD_MS / 1000;
  if (b.atMostSeconds <= fastest)
    return `kubectl's keepalive pings (every ${fastest} s; ${tunnel} s in the WebSocket port-forward tunnel) come too late to keep it known, so kubectl loses its sessions too`;
  if (b.aboveSeconds >= tunnel)
    return `kubectl's keepalive pings (every ${fastest} s; ${tunnel} s in the WebSocket port-forward tunnel) keep its flows known; clients that send no pings (browser terminals, SDK clients) lose theirs after the timeout`;
  return `kubectl's ${fastest} s pings keep exec and SPDY port-forward known; its WebSocket port-forward tunnel pings only every ${tunnel} s, which ${b.atMostSeconds <= tunnel ? 'is too late' : 'may be too late'}`;
}

function fixes(devices: readonly IdleDevice[], generic: string): string {
  return devices.length ? devices.map((d) => `${d.product}: ${d.fix} (${d.source})`).join('; ') : generic;
}

/** What the bracket matches, or why it names nothing yet. */
function matchText(b: IdleBracket): string {
  const devices = bracketDevices(b);
  const how = b.atExpiry === 'reset' ? 'and reset the next packet' : 'and drop the next packet silently';
  if (devices.length) return `Devices that forget flows so ${how}, with a default in that range: ${deviceList(devices)}.`;
  return resolved(b)
    ? `No documented default is in that range: a device set to it (the NLB and the Azure devices can be set), or one not in the table (docs/diagnoses.md).`
    : `The bracket is too wide to name a device: give the run more time for its ladder (--follow-up-budget), or hold without pings just below and above the devices' figures (README, "Which holds catch which device").`;
}

/** A session cut because a device no longer knew its flow (its evidence says reset-reply or no-reply). */
export function flowForgotten(r: SessionResult, idle: IdleBracket | undefined): Diagnosis {
  const q = r.hold.quiet!;
  const u = q.unanswered!;
  const ours = r.keepalive === 'kubectl' && u.quietSeconds < r.holdSeconds - 1 ? 'its next keepalive ping' : 'its echo after the hold';
  const ended =
    r.hold.cause === 'echo-timeout'
      ? 'the echo timed out'
      : r.hold.cause === 'no-pong'
        ? `the session ended at kubectl's ${WS_PONG_DEADLINE_MS / 1000} s pong deadline`
        : `the session ended (${r.hold.cause ?? 'unknown'}${r.hold.disconnectSeconds !== null ? `, ${fmt(r.hold.disconnectSeconds)} s after the 101` : ''})`;
  const summary =
    q.cut === 'reset-reply'
      ? `The ${sessionWords(r)} session was reset in answer to ${ours}, sent after ${fmt(u.quietSeconds)} s of quiet (${fmt(u.atSeconds)} s after the 101).`
      : `The ${sessionWords(r)} session's packet after ${fmt(u.quietSeconds)} s of quiet (${ours}, ${fmt(u.atSeconds)} s after the 101) was never answered; ${ended}.`;
  if (!idle) {
    return {
      code: 'flow-forgotten',
      summary,
      check: `A stateful device (NAT gateway, L4 load balancer, firewall) no longer knew the flow. The other sessions do not date it as an idle timer (a packet after a longer quiet gap was answered): look for a flow table that filled up, a failover or a route change on the path.`,
    };
  }
  const cut: CutKind = idle.atExpiry === 'reset' ? 'reset-reply' : 'no-reply';
  const next = idle.atExpiry === 'reset' ? 'answers the next packet with a reset' : 'drops the next packets without a word';
  if (idle.proof === 'not-idle') {
    const c = idle.check!;
    return {
      code: 'lifetime-cap',
      summary,
      check: `A device on the path drops a flow some time after it began, whatever moves, and then ${next}: packets were lost once a flow had been quiet ${bracketText(idle)} (${idle.method}), and a session that echoed every ${fmt(c.everySeconds)} s was lost ${c.lostAtSeconds !== null ? `${fmt(c.lostAtSeconds)} s after its 101` : 'as well'}. Not an idle timeout: pings and keepalives do not help. Look for a maximum flow or session duration on the path (a firewall's session limit, a NAT or load balancer lifetime). kubectl on such a cut: ${kubectlSymptoms(cut)}.`,
    };
  }
  const generic =
    "raise the device's idle timeout above the longest quiet period your clients have, or keep their flows busier than it (TCP keepalive, application pings)";
  const proven =
    idle.proof === 'sessions'
      ? 'sessions that moved bytes more often kept their flows known past it'
      : idle.proof === 'check'
        ? `a session that echoed every ${fmt(idle.check!.everySeconds)} s kept its flow known for ${idle.check!.holdSeconds} s`
        : 'not checked that activity keeps a flow known: the check did not fit the run (--follow-up-budget) or had no safe period';
  return {
    code: 'flow-forgotten',
    summary,
    check: `A stateful device on the path (NAT gateway, L4 load balancer, firewall) forgets a flow that has been idle ${bracketText(idle)} (${idle.method}; ${proven}) and then ${next}; the moment a session is lost is not its timeout. ${matchText(idle)} ${whoKeepsItKnown(idle)}. kubectl on such a cut: ${kubectlSymptoms(cut)}. Fix: ${fixes(bracketDevices(idle), generic)}.`,
  };
}

/** A session cut about when the lifetime check was: a cap on the connection's life. */
export function lifetimeCap(r: SessionResult, check: LifetimeCheck): Diagnosis {
  const devices = devicesAt('lifetime', check.cutSeconds);
  return {
    code: 'lifetime-cap',
    summary: `The ${sessionWords(r)} session was cut ${fmt(r.hold.disconnectSeconds ?? check.cutSeconds)} s after the 101 ${r.keepalive === 'kubectl' ? "with kubectl's pings moving" : 'without pings'}; an exec session echoing every ${fmt(check.everySeconds)} s was cut ${check.checkCutSeconds !== null ? `${fmt(check.checkCutSeconds)} s` : 'as soon'} after its 101 too.`,
    check: `A hop caps how long an upgraded connection may live (about ${fmt(check.cutSeconds)} s), whatever moves: pings and data do not help, and every kubectl exec, attach, cp and port-forward that lasts longer is cut (${kubectlSymptoms('closed')}). ${devices.length ? `That matches ${deviceList(devices)}. Fix: ${fixes(devices, '')}.` : "Raise the hop's maximum connection (or stream) duration; a load balancer in front of the API server (GCP: the backend service timeout) is the usual place."}`,
  };
}

/** A transfer that stalled before a byte came back although the echoes (small exchanges) passed. */
export function mtuBlackHole(r: SessionResult): Diagnosis {
  const t = r.transfer!;
  return {
    code: 'mtu-black-hole',
    summary: `The ${sessionWords(r)} transfer of ${t.bytes} bytes stalled at 0 bytes back (${t.sentBytes} written, nothing for ${t.longestStallSeconds} s), although its small echoes passed right before.`,
    check: `Small packets pass and full-size ones vanish: an MTU black hole, a link on the path narrower than the endpoints' (a VPN, IPsec, GRE or VXLAN tunnel, a jumbo-frame mismatch) whose ICMP "fragmentation needed" (type 3 code 4; IPv6 "packet too big") a firewall drops, so the sender never learns to send less. Fix: allow that ICMP through, or clamp TCP's MSS on the device in front of the narrow link to what it carries (nftables \`tcp flags syn tcp option maxseg size set rt mtu\` or a fixed size, iptables \`--clamp-mss-to-pmtu\`), or set the tunnel's MTU right. Interactive shells keep working; bulk output, \`kubectl cp\` and port-forwarded downloads stall: ${kubectlSymptoms('stalled')}.`,
  };
}
