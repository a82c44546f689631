/**
 * RBAC for service-account callers, evaluated over the Roles, ClusterRoles and bindings `kubectl apply` stored,
 * as the API server's RBAC authorizer does (kubernetes plugin/pkg/auth/authorizer/rbac/rbac.go: a binding
 * whose subjects include the caller grants its role's rules; a rule allows when its verbs, apiGroups,
 * resources ("pods/exec" names a subresource; "*" anything) and resourceNames match; non-resource URLs by
 * path), over request attributes as request-info.ts derives them. So the runner manifest's RBAC is tested by
 * what it lets the runner's own service account do, not by reading it.
 */
import type { ObjectStore } from './object-store.js';
import type { RequestAttributes } from './request-info.js';

export interface ServiceAccountRef {
  readonly namespace: string;
  readonly name: string;
}

type Rule = { verbs?: string[]; apiGroups?: string[]; resources?: string[]; resourceNames?: string[]; nonResourceURLs?: string[] };
type Subject = { kind?: string; name?: string; namespace?: string; apiGroup?: string };
type Binding = { metadata?: { namespace?: string }; subjects?: Subject[]; roleRef?: { kind?: string; name?: string } };
type RoleObj = { metadata?: { name?: string; namespace?: string }; rules?: Rule[] };

/** The user name the API server gives a service account's token. */
const userOf = (sa: ServiceAccountRef): string => `system:serviceaccount:${sa.namespace}:${sa.name}`;

const has = (list: readonly string[] | undefined, v: string) => !!list && (list.includes('*') || list.includes(v));

/** rbac.go's appliesTo: the binding names this service account, one of its groups, or its user name. */
function bindsServiceAccount(b: Binding, sa: ServiceAccountRef): boolean {
  const user = userOf(sa);
  const groups = ['system:serviceaccounts', `system:serviceaccounts:${sa.namespace}`, 'system:authenticated'];
  return (b.subjects ?? []).some(
    (s) =>
      (s.kind === 'ServiceAccount' && s.name === sa.name && (s.namespace ?? b.metadata?.namespace) === sa.namespace) ||
      (s.kind === 'User' && s.name === user) ||
      (s.kind === 'Group' && s.name !== undefined && groups.includes(s.name)),
  );
}

function ruleAllows(rule: Rule, a: RequestAttributes): boolean {
  if (!has(rule.verbs, a.verb)) return false;
  if (!a.resourceRequest) return (rule.nonResourceURLs ?? []).some((u) => u === a.path || u === '*' || (u.endsWith('*') && a.path.startsWith(u.slice(0, -1))));
  const resource = a.subresource ? `${a.resource}/${a.subresource}` : a.resource;
  const resources = rule.resources ?? [];
  const resourceMatches = resources.includes('*') || resources.includes(resource) || (a.subresource !== undefined && resources.includes(`*/${a.subresource}`));
  if (!has(rule.apiGroups, a.apiGroup) || !resourceMatches) return false;
  return !rule.resourceNames?.length || (a.name !== undefined && rule.resourceNames.includes(a.name));
}

/**
 * What every authenticated caller may do, from the bootstrap policy's ClusterRoles bound to
 * system:authenticated (plugin/pkg/auth/authorizer/rbac/bootstrappolicy/policy.go): system:discovery,
 * system:public-info-viewer and system:basic-user (self reviews).
 */
const AUTHENTICATED_RULES: readonly Rule[] = [
  {
    verbs: ['get'],
    nonResourceURLs: ['/api', '/api/*', '/apis', '/apis/*', '/openapi', '/openapi/*', '/version', '/version/', '/healthz', '/livez', '/readyz'],
  },
  {
    verbs: ['create'],
    apiGroups: ['authorization.k8s.io'],
    resources: ['selfsubjectaccessreviews', 'selfsubjectrulesreviews'],
  },
];

/** Whether the stored RBAC (and the bootstrap policy) lets the service account do it. */
export function rbacAllows(store: ObjectStore, sa: ServiceAccountRef, a: RequestAttributes): boolean {
  if (AUTHENTICATED_RULES.some((r) => ruleAllows(r, a))) return true;
  const roles = (kind: 'Role' | 'ClusterRole', name: string | undefined, namespace?: string) =>
    (store.list(kind) as RoleObj[]).find((r) => r.metadata?.name === name && (kind === 'ClusterRole' || r.metadata?.namespace === namespace));
  const rulesOf = (b: Binding, namespace?: string) => {
    const role = b.roleRef?.kind === 'Role' ? roles('Role', b.roleRef.name, namespace) : roles('ClusterRole', b.roleRef?.name);
    return role?.rules ?? [];
  };
  for (const b of store.list('ClusterRoleBinding') as Binding[]) if (bindsServiceAccount(b, sa) && rulesOf(b).some((r) => ruleAllows(r, a))) return true;
  const ns = a.resourceRequest ? a.namespace : undefined;
  if (ns === undefined) return false;
  for (const b of store.list('RoleBinding') as Binding[]) {
    if (b.metadata?.namespace === ns && bindsServiceAccount(b, sa) && rulesOf(b, ns).some((r) => ruleAllows(r, a))) return true;
  }
  return false;
}

/** The API server's 403 message for a denied request. */
export function forbiddenMessage(sa: ServiceAccountRef, a: RequestAttributes): string {
  const user = userOf(sa);
  if (!a.resourceRequest) return `forbidden: User "${user}" cannot ${a.verb} path "${a.path}"`;
  const resource = a.subresource ? `${a.resource}/${a.subresource}` : a.resource;
  const what = `${a.apiGroup ? `${a.resource}.${a.apiGroup}` : a.resource}${a.name ? ` "${a.name}"` : ''}`;
  const scope = a.namespace ? `in the namespace "${a.namespace}"` : 'at the cluster scope';
  return `${what} is forbidden: User "${user}" cannot ${a.verb} resource "${resource}" in API group "${a.apiGroup}" ${scope}`;
}
