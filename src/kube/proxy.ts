/**
 * Which forward proxy an upgrade goes through, as kubectl decides it: the
 * kubeconfig's proxy-url wins; else HTTPS_PROXY / HTTP_PROXY with NO_PROXY
 * (Go's httpproxy rules). Loopback destinations are never proxied from the
 * environment (Go's rule, seen live with kubectl on 127.0.0.1).
 */
import net from 'node:net';
import { probeError } from '../errors.js';

function envValue(env: NodeJS.ProcessEnv, name: string): string | undefined {
  return env[name] ?? env[name.toLowerCase()];
}

function isLoopback(host: string): boolean {
  const h = host.replace(/^\[|\]$/g, '').toLowerCase();
  return h === 'localhost' || h.endsWith('.localhost') || h === '::1' || (net.isIPv4(h) && h.startsWith('127.'));
}

function ipv4ToInt(ip: string): number {
  return ip.split('.').reduce((a, o) => (a << 8) + Number(o), 0) >>> 0;
}

/** Go httpproxy NO_PROXY: "*", host suffixes ("example.com", ".example.com"), IPs, CIDRs, optional :port. */
export function noProxyMatches(noProxy: string, host: string, port: number): boolean {
  const h = host.replace(/^\[|\]$/g, '').toLowerCase();
  for (const raw of noProxy
    .split(',')
    .map((s) => s.trim().toLowerCase())
    .filter(Boolean)) {
    if (raw === '*') return true;
    const cidr = /^([\d.]+)\/(\d+)$/.exec(raw);
    if (cidr && net.isIPv4(h)) {
      const bits = Number(cidr[2]);
      const mask = bits === 0 ? 0 : (~0 << (32 - bits)) >>> 0;
      if ((ipv4ToInt(h) & mask) === (ipv4ToInt(cidr[1]!) & mask)) return true;
      continue;
    }
    let entry = raw;
    let entryPort: number | undefined;
    const m = /^(.*):(\d+)$/.exec(raw);
    if (m && !net.isIPv6(raw)) {
      entry = m[1]!;
      entryPort = Number(m[2]);
    }
    if (entryPort !== undefined && entryPort !== port) continue;
    if (net.isIP(entry)) {
      if (entry === h) return true;
      continue;
    }
    const suffix = entry.startsWith('.') ? entry : `.${entry}`;
    if (h === entry.replace(/^\./, '') || h.endsWith(suffix)) return true;
  }
  return false;
}

export function chooseProxy(server: URL, kubeconfigProxy: URL | undefined, env: NodeJS.ProcessEnv): URL | undefined {
  if (kubeconfigProxy) return kubeconfigProxy;
  if (isLoopback(server.hostname)) return undefined;
  const value = server.protocol === 'https:' ? envValue(env, 'HTTPS_PROXY') : envValue(env, 'HTTP_PROXY');
  if (!value) return undefined;
  const port = Number(server.port || (server.protocol === 'https:' ? 443 : 80));
  const noProxy = envValue(env, 'NO_PROXY');
  if (noProxy && noProxyMatches(noProxy, server.hostname, port)) return undefined;
  try {
    // Go accepts "host:port" without a scheme and treats it as http.
    return new URL(/^[a-z][a-z0-9+.-]*:\/\//i.test(value) ? value : `http://${value}`);
  } catch {
    throw probeError('CONFIG_INVALID', `${server.protocol === 'https:' ? 'HTTPS_PROXY' : 'HTTP_PROXY'} is not a URL`, { field: 'HTTPS_PROXY' });
  }
}
