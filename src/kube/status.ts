import type { KubeStatus } from '../wire-types.js';

export type { KubeStatus } from '../wire-types.js';

/** The body as a Status, or undefined when it is not one (not JSON, or not kind Status). */
export function parseKubeStatus(body: Buffer | string, contentType: string | undefined): KubeStatus | undefined {
  if (contentType && !/json/i.test(contentType)) return undefined;
  try {
    const v = JSON.parse(typeof body === 'string' ? body : body.toString('utf8')) as Record<string, unknown>;
    if (v && typeof v === 'object' && v.kind === 'Status' && (v.status === 'Failure' || v.status === 'Success')) return v as KubeStatus;
  } catch {
    /* not JSON: not the API server */
  }
  return undefined;
}
