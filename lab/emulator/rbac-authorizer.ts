/**
 * RBAC for service-account callers, evaluated over the Roles, ClusterRoles and bindings `kubectl apply` stored,
 * as the API server's RBAC authorizer does (kubernetes plugin/pkg/auth/authorizer/rbac/rbac.go: a binding
 * whose subjects include the caller grants its role's rules; a rule allows when its verbs, apiGroups,
 * resources ("pods/exec" names a subresource; "*" anything) and resourceNames match; non-resource URLs by
 * path). Request attributes come from the path as the API server's RequestInfoFactory derives them
 * (k8s.io/apiserver pkg/endpoints/request/requestinfo.go). So the runner manifest's RBAC is tested by what
 * it lets the runner's own service account do, not by reading it.
 */
import type { ObjectStore } from './object-store.js';

export interface ServiceAccountRef {
  readonly namespace: string;
  readonly name: string;
}

/** What a request asks to do, as an authorizer sees it. */
export type RequestAttributes =
  | {
      readonly resourceRequest: true;
      readonly verb: string;
      readonly apiGroup: string;
      readonly resource: string;
      readonly subresource?: string;
      readonly namespace?: string;
      readonly name?: string;
    }
  | { readonly resourceRequest: false; readonly verb: string; readonly path: string };

const NAMESPACE_SUBRESOURCES = new Set(['status', 'finalize']);
const VERBS: Readonly<Record<string, string>> = { POST: 'create', PUT: 'update', PATCH: 'patch', DELETE: 'delete' };

/** The request's attributes from its method and path (RequestInfoFactory, simplified to the paths the emulator serves). */
export function requestAttributes(method: string, path: string, query: URLSearchParams): RequestAttributes {
  const m = /^\/(?:api\/(v1)|apis\/([^/]+)\/([^/]+))(\/.*)?$/.exec(path);
  // Non-resource requests (/version, /api, /openapi/v3…) take the lower-cased method as their verb.
  if (!m?.[4]) return { resourceRequest: false, verb: method === 'HEAD' ? 'get' : method.toLowerCase(), path };
  const apiGroup = m[2] ?? '';
  const all = m[4].slice(1).split('/');
  // RequestInfoFactory: after "namespaces/NAME" the namespace is NAME, also for the Namespace itself
  // (/api/v1/namespaces/NAME) and its subresources (status, finalize); otherwise the rest names a resource in it.
  let parts = all;
  let namespace: string | undefined;
  if (all[0] === 'namespaces' && all.length > 1) {
    namespace = all[1];
    if (all.length > 2 && !NAMESPACE_SUBRESOURCES.has(all[2]!)) parts = all.slice(2);
  }
  const [resource = '', name, subresource] = parts;
  let verb = VERBS[method] ?? 'get';
  if (method === 'GET' || method === 'HEAD') verb = query.get('watch') === 'true' ? 'watch' : name === undefined ? 'list' : 'get';
  if (method === 'DELETE' && name === undefined) verb = 'deletecollection';
  return { resourceRequest: true, verb, apiGroup, resource, subresource, namespace, name };
}

type Rule = { verbs?: string[]; apiGroups?: string[]; resources?: string[]; resourceNames?: string[]; nonResourceURLs?: string[] };
type Subject = { kind?: string; name?: string; namespace?: string; apiGroup?: string };
type Binding = { metadata?: { namespace?: string }; subjects?: Subject[]; roleRef?: { kind?: string; name?: string } };
type RoleObj = { metadata?: { name?: string; namespace?: string }; rules?: Rule[] };

const has = (list: readonly string[] | undefined, v: string) => !!list && (list.includes('*') || list.includes(v));

/** rbac.go's appliesTo: the binding names this service account, one of its groups, or its user name. */
function bindsServiceAccount(b: Binding, sa: ServiceAccountRef): boolean {
  const user = `system:serviceaccount:${sa.namespace}:${sa.name}`;
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
  const user = `system:serviceaccount:${sa.namespace}:${sa.name}`;
  if (!a.resourceRequest) return `forbidden: User "${user}" cannot ${a.verb} path "${a.path}"`;
  const resource = a.subresource ? `${a.resource}/${a.subresource}` : a.resource;
  const what = `${a.apiGroup ? `${a.resource}.${a.apiGroup}` : a.resource}${a.name ? ` "${a.name}"` : ''}`;
  const scope = a.namespace ? `in the namespace "${a.namespace}"` : 'at the cluster scope';
  return `${what} is forbidden: User "${user}" cannot ${a.verb} resource "${resource}" in API group "${a.apiGroup}" ${scope}`;
}
