/**
 * The Pod Security Standards' "restricted" profile (kubernetes.io/docs/concepts/security/pod-security-standards),
 * as every container the manifests ship sets it: the target pods (manifest-command.ts) and the in-cluster runner
 * (runner-manifest.ts). The namespace the manifest makes enforces it.
 */

/** A container's securityContext under "restricted", running as `runAsUser` (non-zero). */
export function restrictedContainer(runAsUser: number) {
  return {
    allowPrivilegeEscalation: false,
    readOnlyRootFilesystem: true,
    runAsNonRoot: true,
    runAsUser,
    capabilities: { drop: ['ALL'] },
    seccompProfile: { type: 'RuntimeDefault' },
  };
}

/** The pod-level part of "restricted". */
export const RESTRICTED_POD = { runAsNonRoot: true, seccompProfile: { type: 'RuntimeDefault' } } as const;
