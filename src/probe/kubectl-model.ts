/**
 * What each kubectl (and each client without a fallback) would experience on
 * a path, from what the probe measured over each transport. Every forecast
 * names its source (`source`, in the JSON and docs/architecture.md):
 *
 * - ≤1.29 speaks SPDY only (KEP-4006 alpha in 1.29 was opt-in).
 * - 1.30 tries WebSocket first for exec (KUBECTL_REMOTE_COMMAND_WEBSOCKETS
 *   defaults on) and keeps SPDY for port-forward.
 * - 1.31–1.37 try WebSocket first for both and fall back to SPDY only when
 *   the WebSocket *upgrade* fails: kubectl pkg/cmd/exec/exec.go and
 *   pkg/cmd/portforward/portforward.go use client-go's FallbackExecutor /
 *   FallbackDialer with `httpstream.IsUpgradeFailure(err) ||
 *   httpstream.IsHTTPSProxyError(err)`. An upgrade failure is gorilla's
 *   ErrBadHandshake (any non-101, a bad Upgrade/Connection/Accept) or a 101
 *   without an offered subprotocol (client-go transport/websocket/
 *   roundtripper.go). A refused CONNECT, a dial or TLS error, a timeout, or a
 *   session that upgraded and died later never falls back.
 * - 1.38 is GA as KEP-4006 plans it (keps/sig-api-machinery/4006-transition-
 *   spdy-to-websockets/README.md, "GA" graduation criteria; the GA PR
 *   kubernetes/enhancements#6364, milestone v1.38): kubectl's
 *   KUBECTL_*_WEBSOCKETS variables and the API server's gates are locked on and
 *   deprecated (kubectl warns when one is set and ignores it). No criterion
 *   removes client-go's FallbackExecutor/FallbackDialer, and the KEP's version
 *   skew section still relies on them: a 1.38 kubectl behaves as 1.31–1.37 do
 *   on the wire, but nobody can force it onto SPDY any more.
 * - websocket-only: clients that never had the fallback, and fail on such a
 *   path today: browser terminals, SDK clients, and tools built on client-go ≥
 *   0.36, whose upgrade error type moved to k8s.io/streaming so apimachinery's
 *   IsUpgradeFailure no longer matches it (piraeus-operator#1036,
 *   troubleshoot#2037). Also any future kubectl without SPDY.
 * - IsHTTPSProxyError ("proxy: unknown scheme: https"): gorilla before the
 *   bump in kubectl 1.33 (k/k PR #129872) cannot dial WebSocket through an
 *   https:// proxy; 1.30.4+ and 1.31–1.32 fall back to SPDY there, 1.30.0–1.30.3
 *   do not (the fallback came with kubernetes#126231) and break.
 */
import type { KeepaliveMode, Operation } from '../vocabulary.js';
import { KUBECTL_CLIENTS, type KubectlExperience } from './kubectl-clients.js';
import { kubectlOnCut } from './kubectl-on-cut.js';
import type { SessionResult } from './types.js';
import { TRANSFER_FLOOR_BYTES_PER_SECOND, type TransferOutcome } from './transfer.js';

export { KUBECTL_CLIENTS, TODAYS_KUBECTL, type KubectlClient, type KubectlExperience, type KubectlOutcome } from './kubectl-clients.js';

export interface ModelContext {
  /** The forward proxy's scheme, when there is one (`https:` changes the WebSocket dial of kubectl < 1.33). */
  readonly proxyScheme?: string;
}

/** What the WebSocket-only forecast reads: the SDK-client session of the same operation and hold (keepalive `sdk`). */
export interface WebSocketOnlyContext {
  readonly sdk?: SessionResult;
}

