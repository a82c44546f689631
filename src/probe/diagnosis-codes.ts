/**
 * Every diagnosis the probe can make, one entry per stable code (docs/diagnoses.md, held equal by
 * test/unit/diagnoses-doc.test.ts): what it means, and where the audit files it. A diagnosis says what a failure
 * means for the path; an error code (docs/errors.md) says what failed.
 */

/** The audit's fix categories, in the order they are most likely to be the cause. */
export const FIX_ORDER = [
  'idle timeouts',
  'connection lifetime',
  'upgrade passthrough',
  'buffering',
  'HTTP/2 hops',
  'TLS',
  'MTU',
  'kubelet path',
  'API server',
  'transfers',
  'RBAC',
  'toggles',
  'clients',
] as const;
export type FixCategory = (typeof FIX_ORDER)[number];

/**
 * Where the audit files a diagnosis: under the fix it points at; `restates another` when it is a field of another
 * finding (the fallback kubectl takes, two operations that disagree: each failure's own diagnosis carries the fix);
 * `said, no fix` when it qualifies what was measured; `blocks the audit` when the probe could not measure (its setup).
 */
export type AuditFiling = FixCategory | 'restates another' | 'said, no fix' | 'blocks the audit';

export interface DiagnosisEntry {
  readonly meaning: string;
  readonly audit: AuditFiling;
}

