/**
 * Which roles grant the streaming subresources, and what that means for each
 * transport (apiserver pod/rest/subresources.go and, from 1.35,
 * pod/rest/authorize.go): a SPDY upgrade is a POST, so it needs `create`; a
 * WebSocket upgrade is a GET, so it needs `get`, and from 1.35
 * (AuthorizePodWebsocketUpgradeCreatePermission, beta on) `create` as well.
 *
 * - get and create: works over both, before and after 1.35;
 * - get only: WebSocket works before 1.35 and breaks on a 1.35+ server; SPDY never worked;
 * - create only: SPDY works; WebSocket never did, so kubectl works only by falling back, until GA.
 */
export const STREAMING_RESOURCES = ['pods/exec', 'pods/attach', 'pods/portforward'] as const;

export type GrantShape = 'get-and-create' | 'get-only' | 'create-only';

export interface RoleGrant {
  readonly kind: 'ClusterRole' | 'Role';
  readonly namespace?: string;
  readonly name: string;
  /** Per streaming subresource the role covers, what it grants. */
  readonly grants: Readonly<Partial<Record<(typeof STREAMING_RESOURCES)[number], GrantShape>>>;
  /** Who is bound to it, as "User alice", "Group devs", "ServiceAccount ci/deployer" (namespace of the binding when a Role). */
  readonly subjects: readonly string[];
}

export interface RbacFinding {
  readonly role: string;
  readonly resource: string;
  readonly shape: GrantShape;
  readonly subjects: readonly string[];
  readonly meaning: string;
  readonly fix: string;
}

type K8sObject = {
  metadata?: { name?: string; namespace?: string };
  rules?: { apiGroups?: string[]; resources?: string[]; verbs?: string[] }[];
  roleRef?: { kind?: string; name?: string };
  subjects?: { kind?: string; name?: string; namespace?: string }[];
};

function shapeOf(verbs: ReadonlySet<string>): GrantShape | undefined {
  const get = verbs.has('get') || verbs.has('*');
  const create = verbs.has('create') || verbs.has('*');
  return get && create ? 'get-and-create' : get ? 'get-only' : create ? 'create-only' : undefined;
}

function covers(resources: readonly string[] | undefined, resource: string): boolean {
  return (resources ?? []).some((r) => r === resource || r === '*' || r === 'pods/*' || (r.endsWith('/*') && resource.startsWith(r.slice(0, -1))));
}

/** The streaming grants of each role, with the subjects its bindings name. */
export function roleGrants(objects: {
  clusterRoles: readonly K8sObject[];
  roles: readonly K8sObject[];
  clusterRoleBindings: readonly K8sObject[];
  roleBindings: readonly K8sObject[];
}): RoleGrant[] {
  const subjectText = (s: { kind?: string; name?: string; namespace?: string }) =>
    `${s.kind ?? '?'} ${s.kind === 'ServiceAccount' ? `${s.namespace ?? '?'}/` : ''}${s.name ?? '?'}`;
  const out: RoleGrant[] = [];
  const grantsOf = (role: K8sObject) => {
    const verbsBy = new Map<string, Set<string>>();
    for (const rule of role.rules ?? []) {
      if (!(rule.apiGroups ?? []).some((g) => g === '' || g === '*')) continue;
      for (const r of STREAMING_RESOURCES) {
        if (!covers(rule.resources, r)) continue;
        const set = verbsBy.get(r) ?? new Set<string>();
        for (const v of rule.verbs ?? []) set.add(v);
        verbsBy.set(r, set);
      }
    }
    const grants: Partial<Record<(typeof STREAMING_RESOURCES)[number], GrantShape>> = {};
    for (const [r, verbs] of verbsBy) {
      const shape = shapeOf(verbs);
      if (shape) grants[r as (typeof STREAMING_RESOURCES)[number]] = shape;
    }
    return grants;
  };
  for (const role of objects.clusterRoles) {
    const grants = grantsOf(role);
    if (Object.keys(grants).length === 0) continue;
    const name = role.metadata?.name ?? '?';
    const bound = [...objects.clusterRoleBindings, ...objects.roleBindings].filter((b) => b.roleRef?.kind === 'ClusterRole' && b.roleRef.name === name);
    out.push({ kind: 'ClusterRole', name, grants, subjects: bound.flatMap((b) => (b.subjects ?? []).map(subjectText)) });
  }
  for (const role of objects.roles) {
    const grants = grantsOf(role);
    if (Object.keys(grants).length === 0) continue;
    const name = role.metadata?.name ?? '?';
    const ns = role.metadata?.namespace;
    const bound = objects.roleBindings.filter((b) => b.roleRef?.kind === 'Role' && b.roleRef.name === name && b.metadata?.namespace === ns);
    out.push({ kind: 'Role', namespace: ns, name, grants, subjects: bound.flatMap((b) => (b.subjects ?? []).map(subjectText)) });
  }
  return out;
}

/** What breaks, for whom, and the fix, per role × subresource that is not get-and-create. */
export function rbacFindings(grants: readonly RoleGrant[]): RbacFinding[] {
  return grants.flatMap((g) =>
    Object.entries(g.grants)
      .filter(([, shape]) => shape !== 'get-and-create')
      .map(([resource, shape]) => ({
        role: `${g.kind} ${g.namespace ? `${g.namespace}/` : ''}${g.name}`,
        resource,
        shape: shape!,
        subjects: g.subjects,
        meaning:
          shape === 'get-only'
            ? `WebSocket ${resource} works before 1.35 and is refused (403) on a 1.35+ server; SPDY never worked (it is a POST, which needs create)`
            : `SPDY ${resource} works; WebSocket (a GET) never did, so kubectl works only by falling back to SPDY (kubectl 1.38, KEP-4006 GA, can no longer be forced onto SPDY), and WebSocket-only clients fail`,
        fix: `add ${shape === 'get-only' ? 'create' : 'get'} on ${resource} to ${g.kind} ${g.name}`,
      })),
  );
}