/** Why a session failed, and whether kubectl would fall back to SPDY after it. */
export function failureOf(r: SessionResult): { readonly fallback: boolean; readonly why: string } {
  const u = r.upgrade;
  if (!u.ok) {
    switch (u.errorCode) {
      case 'UPGRADE_REJECTED':
        return { fallback: true, why: `the upgrade was answered ${u.status} by ${u.kubernetesStatus ? 'the API server' : 'a hop'}` };
      case 'UPGRADE_BAD_RESPONSE':
        return { fallback: true, why: 'the 101 was not one kubectl accepts' };
      case 'DIAL_PROXY':
        return { fallback: false, why: 'the forward proxy refused the tunnel (a refused CONNECT is not an upgrade failure)' };
      case 'UPGRADE_TIMEOUT':
        return { fallback: false, why: 'the upgrade got no answer' };
      case 'DIAL_TLS':
        return { fallback: false, why: 'the TLS handshake failed' };
      default:
        return { fallback: false, why: 'the connection failed before any upgrade answer' };
    }
  }
  // client-go falls back only on an upgrade failure: an error after the 101 ends the command.
  if (r.firstEchoMs === null && r.errorCode === 'STREAM_ERROR')
    return { fallback: false, why: 'it upgraded, then the server sent an error on the error stream' };
  if (r.firstEchoMs === null) return { fallback: false, why: 'it upgraded, then the first exchange failed' };
  if (r.transfer && r.transfer.end !== 'complete') {
    const stalledAtZero = r.transfer.end === 'stalled' && r.transfer.receivedBytes === 0;
    return {
      fallback: false,
      why: `it upgraded, then ${stalledAtZero ? `its transfer stalled at 0 bytes (${kubectlOnCut(r.operation, r.transport, 'stalled')})` : transferWhy(r.transfer)}`,
    };
  }
  if (r.hold.survived === false) {
    const q = r.hold.quiet;
    if (q?.unanswered && q.cut === 'reset-reply')
      return {
        fallback: false,
        why: `it upgraded, then a device that had forgotten the idle flow reset its next packet ${q.unanswered.atSeconds.toFixed(1)} s after the 101 (${kubectlOnCut(r.operation, r.transport, 'reset-reply')})`,
      };
    if (q?.unanswered && q.cut === 'no-reply')
      return {
        fallback: false,
        why: `it upgraded, then its packet after ${q.unanswered.quietSeconds.toFixed(1)} s of quiet was never answered (${kubectlOnCut(r.operation, r.transport, 'no-reply')})`,
      };
    const at = r.hold.disconnectSeconds !== null ? ` ${r.hold.disconnectSeconds.toFixed(1)} s after the 101` : '';
    const shows = r.hold.cause === 'fin' || r.hold.cause === 'rst' ? `; ${kubectlOnCut(r.operation, r.transport, 'closed')}` : '';
    return { fallback: false, why: `it upgraded, then the session was lost${at} (${r.hold.cause}${shows})` };
  }
  return { fallback: false, why: r.error ?? 'the session failed' };
}

/**
 * A transfer that did not complete, in kubectl's terms: what `kubectl cp` (exec + tar) shows on it. The lost
 * tail's words are measured with real kubectl (test/lab/kubectl-cp.test.ts); a stall is kubectl waiting with
 * no timeout of its own (client-go's stream copy has none).
 */
function transferWhy(t: TransferOutcome): string {
  switch (t.end) {
    case 'truncated':
      return `the transfer lost its last ${t.lostTailBytes} bytes before the exit status (\`kubectl cp\` from the pod: "unexpected EOF"; \`exec … cat\`: short output, exit 0)`;
    case 'stalled':
      return `the transfer stalled after ${t.receivedBytes} bytes (\`kubectl cp\` hangs there)`;
    case 'ended':
      return `the connection ended after ${t.receivedBytes} of ${t.bytes} bytes`;
    case 'timeout':
      return `the transfer ran slower than ${TRANSFER_FLOOR_BYTES_PER_SECOND / 1024} KiB/s`;
    case 'mismatch':
      return 'the transfer came back altered (`kubectl cp` would write a corrupt file)';
    case 'no-status':
      return 'every byte came back, but no exit status (`kubectl cp` waits for it)';
    default:
      return 'the transfer failed';
  }
}

/** A forecast before its client and source are attached. */
type Forecast = Omit<KubectlExperience, 'client' | 'source'>;

