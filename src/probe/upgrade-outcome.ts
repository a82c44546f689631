/**
 * How a failed upgrade is reported (status, who answered: the API server or a hop, with its Server, Via and page;
 * the phases reached; a refused certificate), and the redactor that keeps our own credentials out of what a peer
 * sent back. Used by each session (session.ts).
 */
import { errorCodeOf, errorMessage, isProbeError } from '../errors.js';
import { SecretRedactor } from '../kube/secrets.js';
import type { ClusterTarget, UpgradeOutcome } from './types.js';

/**
 * Removes our own credentials from text a peer sent back (a hop may reflect request headers): the one redactor
 * (kube/secrets.ts), with every header value we send registered, whole and without its scheme.
 */
export function sessionRedactor(target: ClusterTarget): (text: string) => string {
  const redactor = new SecretRedactor();
  for (const v of Object.values(target.connection.headers ?? {})) {
    redactor.add(v);
    redactor.add(v.split(' ').slice(1).join(' '));
  }
  return (text) => redactor.redact(text);
}

/** A failed upgrade as the result reports it: status, who answered, phases reached. */
export function upgradeFailure(err: unknown, scrub: (t: string) => string = (t) => t): UpgradeOutcome {
  if (isProbeError(err, 'UPGRADE_REJECTED')) {
    const c = err.context;
    return {
      ok: false,
      status: c.status,
      handshakeMs: null,
      phases: c.phases,
      error: scrub(err.message),
      errorCode: err.code,
      kubernetesStatus: c.kubeStatus !== undefined,
      statusReason: c.kubeStatus?.reason,
      bodyPrefix: scrub(c.bodyPrefix).slice(0, 200),
      ...(c.server ? { server: c.server } : {}),
      ...(c.via ? { via: c.via } : {}),
    };
  }
  if (isProbeError(err, 'DIAL_PROXY') && err.context.status !== undefined) {
    // The forward proxy's own refusal: who it is and what it said are the clues to its rule.
    const c = err.context;
    return {
      ok: false,
      status: null,
      handshakeMs: null,
      phases: (c as { phases?: UpgradeOutcome['phases'] }).phases ?? {},
      error: scrub(errorMessage(err)),
      errorCode: err.code,
      kubernetesStatus: null,
      ...(c.bodyPrefix ? { bodyPrefix: scrub(c.bodyPrefix).slice(0, 200) } : {}),
      ...(c.server ? { server: c.server } : {}),
      ...(c.via ? { via: c.via } : {}),
    };
  }
  const context = isProbeError(err) ? (err.context as { phases?: UpgradeOutcome['phases'] }) : {};
  const tls = isProbeError(err, 'DIAL_TLS') && err.context.checkedName && err.context.certificateNames ? err.context : undefined;
  return {
    ok: false,
    status: null,
    handshakeMs: null,
    phases: context.phases ?? {},
    error: scrub(errorMessage(err)),
    errorCode: errorCodeOf(err, 'UPGRADE_FAILED'),
    kubernetesStatus: null,
    ...(tls
      ? {
          tls: {
            peer: tls.peer ?? 'server',
            checkedName: tls.checkedName!,
            certificateNames: tls.certificateNames,
            issuer: tls.issuer,
            untrusted: tls.untrusted === true,
          },
        }
      : {}),
  };
}
