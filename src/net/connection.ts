/**
 * Everything needed to reach one API server the way kubectl does: its URL,
 * TLS settings, forward proxy, credential headers and time limits. Shared by
 * the upgrade handshakes (streaming/) and plain REST calls (kube/rest.ts), so
 * both always take the same path.
 */
import type { Dialer, ProxySettings, TlsSettings } from './dial.js';
import type { WireLog } from './wire-log.js';

export interface ConnectionConfig {
  /** API server base URL (http: or https:), possibly with a path prefix. */
  readonly server: URL;
  readonly tls?: TlsSettings;
  readonly proxy?: ProxySettings;
  /** Extra request headers, e.g. Authorization. Values are secrets: never logged or echoed. */
  readonly headers?: Readonly<Record<string, string>>;
  readonly userAgent?: string;
  /** How connections are opened; the real dialer (DNS, TCP, proxy, TLS) unless a test injects one. */
  readonly dialer?: Dialer;
  /** DNS + TCP + proxy + TLS, in ms (DEFAULT_DIAL_TIMEOUT_MS). */
  readonly dialTimeoutMs?: number;
  /** Upgrade request written → 101, in ms (DEFAULT_UPGRADE_TIMEOUT_MS). */
  readonly upgradeTimeoutMs?: number;
  /** Where the requests, replies and SPDY control frames are reported (`-v`); nothing when absent. */
  readonly wireLog?: WireLog;
}

/** kubectl has no dial limit of its own (the OS's, ~2 min); a probe needs an answer sooner. */
export const DEFAULT_DIAL_TIMEOUT_MS = 10_000;
export const DEFAULT_UPGRADE_TIMEOUT_MS = 15_000;

/** The request path for `path` below the server URL's own path prefix (a kubeconfig may say https://host/k8s/clusters/c-1). */
export function requestPath(server: URL, path: string): string {
  return server.pathname.replace(/\/$/, '') + path;
}
