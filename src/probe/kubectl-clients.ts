/**
 * The clients the kubectl model forecasts for (kubectl-model.ts has the rules and their sources), and the shape of
 * a forecast: a module of its own so that the report types (types.ts) and the model both import it, neither the other.
 */
import { webSocketOnlySource } from './sdk-clients.js';

const KEP = 'KEP-4006 (kubernetes/enhancements keps/sig-api-machinery/4006-transition-spdy-to-websockets)';
const FALLBACK_SOURCE =
  'kubectl pkg/cmd/exec/exec.go and pkg/cmd/portforward/portforward.go: client-go FallbackExecutor/FallbackDialer on httpstream.IsUpgradeFailure or IsHTTPSProxyError';

export const KUBECTL_CLIENTS = [
  { id: '1.29', label: '≤1.29', speaks: 'SPDY only', source: `${KEP}: WebSockets alpha in 1.29, opt-in only` },
  {
    id: '1.30',
    label: '1.30',
    speaks: 'exec WebSocket first with fallback; port-forward SPDY',
    source: `${KEP}: exec beta (on by default) in 1.30, port-forward in 1.31; ${FALLBACK_SOURCE}; the https-proxy fallback from 1.30.4 (kubernetes#126231)`,
  },
  {
    id: '1.31-1.37',
    label: '1.31–1.37',
    speaks: 'WebSocket first, falls back to SPDY only when the upgrade is refused',
    source: `${KEP}: port-forward beta in 1.31; ${FALLBACK_SOURCE}`,
  },
  {
    id: '1.38',
    label: '1.38 (GA)',
    speaks:
      'as the versions before it on the wire (the fallback stays), but KUBECTL_*_WEBSOCKETS are ignored and the server gates locked on: SPDY can no longer be forced',
    source: `${KEP}, "GA" graduation criteria (env variables and gates locked on and deprecated; no criterion removes the fallback, and its version-skew section relies on it); GA PR kubernetes/enhancements#6364, milestone v1.38`,
  },
  {
    id: 'websocket-only',
    label: 'WS-only',
    speaks:
      'WebSocket only, no fallback: SDK clients and browser terminals (no pings; port-forward over the kubelet’s legacy protocol: read from the keepalive `sdk` sessions) and tools on client-go ≥ 0.36 (kubectl’s WebSocket path without its fallback)',
    source: webSocketOnlySource(),
  },
] as const;

export type KubectlClient = (typeof KUBECTL_CLIENTS)[number]['id'];
/** The client most users run today (kubectl's supported versions in December 2026). */
export const TODAYS_KUBECTL: KubectlClient = '1.31-1.37';
/** Its versions as every text names them (alarm descriptions, rules, help, diagnoses): when 1.38 ships, one edit. */
export const TODAYS_KUBECTL_LABEL: string = KUBECTL_CLIENTS.find((c) => c.id === TODAYS_KUBECTL)!.label;

export type KubectlOutcome = 'works' | 'works-via-fallback' | 'breaks' | 'unknown';

export interface KubectlExperience {
  readonly client: KubectlClient;
  readonly outcome: KubectlOutcome;
  /** Why, in plain words, with what was measured. */
  readonly reason: string;
  /** Where the client's behaviour comes from (kubectl's code, the KEP's text, the issues that show it). */
  readonly source: string;
}
