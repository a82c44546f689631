/**
 * Shapes from the wire that the shared base needs to describe errors (errors.ts), defined here so that the base
 * imports nothing from the layers below it: how long each phase of a dial took, and a Kubernetes metav1.Status as
 * far as the probe reads it. net/dial.ts and kube/status.ts re-export them.
 */

/** How long each phase of a dial took, ms. */
export interface DialPhases {
  dnsMs?: number;
  tcpMs?: number;
  proxyMs?: number;
  tlsMs?: number;
}

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
