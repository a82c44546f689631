/** Kubernetes Status bodies as the API server writes them. */
import type { ServerResponse } from 'node:http';

export function statusBody(code: number, reason: string, message: string, details?: Readonly<Record<string, unknown>>): string {
  return JSON.stringify({ kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message, reason, ...(details ? { details } : {}), code });
}

const REASONS: Readonly<Record<number, string>> = {
  400: 'BadRequest',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'NotFound',
  405: 'MethodNotAllowed',
  500: 'InternalError',
  503: 'ServiceUnavailable',
};

export function reasonFor(code: number): string {
  return REASONS[code] ?? 'Unknown';
}

export function sendJson(res: ServerResponse, code: number, body: unknown): void {
  const text = typeof body === 'string' ? body : JSON.stringify(body);
  res.writeHead(code, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(text) });
  res.end(text);
}

export function sendStatus(res: ServerResponse, code: number, message: string): void {
  sendJson(res, code, statusBody(code, reasonFor(code), message));
}

/** The raw HTTP reply for an upgrade we refuse, written straight to the socket. */
export function rawStatusReply(
  code: number,
  message: string,
  extraHeaders: Readonly<Record<string, string>> = {},
  details?: Readonly<Record<string, unknown>>,
): string {
  const body = statusBody(code, reasonFor(code), message, details);
  const head = [
    `HTTP/1.1 ${code} ${reasonFor(code).replace(/([a-z])([A-Z])/g, '$1 $2')}`,
    'Content-Type: application/json',
    `Content-Length: ${Buffer.byteLength(body)}`,
    'Connection: close',
  ];
  for (const [k, v] of Object.entries(extraHeaders)) head.push(`${k}: ${v}`);
  return `${head.join('\r\n')}\r\n\r\n${body}`;
}
