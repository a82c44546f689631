/**
 * kubectl's keepalive, defined once: what it sends on an idle session of each
 * operation and transport. The sessions use these to ping exactly as kubectl
 * does; the diagnosis quotes them when a hop's idle timeout is shorter.
 */
import type { Operation, Transport } from '../vocabulary.js';

/** client-go tools/remotecommand/websocket.go: a WebSocket ping every 5 s. */
export const WS_PING_PERIOD_MS = 5_000;
/** client-go websocket.go pingReadDeadline (12 × 5 s + 1 s): only a pong pushes it forward. */
export const WS_PONG_DEADLINE_MS = 61_000;
/** client-go transport/spdy/spdy.go: a SPDY PING every 5 s on direct SPDY (exec and port-forward). */
export const SPDY_PING_PERIOD_MS = 5_000;
/** client-go tools/portforward/tunneling_dialer.go: a SPDY PING every 10 s inside the WebSocket tunnel. */
export const TUNNEL_PING_PERIOD_MS = 10_000;

/** How often kubectl sends a keepalive on an idle session of this operation and transport, ms. */
export function kubectlPingPeriodMs(operation: Operation, transport: Transport): number {
  if (transport === 'spdy') return SPDY_PING_PERIOD_MS;
  return operation === 'portforward' ? TUNNEL_PING_PERIOD_MS : WS_PING_PERIOD_MS;
}

export const seconds = (ms: number): string => `${ms / 1000} s`;
