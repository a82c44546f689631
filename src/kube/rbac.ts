/**
 * RBAC preflight: SelfSubjectAccessReview for get and create on pods/exec,
 * pods/portforward and pods/attach in the target namespace. WebSocket
 * upgrades are GET ("get"; from 1.35 also "create"), SPDY upgrades POST ("create").
 */
import { errorMessage } from '../errors.js';
import type { RestClient } from './rest.js';

/** The streaming subresources and the verbs their upgrades are authorised as. */
export const STREAMING_SUBRESOURCES = ['exec', 'portforward', 'attach'] as const;
export const UPGRADE_VERBS = ['get', 'create'] as const;
export type Verb = (typeof UPGRADE_VERBS)[number];
export type Subresource = (typeof STREAMING_SUBRESOURCES)[number];

export interface AccessCheck {
  readonly subresource: Subresource;
  readonly verb: Verb;
  /** undefined when the review itself failed. */
  readonly allowed: boolean | undefined;
  readonly reason?: string;
}

export async function rbacPreflight(rest: RestClient, namespace: string, pod?: string): Promise<AccessCheck[]> {
  const checks: Array<[Subresource, Verb]> = [];
  for (const sub of STREAMING_SUBRESOURCES) for (const verb of UPGRADE_VERBS) checks.push([sub, verb]);
  return Promise.all(
    checks.map(async ([subresource, verb]): Promise<AccessCheck> => {
      try {
        const r = await rest.request('POST', '/apis/authorization.k8s.io/v1/selfsubjectaccessreviews', {
          apiVersion: 'authorization.k8s.io/v1',
          kind: 'SelfSubjectAccessReview',
          spec: { resourceAttributes: { namespace, verb, resource: 'pods', subresource, ...(pod ? { name: pod } : {}) } },
        });
        const status = (r.body as { status?: { allowed?: boolean; reason?: string } } | undefined)?.status;
        if (r.status !== 201 && r.status !== 200) return { subresource, verb, allowed: undefined, reason: `SelfSubjectAccessReview answered ${r.status}` };
        return { subresource, verb, allowed: status?.allowed === true, reason: status?.reason };
      } catch (err) {
        return { subresource, verb, allowed: undefined, reason: errorMessage(err) };
      }
    }),
  );
}
