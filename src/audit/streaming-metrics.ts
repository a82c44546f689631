/**
 * What the API server itself says about streaming: its feature gates
 * (`kubernetes_feature_enabled{name,stage}`) and its streaming counters,
 * each read only in the versions that have it (../shared protocol notes §13,
 * Kubernetes metrics reference):
 *
 * - `apiserver_stream_translator_requests_total{code}`: 1.30+, WebSocket
 *   exec/attach translated to SPDY at the API server;
 * - `apiserver_stream_tunnel_requests_total{code}`: 1.31+, WebSocket
 *   port-forward tunnels;
 * - `apiserver_websocket_streaming_requests_total{subresource,proxy_type}`:
 *   1.36+, every WebSocket streaming request, translated or passed to the
 *   kubelet. Below 1.36 it does not exist (absent is not zero); from 1.36 the
 *   two older counters only count what the API server still translates.
 */
import type { Sample } from './prometheus.js';

export const STREAMING_GATES = [
  { name: 'TranslateStreamCloseWebsocketRequests', what: 'WebSocket exec/attach translated at the API server (1.29 alpha, 1.30 beta on)' },
  { name: 'PortForwardWebsockets', what: 'WebSocket port-forward tunnels (1.30 alpha, 1.31 beta on)' },
  { name: 'AuthorizePodWebsocketUpgradeCreatePermission', what: 'WebSocket upgrades also need create (1.35 beta on)' },
  { name: 'ExtendWebSocketsToKubelet', what: 'WebSocket passed through to kubelets that declare it (1.36 beta per the KEP)' },
] as const;

export const COUNTERS = [
  { name: 'apiserver_stream_translator_requests_total', since: 30, what: 'WebSocket exec/attach translated at the API server' },
  { name: 'apiserver_stream_tunnel_requests_total', since: 31, what: 'WebSocket port-forward tunnels' },
  { name: 'apiserver_websocket_streaming_requests_total', since: 36, what: 'every WebSocket streaming request (translated or passed to the kubelet)' },
] as const;

export interface GateState {
  readonly name: string;
  readonly what: string;
  /** null: the server does not have this gate (its version predates it). */
  readonly enabled: boolean | null;
  readonly stage: string | null;
}

export interface CounterReading {
  readonly name: string;
  readonly what: string;
  /** From which minor version the server has it. */
  readonly since: number;
  /** read: the server has it and exposes it; not-in-version: do not read it (absent is not zero); missing: the server should have it but does not expose it. */
  readonly state: 'read' | 'not-in-version' | 'missing';
  readonly total: number | null;
  /** Requests by HTTP code; anything but 101 failed. */
  readonly byCode: Readonly<Record<string, number>>;
  readonly failed: number | null;
  /** For the 1.36 counter: by subresource and proxy_type. */
  readonly bySubresource?: Readonly<Record<string, number>>;
}

export function gateStates(samples: readonly Sample[]): GateState[] {
  return STREAMING_GATES.map((g) => {
    const s = samples.find((x) => x.name === 'kubernetes_feature_enabled' && x.labels.name === g.name);
    return { name: g.name, what: g.what, enabled: s ? s.value === 1 : null, stage: s?.labels.stage ?? null };
  });
}

export function counterReadings(samples: readonly Sample[], minor: number | null): CounterReading[] {
  return COUNTERS.map((c) => {
    const mine = samples.filter((s) => s.name === c.name);
    if (minor !== null && minor < c.since)
      return { name: c.name, what: c.what, since: c.since, state: 'not-in-version', total: null, byCode: {}, failed: null };
    if (mine.length === 0) return { name: c.name, what: c.what, since: c.since, state: 'missing', total: null, byCode: {}, failed: null };
    const byCode: Record<string, number> = {};
    const bySubresource: Record<string, number> = {};
    for (const s of mine) {
      if (s.labels.code) byCode[s.labels.code] = (byCode[s.labels.code] ?? 0) + s.value;
      if (s.labels.subresource) {
        const k = `${s.labels.subresource}/${s.labels.proxy_type ?? '?'}`;
        bySubresource[k] = (bySubresource[k] ?? 0) + s.value;
      }
    }
    const total = mine.reduce((n, s) => n + s.value, 0);
    const failed = Object.keys(byCode).length
      ? Object.entries(byCode)
          .filter(([code]) => code !== '101')
          .reduce((n, [, v]) => n + v, 0)
      : null;
    return {
      name: c.name,
      what: c.what,
      since: c.since,
      state: 'read',
      total,
      byCode,
      failed,
      ...(Object.keys(bySubresource).length ? { bySubresource } : {}),
    };
  });
}
