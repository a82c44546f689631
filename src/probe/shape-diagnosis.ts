/**
 * A shaped hold (`--hold-shape output|input`, hold-shape.ts) cut while its bytes kept moving: a hop whose idle
 * timer counts one direction only. A two-way timer (an L4 load balancer, nginx's proxy_read_timeout on an
 * upgraded connection, HAProxy's default) sees the pod's ticks as activity and keeps the session open; one
 * that counts each direction on its own (HAProxy `option independent-streams` with `timeout client` /
 * `timeout server`; some NAT and firewall timers) cuts it. Measured through real HAProxy, with real kubectl
 * alongside: test/lab/one-direction-timers.test.ts.
 */
import { kubectlPingPeriodMs } from '../streaming/keepalive.js';
import { HOLD_SHAPE_PERIOD_SECONDS } from '../vocabulary.js';
import { QUIET_DIRECTION } from './hold-shape.js';
import type { Diagnosis, SessionResult } from './types.js';
import { TRANSPORT_WORDS } from '../vocabulary.js';

const fmt = (s: number) => (s >= 100 ? s.toFixed(0) : s.toFixed(1));

/** The one-direction finding for a shaped session cut during its hold with bytes still moving; else undefined. */
export function oneDirectionCut(r: SessionResult): Diagnosis | undefined {
  const shape = r.holdShape;
  const h = r.hold;
  if (!shape || shape === 'silent' || shape === 'tty' || h.survived !== false || h.disconnectSeconds === null) return undefined;
  if (h.cause !== 'fin' && h.cause !== 'rst') return undefined;
  // Bytes moved within about one tick period of the cut: the session was not idle, one direction of it was.
  const idle = h.idleSeconds ?? null;
  if (idle === null || idle > HOLD_SHAPE_PERIOD_SECONDS + 1) return undefined;
  const quiet = QUIET_DIRECTION[shape];
  const timer = shape === 'output' ? '`timeout client`' : '`timeout server`';
  const pings = kubectlPingPeriodMs(r.operation, r.transport) / 1000;
  const who = shape === 'output' ? 'the pod wrote a line every' : 'the client wrote a line every';
  const withPings =
    r.keepalive === 'kubectl'
      ? ` It was cut even with kubectl's pings (every ${pings} s), so the timer is shorter than that: kubectl sessions of this shape are cut too.`
      : ` kubectl's own pings (every ${pings} s, client → server, answered server → client) count in both directions, so kubectl survives such a timer when it is longer than ${pings} s; clients without pings (SDKs, browser terminals, \`kubectl logs -f\`, which is a plain streaming GET) do not.`;
  return {
    code: 'one-direction-timeout',
    summary: `The ${TRANSPORT_WORDS[r.transport]} exec session with --hold-shape ${shape} (${who} ${HOLD_SHAPE_PERIOD_SECONDS} s) was cut ${fmt(h.disconnectSeconds)} s after the 101 (${h.cause}) although bytes had moved ${fmt(idle)} s before: only the ${quiet} direction was idle.`,
    check: `A hop times out each direction on its own: HAProxy \`option independent-streams\` with ${timer} (remove the option, or use \`timeout tunnel\`), or a NAT / firewall timer that counts one direction.${withPings}`,
  };
}
