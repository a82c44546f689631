/**
 * A Kubernetes metav1.Status, as far as the probe reads it: the API server
 * answers every refusal with one, so a refusal whose body is a Status came
 * from the API server and one without came from a hop.
 */
export interface KubeStatus {
  readonly status?: string;
  readonly message?: string;
  readonly reason?: string;
  readonly code?: number;
  readonly details?: {
    readonly name?: string;
    readonly kind?: string;
    readonly causes?: readonly { readonly reason?: string; readonly message?: string }[];
  };
}

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
