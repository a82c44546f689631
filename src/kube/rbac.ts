/**
 * RBAC preflight: SelfSubjectAccessReview for get and create on pods/exec,
 * pods/portforward and pods/attach in the target namespace. WebSocket
 * upgrades are GET ("get"; from 1.35 also "create"), SPDY upgrades POST ("create").
 */
import type { ConnectionConfig } from '../streaming/upgrade.js';
import { restRequest } from './rest.js';

export type Verb = 'get' | 'create';
export type Subresource = 'exec' | 'portforward' | 'attach';

export interface AccessCheck {
  readonly subresource: Subresource;
  readonly verb: Verb;
  /** undefined when the review itself failed. */
  readonly allowed: boolean | undefined;
  readonly reason?: string;
}

export async function rbacPreflight(config: ConnectionConfig, namespace: string, pod?: string): Promise<AccessCheck[]> {
  const checks: Array<[Subresource, Verb]> = [];
  for (const sub of ['exec', 'portforward', 'attach'] as const) for (const verb of ['get', 'create'] as const) checks.push([sub, verb]);
  return Promise.all(
    checks.map(async ([subresource, verb]): Promise<AccessCheck> => {
      try {
        const r = await restRequest(config, 'POST', '/apis/authorization.k8s.io/v1/selfsubjectaccessreviews', {
          apiVersion: 'authorization.k8s.io/v1',
          kind: 'SelfSubjectAccessReview',
          spec: { resourceAttributes: { namespace, verb, resource: 'pods', subresource, ...(pod ? { name: pod } : {}) } },
        });
        const status = (r.body as { status?: { allowed?: boolean; reason?: string } } | undefined)?.status;
        if (r.status !== 201 && r.status !== 200) return { subresource, verb, allowed: undefined, reason: `SelfSubjectAccessReview answered ${r.status}` };
        return { subresource, verb, allowed: status?.allowed === true, reason: status?.reason };
      } catch (err) {
        return { subresource, verb, allowed: undefined, reason: (err as Error).message };
      }
    }),
  );
}