function spdyOnly(spdy: SessionResult | undefined, note: string): Forecast {
  if (!spdy) return { outcome: 'unknown', reason: 'SPDY was not probed' };
  if (spdy.ok) return { outcome: 'works', reason: `${note}, and SPDY works here` };
  return { outcome: 'breaks', reason: `${note}, and over SPDY ${failureOf(spdy).why}` };
}

function webSocketFirst(spdy: SessionResult | undefined, ws: SessionResult | undefined, httpsProxyFallback: boolean): Forecast {
  if (httpsProxyFallback) {
    // kubectl < 1.33 cannot dial WebSocket through an https:// proxy; IsHTTPSProxyError sends it to SPDY.
    if (!spdy) return { outcome: 'unknown', reason: 'SPDY was not probed' };
    return spdy.ok
      ? { outcome: 'works-via-fallback', reason: 'its WebSocket dialer does not support https:// proxies, so it falls back to SPDY, which works' }
      : { outcome: 'breaks', reason: `its WebSocket dialer does not support https:// proxies, and over SPDY ${failureOf(spdy).why}` };
  }
  if (!ws) return { outcome: 'unknown', reason: 'WebSocket was not probed' };
  if (ws.ok) return { outcome: 'works', reason: 'WebSocket works here' };
  const f = failureOf(ws);
  if (!f.fallback) return { outcome: 'breaks', reason: `over WebSocket ${f.why}; kubectl does not fall back to SPDY after that` };
  if (!spdy) return { outcome: 'unknown', reason: `over WebSocket ${f.why}, so it falls back to SPDY, which was not probed` };
  return spdy.ok
    ? { outcome: 'works-via-fallback', reason: `over WebSocket ${f.why}, so it falls back to SPDY, which works` }
    : { outcome: 'breaks', reason: `over WebSocket ${f.why}; it falls back to SPDY, where ${failureOf(spdy).why}` };
}

/**
 * The clients without a fallback (sdk-clients.ts), each kind from the session that behaves like it: SDK clients and
 * browser terminals from the `sdk` session (no pings, the kubelet's legacy port-forward), tools on client-go ≥ 0.36
 * from kubectl's WebSocket session without the fallback. Breaks when either kind breaks; never `works` from a session
 * that pinged where they do not: after a hold, or for port-forward (another protocol), without an `sdk` session it is
 * unknown.
 */
function webSocketOnlyForecast(operation: Operation, ws: SessionResult | undefined, holdSeconds: number, c: WebSocketOnlyContext, proxied: boolean): Forecast {
  const f = webSocketOnlyOutcome(operation, ws, holdSeconds, c);
  // The Python client 22.6 does not read proxy-url (sdk-clients.ts): through a proxy it is not on the measured path.
  return proxied
    ? { ...f, reason: `${f.reason}; the Python client ignores the kubeconfig's proxy-url and dials the API server directly, which this run did not measure` }
    : f;
}

function webSocketOnlyOutcome(operation: Operation, ws: SessionResult | undefined, holdSeconds: number, c: WebSocketOnlyContext): Forecast {
  const flag = 'probe with --keepalive sdk (the default) to measure them';
  const goTools = ws
    ? ws.ok
      ? 'tools on client-go ≥ 0.36 work (kubectl’s WebSocket path)'
      : `tools on client-go ≥ 0.36 break: over WebSocket ${failureOf(ws).why}, and they have no SPDY to fall back to`
    : undefined;
  const sdk = c.sdk;
  const sdkText = sdk
    ? sdk.ok
      ? 'SDK clients and browser terminals work (a session without pings, as they hold)'
      : `SDK clients and browser terminals break: ${operation === 'portforward' ? 'over the legacy WebSocket port-forward ' : 'without pings '}${failureOf(sdk).why}`
    : undefined;
  const reason = [sdkText, goTools].filter((t) => t !== undefined).join('; ');
  if ((sdk && !sdk.ok) || (ws && !ws.ok)) return { outcome: 'breaks', reason };
  // kubectl's session pings, and speaks the tunnel for port-forward: it says nothing of a client that does neither.
  const sameWire = operation === 'exec' && holdSeconds === 0;
  if (!sdk && !sameWire)
    return {
      outcome: 'unknown',
      reason: `${goTools ? `${goTools}; ` : ''}no session held as SDK clients hold (no pings${operation === 'portforward' ? ', the legacy port-forward' : ''}) was probed: ${flag}`,
    };
  if (!ws && !sdk) return { outcome: 'unknown', reason: 'WebSocket was not probed' };
  if (!sdk) return { outcome: 'works', reason: `WebSocket works here, and with no hold SDK clients send what kubectl sends; ${goTools}` };
  return { outcome: 'works', reason };
}

