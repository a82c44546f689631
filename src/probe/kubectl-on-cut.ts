/**
 * What kubectl shows when a session it had upgraded is cut, by how the path cut it, per operation and transport
 * (kubectl never falls back after a 101, kubectl-model.ts). Each line is measured with real kubectl (1.29 over SPDY,
 * 1.33 and 1.36 over both) through real hops: a hop closing at its timer (test/lab/silent-exit.test.ts), and the
 * kernel's own connection tracking forgetting a flow, a narrow MTU and a lifetime cap (test/lab/kernel-hops.test.ts).
 *
 * Why kubectl hangs on a silent drop: it sends one keepalive ping (client-go's heartbeats wait for its answer before
 * the next: tools/remotecommand/websocket.go, transport/spdy's ping loop), which is dropped; with a packet
 * outstanding, TCP keepalive never fires, so only the kernel's retransmission limit ends the connection
 * (net.ipv4.tcp_retries2, default 15: "a hypothetical timeout of 924.6 seconds and is a lower bound for the effective
 * timeout", Linux Documentation/networking/ip-sysctl.rst). WebSocket exec ends earlier: client-go's read deadline
 * moves only with a pong (pingReadDeadline, 12 × 5 s + 1 s: WS_PONG_DEADLINE_MS).
 */
import { WS_PONG_DEADLINE_MS } from '../streaming/keepalive.js';
import type { Operation, Transport } from '../vocabulary.js';

/**
 * How a session was cut: `closed` by a hop at its own timer (FIN, or a reset with nothing of ours outstanding);
 * `reset-reply` a reset in answer to its next packet (a device forgot the flow); `no-reply` its next packet never
 * answered (a device forgot the flow and drops its packets); `stalled` bulk data that never arrives while small
 * packets pass (an MTU black hole).
 */
export type CutKind = 'closed' | 'reset-reply' | 'no-reply' | 'stalled';

/** The kernel's default retransmission limit, s (tcp_retries2 = 15; a lower bound, see above). */
export const TCP_RETRIES2_DEFAULT_SECONDS = 924.6;

const GIVE_UP = `until the kernel gives up retransmitting (net.ipv4.tcp_retries2: at least ${Math.round(TCP_RETRIES2_DEFAULT_SECONDS)} s, about 15 minutes, by default)`;
const PONG_DEADLINE = `about ${WS_PONG_DEADLINE_MS / 1000} s`;

/** What kubectl does with this operation over this transport when the path cuts it so. */
export function kubectlOnCut(operation: Operation, transport: Transport, cut: CutKind): string {
  // Measured for exec; attach streams through the same client-go executor (tools/remotecommand), not measured alone.
  if (operation === 'attach')
    return `${kubectlOnCut('exec', transport, cut)} (measured for kubectl exec; kubectl attach streams through the same client-go remotecommand executor)`;
  if (operation === 'portforward') {
    switch (cut) {
      case 'closed':
      case 'reset-reply':
        return 'kubectl port-forward prints "lost connection to pod"';
      case 'no-reply':
        return `kubectl port-forward hangs ${GIVE_UP}, then prints "lost connection to pod"`;
      case 'stalled':
        return `kubectl port-forward hangs ${GIVE_UP}, then prints "lost connection to pod"`;
    }
  }
  if (transport === 'spdy') {
    switch (cut) {
      case 'closed':
      case 'reset-reply':
        return 'kubectl exec (SPDY) exits 0 with nothing on stderr, so scripts do not notice';
      case 'no-reply':
        return `kubectl exec (SPDY) hangs ${GIVE_UP}, then exits 0 with nothing on stderr`;
      case 'stalled':
        return `kubectl exec and cp (SPDY) hang ${GIVE_UP}, then exit 0 although the data never arrived`;
    }
  }
  switch (cut) {
    case 'closed':
      return 'kubectl exec (WebSocket) exits 1 ("close 1006 (abnormal closure)")';
    case 'reset-reply':
      return 'kubectl exec (WebSocket) exits 1 ("connection reset by peer")';
    case 'no-reply':
      return `kubectl exec (WebSocket) exits 1 after ${PONG_DEADLINE} ("next reader: … i/o timeout": client-go's read deadline, which only a pong moves)`;
    case 'stalled':
      return `kubectl exec and cp (WebSocket) exit 1 after ${PONG_DEADLINE} ("… i/o timeout")`;
  }
}
