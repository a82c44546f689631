/**
 * The emulator's one RBAC model, for every caller: a service account is authorized by the Roles, ClusterRoles and
 * bindings `kubectl apply` stored; the kubeconfig's own user (LAB_USER) by the objects its `rbac` option stands for
 * (audit-endpoints.ts defaultRbacObjects). Both are evaluated as the API server's RBAC authorizer does (kubernetes plugin/pkg/auth/authorizer/rbac/rbac.go: a binding
 * whose subjects include the caller grants its role's rules; a rule allows when its verbs, apiGroups,
 * resources ("pods/exec" names a subresource; "*" anything) and resourceNames match; non-resource URLs by
 * path), over request attributes as request-info.ts derives them. So the runner manifest's RBAC is tested by
 * what it lets the runner's own service account do, not by reading it.
 */
import type { RequestAttributes } from './request-info.js';

export interface ServiceAccountRef {
  readonly namespace: string;
  readonly name: string;
}

/** Who is asking, as the authorizer sees it: a user name and its groups. */
export interface Caller {
  readonly user: string;
  readonly groups: readonly string[];
  /** Set for a service account (a binding may name it by kind ServiceAccount). */
  readonly serviceAccount?: ServiceAccountRef;
}

/** The kubeconfig's user (its token or client certificate): bound through the group `lab-users`. */
export const LAB_USER: Caller = { user: 'lab-user', groups: ['lab-users', 'system:authenticated'] };

/** A service account as the API server names it (serviceaccount token authenticator). */
export function serviceAccountCaller(sa: ServiceAccountRef): Caller {
  return { user: userOf(sa), groups: ['system:serviceaccounts', `system:serviceaccounts:${sa.namespace}`, 'system:authenticated'], serviceAccount: sa };
}

/** Where RBAC objects are read from: the object store `kubectl apply` fills, or a fixed set of them. */
export interface RbacSource {
  list(kind: 'Role' | 'ClusterRole' | 'RoleBinding' | 'ClusterRoleBinding'): readonly unknown[];
}

/** A fixed set of RBAC objects as a source. */
export function rbacSource(o: {
  clusterRoles?: readonly unknown[];
  roles?: readonly unknown[];
  clusterRoleBindings?: readonly unknown[];
  roleBindings?: readonly unknown[];
}): RbacSource {
  const lists = { ClusterRole: o.clusterRoles, Role: o.roles, ClusterRoleBinding: o.clusterRoleBindings, RoleBinding: o.roleBindings };
  return { list: (kind) => [...(lists[kind] ?? [])] };
}

type Rule = { verbs?: string[]; apiGroups?: string[]; resources?: string[]; resourceNames?: string[]; nonResourceURLs?: string[] };
type Subject = { kind?: string; name?: string; namespace?: string; apiGroup?: string };
type Binding = { metadata?: { namespace?: string }; subjects?: Subject[]; roleRef?: { kind?: string; name?: string } };
type RoleObj = { metadata?: { name?: string; namespace?: string }; rules?: Rule[] };

/** The user name the API server gives a service account's token. */
const userOf = (sa: ServiceAccountRef): string => `system:serviceaccount:${sa.namespace}:${sa.name}`;

const has = (list: readonly string[] | undefined, v: string) => !!list && (list.includes('*') || list.includes(v));

/** rbac.go's appliesTo: the binding names this service account, one of the caller's groups, or its user name. */
function binds(b: Binding, c: Caller): boolean {
  const sa = c.serviceAccount;
  return (b.subjects ?? []).some(
    (s) =>
      (sa !== undefined && s.kind === 'ServiceAccount' && s.name === sa.name && (s.namespace ?? b.metadata?.namespace) === sa.namespace) ||
      (s.kind === 'User' && s.name === c.user) ||
      (s.kind === 'Group' && s.name !== undefined && c.groups.includes(s.name)),
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

/** Whether the RBAC objects (and the bootstrap policy) let the caller do it. */
export function rbacAllows(store: RbacSource, caller: Caller, a: RequestAttributes): boolean {
  if (AUTHENTICATED_RULES.some((r) => ruleAllows(r, a))) return true;
  const roles = (kind: 'Role' | 'ClusterRole', name: string | undefined, namespace?: string) =>
    (store.list(kind) as RoleObj[]).find((r) => r.metadata?.name === name && (kind === 'ClusterRole' || r.metadata?.namespace === namespace));
  const rulesOf = (b: Binding, namespace?: string) => {
    const role = b.roleRef?.kind === 'Role' ? roles('Role', b.roleRef.name, namespace) : roles('ClusterRole', b.roleRef?.name);
    return role?.rules ?? [];
  };
  for (const b of store.list('ClusterRoleBinding') as Binding[]) if (binds(b, caller) && rulesOf(b).some((r) => ruleAllows(r, a))) return true;
  const ns = a.resourceRequest ? a.namespace : undefined;
  if (ns === undefined) return false;
  for (const b of store.list('RoleBinding') as Binding[]) {
    if (b.metadata?.namespace === ns && binds(b, caller) && rulesOf(b, ns).some((r) => ruleAllows(r, a))) return true;
  }
  return false;
}

/** The API server's 403 message for a denied request. */
export function forbiddenMessage(caller: Caller, a: RequestAttributes): string {
  const user = caller.user;
  if (!a.resourceRequest) return `forbidden: User "${user}" cannot ${a.verb} path "${a.path}"`;
  const resource = a.subresource ? `${a.resource}/${a.subresource}` : a.resource;
  const what = `${a.apiGroup ? `${a.resource}.${a.apiGroup}` : a.resource}${a.name ? ` "${a.name}"` : ''}`;
  const scope = a.namespace ? `in the namespace "${a.namespace}"` : 'at the cluster scope';
  return `${what} is forbidden: User "${user}" cannot ${a.verb} resource "${resource}" in API group "${a.apiGroup}" ${scope}`;
}