/**
 * KEP-4006's upgrade SLI for one kubectl invocation ("99.9% of initial HTTP connections eventually succeed in
 * upgrading to a streaming connection", its Production Readiness "What are the reasonable SLOs"): today's kubectl
 * tries WebSocket first and falls back to SPDY after an upgrade failure it falls back from (failureOf), so it gets its
 * stream when WebSocket upgraded and echoed, or when SPDY did after such a failure. null: neither transport was probed.
 */
export function kubectlGetsStream(spdy: SessionResult | undefined, ws: SessionResult | undefined): boolean | null {
  const streams = (r: SessionResult) => r.upgrade.ok && r.firstEchoMs !== null;
  if (ws && streams(ws)) return true;
  if (spdy && (!ws || failureOf(ws).fallback)) return streams(spdy);
  return ws ? false : null;
}

/**
 * Whether these results show what kubectl itself does: with kubectl's
 * keepalive, or with no hold (no keepalive is sent then). Holds without pings
 * measure the path, not kubectl, which always pings.
 */
export function modelsKubectl(keepalive: KeepaliveMode, holdSeconds: number): boolean {
  // An SDK client's row is what the WS-only forecast reads, not a kubectl row.
  return keepalive === 'kubectl' || (holdSeconds === 0 && keepalive === 'none');
}

/** Each kubectl's (and a WebSocket-only client's) experience of one operation on this path. */
export function kubectlExperience(
  operation: Operation,
  spdy: SessionResult | undefined,
  ws: SessionResult | undefined,
  context: ModelContext = {},
  wsOnly: WebSocketOnlyContext = {},
): KubectlExperience[] {
  const httpsProxy = context.proxyScheme === 'https:';
  return KUBECTL_CLIENTS.map(({ id, source }): KubectlExperience => {
    const e = ((): Forecast => {
      switch (id) {
        case '1.29':
          return spdyOnly(spdy, 'it speaks only SPDY');
        case '1.30': {
          if (operation === 'portforward') return spdyOnly(spdy, 'its port-forward speaks only SPDY');
          const f = webSocketFirst(spdy, ws, httpsProxy);
          // 1.30.0–1.30.3 have no IsHTTPSProxyError fallback: through an https:// proxy their exec fails outright.
          return httpsProxy && f.outcome === 'works-via-fallback'
            ? { ...f, reason: `${f.reason} (1.30.4 and later; 1.30.0–1.30.3 have no such fallback and fail here: kubernetes#126231)` }
            : f;
        }
        case '1.31-1.37': {
          const f = webSocketFirst(spdy, ws, false);
          // 1.31-1.32 share this row; through an https:// proxy they cannot dial WebSocket at all.
          const note = httpsProxy && f.outcome === 'works' ? ' (1.31–1.32 cannot dial WebSocket through an https:// proxy and fall back to SPDY)' : '';
          return { ...f, reason: f.reason + note };
        }
        case '1.38': {
          const f = webSocketFirst(spdy, ws, false);
          const hatch =
            f.outcome === 'works-via-fallback' ? '; KUBECTL_*_WEBSOCKETS=false no longer forces SPDY, and the fallback is all that keeps it working' : '';
          return { ...f, reason: f.reason + hatch };
        }
        case 'websocket-only':
          return webSocketOnlyForecast(operation, ws, (ws ?? spdy)?.holdSeconds ?? 0, wsOnly, context.proxyScheme !== undefined);
      }
    })();
    return { client: id, ...e, source };
  });
}
