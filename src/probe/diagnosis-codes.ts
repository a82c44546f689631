/**
 * Every diagnosis the probe can make, with its stable code (docs/diagnoses.md).
 * A diagnosis says what a failure means for the path; an error code
 * (docs/errors.md) says what failed.
 */
export const DIAGNOSIS_CODES = {
  // Upgrade refused or broken
  'hop-refused-upgrade': 'an L7 hop (proxy, ingress, WAF) answered the upgrade itself, without 101',
  'hop-stripped-upgrade': 'the API server got the request without its upgrade headers: a hop dropped them',
  'api-server-refused': 'the API server itself refused the upgrade',
  'rbac-websocket-create': 'the API server refused a WebSocket upgrade with 403 (from 1.35 it needs create as well as get)',
  'upgrade-no-answer': 'the upgrade request got no answer: a buffering hop',
  'bad-upgrade-response': 'a 101 came back, but not the one the protocol needs',
  'proxy-refused-tunnel': 'the forward proxy refused the CONNECT tunnel',
  unreachable: 'the API server could not be reached (DNS, TCP, a broken TLS handshake)',
  'tls-certificate': 'a certificate kubectl refuses too: not trusted (a TLS-intercepting proxy is one cause) or valid for other names',
  'upgrade-failed': 'the connection broke during the handshake',
  // After the upgrade
  'channel-broken': 'the upgrade worked but the first echo did not',
  'stream-error-after-upgrade':
    'a 101, then an error on the error stream (the path to the kubelet or its runtime, e.g. ExtendWebSocketsToKubelet with cri-dockerd): no fallback',
  'black-hole': 'after the hold the connection looked open but nothing came back',
  'flow-forgotten':
    'a stateful device (NAT gateway, L4 load balancer, firewall) forgot the idle flow and reset or dropped its next packet: its idle timeout is bracketed from the quiet gaps answered and not, and matched against the documented devices',
  'lifetime-cap': 'a hop ends every upgraded connection a fixed time after it began, whatever moves (pings and data alike)',
  'mtu-black-hole':
    'a transfer stalled at 0 bytes although small exchanges passed: full-size packets vanish on a narrow link whose ICMP "fragmentation needed" is dropped',
  'stream-corrupted': 'bytes inside the upgraded connection were altered',
  'no-pong': "kubectl's 61 s pong deadline passed",
  'idle-timeout': 'a hop cut the session after it had been idle',
  'one-direction-timeout': 'a shaped hold (--hold-shape output or input) was cut while its bytes kept moving: a hop times out each direction on its own',
  'lost-during-hold': 'the session was lost during the hold, cause unknown',
  'tty-resize-lost':
    "a terminal session's size (sent as kubectl sends it, first and after a resize) never reached its process: full-screen programs draw at the wrong size",
  'stdin-eof-lost':
    "stdin's end never reached the process (v5's close signal or SPDY's stdin FIN lost): no exit status came, and kubectl exec -i … < file or kubectl cp into the pod hangs",
  'session-error': 'the session failed after the upgrade',
  // Transfers (--transfer, the kubectl cp path)
  'transfer-tail-lost': 'the exit status (or the end) came before the last bytes of the transfer: kubectl cp fails with unexpected EOF, exec output is short',
  'transfer-stalled': 'no byte of the transfer came back for longer than the stall deadline: a hop buffers or limits the stream, or a peer is stuck',
  'transfer-cut': 'the connection ended in the middle of the transfer',
  'transfer-slow': 'the transfer was far slower than the other transport, or slower than the floor rate',
  // Across sessions
  'keepalive-dependent': "kubectl's pings keep the session alive; clients without pings break",
  'pings-ignored': "the session was cut as early with pings as without, and a session writing data survived: the hop's idle timer counts only data",
  'cut-despite-pings':
    'the session was cut as early with pings as without, and nothing told a lifetime cap from a timer that counts only data (the check did not run or was inconclusive)',
  'exec-portforward-disagree': 'one operation works on this path and the other does not',
  'exec-attach-disagree': 'exec works on this path and attach does not (or the reverse): attach has its own URL and RBAC subresource',
  'verb-acl': "SPDY's POST passed and WebSocket's GET was refused by a hop's rule: a method ACL written for SPDY",
  'http2-leg': 'WebSocket passed and SPDY reached the API server without its Upgrade: a hop that carries only WebSocket (an HTTP/2 leg)',
  'silent-fallback': "today's kubectl works here only because it falls back to SPDY",
  'kubectl-breaks-today': "today's kubectl fails here although SPDY works: the WebSocket failure is one it does not fall back from",
  'not-compared': 'only one transport was probed: what it did, not which transport a hop breaks',
  flapping: 'a session failed before its hold and worked when tried again on a fresh connection a moment later: a one-off on the path, counted as working',
  // Interrupted: the run was stopped before these sessions finished (exit code 130 / 143)
  interrupted: 'the run was interrupted (Ctrl-C, SIGTERM) before these sessions finished: nothing is said about the path',
  // The probe's own setup: not-measured, never a path verdict (exit code 3)
  'rbac-preflight': 'SelfSubjectAccessReview says the probe lacks a verb the upgrades need',
  credentials: 'the probe could not get credentials for the cluster',
  'probe-failed': 'the probe itself failed for this cluster (a bug or an unexpected error); the other clusters were still measured and published',
  'credentials-rejected': "the API server rejected the probe's credentials (401)",
  'target-missing': 'the target pod (or its namespace, or container) does not exist',
  'target-unlisted': 'the pod list that finds the target by its label is larger than the probe reads: the target is not guessed',
  'target-forbidden': "the probe's RBAC does not allow it to get the target or to open either upgrade",
  'target-not-running': 'the target pod exists but is not Running',
  'target-port-closed': "the target pod's port refused the forwarded connection (the pod said so, not a hop)",
} as const;

export type DiagnosisCode = keyof typeof DIAGNOSIS_CODES;