export const DIAGNOSES = {
  // Upgrade refused or broken
  'hop-refused-upgrade': { meaning: 'an L7 hop (proxy, ingress, WAF) answered the upgrade itself, without 101', audit: 'upgrade passthrough' },
  'hop-stripped-upgrade': { meaning: 'the API server got the request without its upgrade headers: a hop dropped them', audit: 'HTTP/2 hops' },
  'api-server-refused': { meaning: 'the API server itself refused the upgrade', audit: 'API server' },
  'rbac-websocket-create': { meaning: 'the API server refused a WebSocket upgrade with 403 (from 1.35 it needs create as well as get)', audit: 'RBAC' },
  'upgrade-no-answer': { meaning: 'the upgrade request got no answer: a buffering hop', audit: 'buffering' },
  'bad-upgrade-response': { meaning: 'a 101 came back, but not the one the protocol needs', audit: 'upgrade passthrough' },
  'proxy-refused-tunnel': { meaning: 'the forward proxy refused the CONNECT tunnel', audit: 'upgrade passthrough' },
  unreachable: { meaning: 'the API server could not be reached (DNS, TCP, a broken TLS handshake)', audit: 'blocks the audit' },
  'tls-certificate': {
    meaning: 'a certificate kubectl refuses too: not trusted (a TLS-intercepting proxy is one cause) or valid for other names',
    audit: 'TLS',
  },
  'upgrade-failed': { meaning: 'the connection broke during the handshake', audit: 'upgrade passthrough' },
  // After the upgrade
  'channel-broken': { meaning: 'the upgrade worked but the first echo did not', audit: 'buffering' },
  'stream-error-after-upgrade': {
    meaning:
      'a 101, then an error on the error stream (the path to the kubelet or its runtime, e.g. ExtendWebSocketsToKubelet with cri-dockerd): no fallback; exec, attach and port-forward alike (attach: test/interop/per-node.test.ts, with real kubectl 1.35 attach)',
    audit: 'kubelet path',
  },
  'black-hole': { meaning: 'after the hold the connection looked open but nothing came back', audit: 'idle timeouts' },
  'flow-forgotten': {
    meaning:
      'a stateful device (NAT gateway, L4 load balancer, firewall) forgot the idle flow and reset or dropped its next packet: its idle timeout is bracketed from the quiet gaps answered and not, and matched against the documented devices',
    audit: 'idle timeouts',
  },
  'lifetime-cap': {
    meaning: 'a hop ends every upgraded connection a fixed time after it began, whatever moves (pings and data alike)',
    audit: 'connection lifetime',
  },
  'mtu-black-hole': {
    meaning:
      'a transfer stalled at 0 bytes although small exchanges passed: full-size packets vanish on a narrow link whose ICMP "fragmentation needed" is dropped',
    audit: 'MTU',
  },
  'stream-corrupted': { meaning: 'bytes inside the upgraded connection were altered', audit: 'buffering' },
  'no-pong': { meaning: "kubectl's 61 s pong deadline passed", audit: 'idle timeouts' },
  'idle-timeout': { meaning: 'a hop cut the session after it had been idle', audit: 'idle timeouts' },
  'one-direction-timeout': {
    meaning: 'a shaped hold (--hold-shape output or input) was cut while its bytes kept moving: a hop times out each direction on its own',
    audit: 'idle timeouts',
  },
  'lost-during-hold': { meaning: 'the session was lost during the hold, cause unknown', audit: 'idle timeouts' },
  'tty-resize-lost': {
    meaning:
      "a terminal session's size (sent as kubectl sends it, first and after a resize) never reached its process: full-screen programs draw at the wrong size",
    audit: 'kubelet path',
  },
  'stdin-eof-lost': {
    meaning:
      "stdin's end never reached the process (v5's close signal or SPDY's stdin FIN lost): no exit status came, and kubectl exec -i … < file or kubectl cp into the pod hangs",
    audit: 'kubelet path',
  },
  'session-error': { meaning: 'the session failed after the upgrade', audit: 'upgrade passthrough' },
  // Transfers (--transfer, the kubectl cp path)
  'transfer-tail-lost': {
    meaning: 'the exit status (or the end) came before the last bytes of the transfer: kubectl cp fails with unexpected EOF, exec output is short',
    audit: 'transfers',
  },
  'transfer-stalled': {
    meaning: 'no byte of the transfer came back for longer than the stall deadline: a hop buffers or limits the stream, or a peer is stuck',
    audit: 'transfers',
  },
  'transfer-cut': { meaning: 'the connection ended in the middle of the transfer', audit: 'transfers' },
  'transfer-slow': { meaning: 'the transfer was far slower than the other transport, or slower than the floor rate', audit: 'transfers' },
  // Across sessions
  'keepalive-dependent': { meaning: "kubectl's pings keep the session alive; clients without pings break", audit: 'idle timeouts' },
  'pings-ignored': {
    meaning: "the session was cut as early with pings as without, and a session writing data survived: the hop's idle timer counts only data",
    audit: 'idle timeouts',
  },
  'cut-despite-pings': {
    meaning:
      'the session was cut as early with pings as without, and nothing told a lifetime cap from a timer that counts only data (the check did not run or was inconclusive)',
    audit: 'connection lifetime',
  },
  'exec-portforward-disagree': { meaning: 'one operation works on this path and the other does not', audit: 'restates another' },
  'exec-attach-disagree': {
    meaning: 'exec works on this path and attach does not (or the reverse): attach has its own URL and RBAC subresource',
    audit: 'restates another',
  },
  'verb-acl': { meaning: "SPDY's POST passed and WebSocket's GET was refused by a hop's rule: a method ACL written for SPDY", audit: 'upgrade passthrough' },
  'http2-leg': {
    meaning: 'WebSocket passed and SPDY reached the API server without its Upgrade: a hop that carries only WebSocket (an HTTP/2 leg)',
    audit: 'HTTP/2 hops',
  },
  'silent-fallback': { meaning: "today's kubectl works here only because it falls back to SPDY", audit: 'restates another' },
  'kubectl-breaks-today': {
    meaning: "today's kubectl fails here although SPDY works: the WebSocket failure is one it does not fall back from",
    audit: 'restates another',
  },
  'not-compared': { meaning: 'only one transport was probed: what it did, not which transport a hop breaks', audit: 'said, no fix' },
  flapping: {
    meaning: 'a session failed before its hold and worked when tried again on a fresh connection a moment later: a one-off on the path, counted as working',
    audit: 'said, no fix',
  },
  // Interrupted: the run was stopped before these sessions finished (exit code 130 / 143)
  interrupted: {
    meaning: 'the run was interrupted (Ctrl-C, SIGTERM) before these sessions finished: nothing is said about the path',
    audit: 'blocks the audit',
  },
  // The probe's own setup: not-measured, never a path verdict (exit code 3)
  'rbac-preflight': { meaning: 'SelfSubjectAccessReview says the probe lacks a verb the upgrades need', audit: 'blocks the audit' },
  credentials: { meaning: 'the probe could not get credentials for the cluster', audit: 'blocks the audit' },
  'probe-failed': {
    meaning: 'the probe itself failed for this cluster (a bug or an unexpected error); the other clusters were still measured and published',
    audit: 'blocks the audit',
  },
  'credentials-rejected': { meaning: "the API server rejected the probe's credentials (401)", audit: 'blocks the audit' },
  'target-missing': { meaning: 'the target pod (or its namespace, or container) does not exist', audit: 'blocks the audit' },
  'target-unlisted': {
    meaning: 'the pod list that finds the target by its label is larger than the probe reads: the target is not guessed',
    audit: 'blocks the audit',
  },
  'target-forbidden': { meaning: "the probe's RBAC does not allow it to get the target or to open either upgrade", audit: 'blocks the audit' },
  'target-not-running': { meaning: 'the target pod exists but is not Running', audit: 'blocks the audit' },
  'target-port-closed': { meaning: "the target pod's port refused the forwarded connection (the pod said so, not a hop)", audit: 'blocks the audit' },
} as const satisfies Readonly<Record<string, DiagnosisEntry>>;

export type DiagnosisCode = keyof typeof DIAGNOSES;

/** Each code's meaning (the catalogue's first field). */
export const DIAGNOSIS_CODES: Readonly<Record<DiagnosisCode, string>> = Object.fromEntries(
  Object.entries(DIAGNOSES).map(([code, e]) => [code, e.meaning]),
) as Record<DiagnosisCode, string>;
