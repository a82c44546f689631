/** What the emulator records of every upgrade it sees: who asked for what, with which credential (never its value). */
import { createHash } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { TLSSocket } from 'node:tls';
import type { UpgradeRecord } from './options.js';

/** Where an EKS token was presigned for (the STS host and the credential scope's region): not a secret. */
function eksTokenScope(token: string): { stsHost?: string; region?: string } {
  try {
    const url = new URL(Buffer.from(token, 'base64url').toString('utf8'));
    const scope = url.searchParams.get('X-Amz-Credential')?.split('/');
    return { stsHost: url.host, region: scope?.[2] };
  } catch {
    return {};
  }
}

export function upgradeRecord(req: IncomingMessage, url: URL, seq: number, clientCertAuth: boolean): UpgradeRecord {
  const m = /^\/api\/v1\/namespaces\/([^/]+)\/pods\/([^/]+)\/(exec|attach|portforward)$/.exec(url.pathname);
  const isWs = /websocket/i.test(String(req.headers.upgrade ?? ''));
  const offered = isWs
    ? String(req.headers['sec-websocket-protocol'] ?? '')
        .split(',')
        .map((s) => s.trim())
        .filter(Boolean)
    : (req.headersDistinct['x-stream-protocol-version'] ?? [])
        .flatMap((v) => v.split(','))
        .map((s) => s.trim())
        .filter(Boolean);
  const headers = { ...req.headers };
  delete headers.authorization;
  const auth = String(req.headers.authorization ?? '');
  const credential: UpgradeRecord['credential'] = auth.startsWith('Bearer k8s-aws-v1.')
    ? {
        kind: 'eks-token',
        fingerprint: createHash('sha256').update(auth).digest('hex').slice(0, 12),
        ...eksTokenScope(auth.slice('Bearer k8s-aws-v1.'.length)),
      }
    : auth.startsWith('Bearer ')
      ? { kind: 'bearer', fingerprint: createHash('sha256').update(auth).digest('hex').slice(0, 12) }
      : auth.startsWith('Basic ')
        ? { kind: 'basic' }
        : (req.socket as TLSSocket).authorized && clientCertAuth
          ? { kind: 'client-cert' }
          : { kind: 'none' };
  return {
    seq,
    method: req.method ?? '',
    path: url.pathname,
    query: url.search.replace(/^\?/, ''),
    operation: (m?.[3] as UpgradeRecord['operation']) ?? 'other',
    transport: isWs ? 'websocket' : 'spdy',
    offered,
    headers,
    rawHeaderNames: req.rawHeaders.filter((_, i) => i % 2 === 0),
    status: 0,
    credential,
    pingsReceived: 0,
    streams: [],
  };
}
