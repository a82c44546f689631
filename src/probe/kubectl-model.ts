/**
 * What each kubectl would experience on a path, from what the probe measured
 * over each transport. The rules are kubectl's own:
 *
 * - ≤1.29 speaks SPDY only (exec and port-forward; KEP-4006 opt-in aside).
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
 * - A GA client speaks WebSocket only: no fallback, KUBECTL_*_WEBSOCKETS ignored.
 * - IsHTTPSProxyError ("proxy: unknown scheme: https"): gorilla before the
 *   bump in kubectl 1.33 (k/k PR #129872) cannot dial WebSocket through an
 *   https:// proxy, and 1.30.4+ / 1.31–1.32 fall back to SPDY there.
 */
import type { KeepaliveMode, Operation } from '../vocabulary.js';
import type { SessionResult } from './types.js';

export const KUBECTL_CLIENTS = [
  { id: '1.29', label: '≤1.29', speaks: 'SPDY only' },
  { id: '1.30', label: '1.30', speaks: 'exec WebSocket first with fallback; port-forward SPDY' },
  { id: '1.31-1.37', label: '1.31–1.37', speaks: 'WebSocket first, falls back to SPDY only when the upgrade is refused' },
  { id: 'ga', label: 'GA', speaks: 'WebSocket only, no fallback' },
] as const;

export type KubectlClient = (typeof KUBECTL_CLIENTS)[number]['id'];
/** The client most users run today (kubectl's supported versions in December 2026). */
export const TODAYS_KUBECTL: KubectlClient = '1.31-1.37';

export type KubectlOutcome = 'works' | 'works-via-fallback' | 'breaks' | 'unknown';

export interface KubectlExperience {
  readonly client: KubectlClient;
  readonly outcome: KubectlOutcome;
  /** Why, in plain words, with what was measured. */
  readonly reason: string;
}

export interface ModelContext {
  /** The forward proxy's scheme, when there is one (`https:` changes the WebSocket dial of kubectl < 1.33). */
  readonly proxyScheme?: string;
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
  if (r.firstEchoMs === null && r.errorCode === 'STREAM_ERROR') return { fallback: false, why: 'it upgraded, then the server sent an error on the error stream' };
  if (r.firstEchoMs === null) return { fallback: false, why: 'it upgraded, then the first exchange failed' };
  if (r.hold.survived === false) {
    const at = r.hold.disconnectSeconds !== null ? ` ${r.hold.disconnectSeconds.toFixed(1)} s after the 101` : '';
    return { fallback: false, why: `it upgraded, then the session was lost${at} (${r.hold.cause})` };
  }
  return { fallback: false, why: r.error ?? 'the session failed' };
}

function spdyOnly(spdy: SessionResult | undefined, note: string): Omit<KubectlExperience, 'client'> {
  if (!spdy) return { outcome: 'unknown', reason: 'SPDY was not probed' };
  if (spdy.ok) return { outcome: 'works', reason: `${note}, and SPDY works here` };
  return { outcome: 'breaks', reason: `${note}, and over SPDY ${failureOf(spdy).why}` };
}

function webSocketFirst(spdy: SessionResult | undefined, ws: SessionResult | undefined, httpsProxyFallback: boolean): Omit<KubectlExperience, 'client'> {
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
 * Whether these results show what kubectl itself does: with kubectl's
 * keepalive, or with no hold (no keepalive is sent then). Holds without pings
 * measure the path, not kubectl, which always pings.
 */
export function modelsKubectl(keepalive: KeepaliveMode, holdSeconds: number): boolean {
  return keepalive === 'kubectl' || holdSeconds === 0;
}

/** Each kubectl's experience of one operation on this path. */
export function kubectlExperience(operation: Operation, spdy: SessionResult | undefined, ws: SessionResult | undefined, context: ModelContext = {}): KubectlExperience[] {
  const httpsProxy = context.proxyScheme === 'https:';
  return KUBECTL_CLIENTS.map(({ id }): KubectlExperience => {
    switch (id) {
      case '1.29':
        return { client: id, ...spdyOnly(spdy, 'it speaks only SPDY') };
      case '1.30':
        if (operation === 'portforward') return { client: id, ...spdyOnly(spdy, 'its port-forward speaks only SPDY') };
        return { client: id, ...webSocketFirst(spdy, ws, httpsProxy) };
      case '1.31-1.37': {
        const e = webSocketFirst(spdy, ws, false);
        // 1.31-1.32 share this row; through an https:// proxy they cannot dial WebSocket at all.
        const note = httpsProxy && e.outcome === 'works' ? ' (1.31–1.32 cannot dial WebSocket through an https:// proxy and fall back to SPDY)' : '';
        return { client: id, ...e, reason: e.reason + note };
      }
      case 'ga':
        if (!ws) return { client: id, outcome: 'unknown', reason: 'WebSocket was not probed' };
        return ws.ok
          ? { client: id, outcome: 'works', reason: 'WebSocket works here' }
          : { client: id, outcome: 'breaks', reason: `over WebSocket ${failureOf(ws).why}, and a GA client has no fallback` };
    }
  });
}
