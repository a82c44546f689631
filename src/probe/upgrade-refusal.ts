/**
 * How an upgrade was refused, read from its reply: the rules the diagnoses (diagnosis.ts), the verdict's extra
 * findings (verdicts.ts) and the plain-GET follow-up (method-probe.ts) share, each written once here.
 */
import type { UpgradeOutcome } from './types.js';

/** The statuses a hop answers when a rule (a WAF, an egress ACL, a proxy policy) refuses the request itself, not its upgrade. */
export const HOP_RULE_STATUSES: readonly number[] = [403, 405];

type Reply = Pick<UpgradeOutcome, 'ok' | 'errorCode' | 'status' | 'kubernetesStatus' | 'error'>;

/** Refused by something that is not the API server: its reply is no Kubernetes Status. */
export const refusedByHop = (u: Reply): boolean => !u.ok && u.errorCode === 'UPGRADE_REJECTED' && !u.kubernetesStatus;

/** Refused by a hop's rule (403 or 405 from a hop). */
export const refusedByHopRule = (u: Reply | undefined): boolean => !!u && refusedByHop(u) && HOP_RULE_STATUSES.includes(u.status ?? 0);

/**
 * The API server got the request without its upgrade headers (a hop dropped `Connection: Upgrade` / `Upgrade`):
 * it answers a Kubernetes Status 400, "Upgrade request required" (apimachinery's UpgradeAwareHandler, which
 * proxies exec and port-forward with UpgradeRequired) or "unable to upgrade: missing upgrade headers in request"
 * (its httpstream/spdy upgrader).
 */
export const upgradeStripped = (u: Reply): boolean =>
  !u.ok &&
  u.errorCode === 'UPGRADE_REJECTED' &&
  !!u.kubernetesStatus &&
  u.status === 400 &&
  /upgrade request required|missing upgrade headers/i.test(u.error ?? '');
