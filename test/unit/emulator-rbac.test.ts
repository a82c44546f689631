/**
 * The emulator's RBAC stand-in (lab/emulator/rbac-authorizer.ts): request attributes as the API server's
 * RequestInfoFactory derives them (k8s.io/apiserver pkg/endpoints/request/requestinfo.go, whose comments list
 * these paths), and rules as rbac.go's RuleAllows reads them. The end-to-end proof is
 * test/interop/runner-apply.test.ts (the runner under the RBAC kubectl applied).
 */
import { describe, expect, it } from 'vitest';
import { ObjectStore } from '../../lab/emulator/object-store.js';
import { defaultRbacObjects } from '../../lab/emulator/audit-endpoints.js';
import { LAB_USER, rbacAllows, rbacSource, serviceAccountCaller } from '../../lab/emulator/rbac-authorizer.js';
import { requestAttributes } from '../../lab/emulator/request-info.js';

const q = (s = '') => new URLSearchParams(s);

describe('requestAttributes', () => {
  it.each([
    ['GET', '/api/v1/namespaces', '', { verb: 'list', resource: 'namespaces', namespace: undefined, name: undefined }],
    ['GET', '/api/v1/namespaces/foo', '', { verb: 'get', resource: 'namespaces', namespace: 'foo', name: 'foo' }],
    ['PUT', '/api/v1/namespaces/foo/finalize', '', { verb: 'update', resource: 'namespaces', namespace: 'foo', name: 'foo', subresource: 'finalize' }],
    ['GET', '/api/v1/namespaces/foo/pods', 'watch=true', { verb: 'watch', resource: 'pods', namespace: 'foo' }],
    ['POST', '/api/v1/namespaces/foo/pods/p/exec', '', { verb: 'create', resource: 'pods', name: 'p', subresource: 'exec', namespace: 'foo' }],
    ['GET', '/api/v1/namespaces/foo/pods/p/portforward', '', { verb: 'get', resource: 'pods', name: 'p', subresource: 'portforward' }],
    ['DELETE', '/apis/batch/v1/namespaces/foo/cronjobs', '', { verb: 'deletecollection', apiGroup: 'batch', resource: 'cronjobs' }],
    ['GET', '/apis/rbac.authorization.k8s.io/v1/clusterroles/x', '', { verb: 'get', apiGroup: 'rbac.authorization.k8s.io', namespace: undefined, name: 'x' }],
  ])('%s %s %s', (method, path, query, expected) => {
    expect(requestAttributes(method, path, q(query))).toMatchObject({ resourceRequest: true, apiGroup: '', ...expected });
  });

  it('discovery and /version are non-resource requests with the method as verb', () => {
    for (const p of ['/api', '/api/v1', '/apis', '/apis/batch/v1', '/version', '/openapi/v3']) {
      expect(requestAttributes('GET', p, q())).toEqual({ resourceRequest: false, verb: 'get', path: p });
    }
  });
});

describe('rbacAllows', () => {
  const store = new ObjectStore(['ns']);
  const put = (o: { kind: string } & Record<string, unknown>) => store.add(o);
  put({
    kind: 'Role',
    metadata: { name: 'r', namespace: 'ns' },
    rules: [{ apiGroups: [''], resources: ['pods/exec'], resourceNames: ['p'], verbs: ['create'] }],
  });
  put({
    kind: 'RoleBinding',
    metadata: { name: 'b', namespace: 'ns' },
    roleRef: { kind: 'Role', name: 'r' },
    subjects: [{ kind: 'ServiceAccount', name: 'sa' }],
  });
  put({ kind: 'ClusterRole', metadata: { name: 'c' }, rules: [{ apiGroups: ['*'], resources: ['*/status'], verbs: ['get'] }] });
  put({
    kind: 'ClusterRoleBinding',
    metadata: { name: 'cb' },
    roleRef: { kind: 'ClusterRole', name: 'c' },
    subjects: [{ kind: 'Group', name: 'system:serviceaccounts:ns' }],
  });
  const sa = { namespace: 'ns', name: 'sa' };
  const allows = (method: string, path: string, who = sa) => rbacAllows(store, serviceAccountCaller(who), requestAttributes(method, path, q()));

  it('a RoleBinding (subject namespace defaulting to the binding’s) grants its Role’s rule, for the named pod only', () => {
    expect(allows('POST', '/api/v1/namespaces/ns/pods/p/exec')).toBe(true);
    expect(allows('GET', '/api/v1/namespaces/ns/pods/p/exec')).toBe(false); // verb
    expect(allows('POST', '/api/v1/namespaces/ns/pods/q/exec')).toBe(false); // resourceNames
    expect(allows('POST', '/api/v1/namespaces/other/pods/p/exec')).toBe(false); // another namespace
    expect(allows('POST', '/api/v1/namespaces/ns/pods/p/exec', { namespace: 'other', name: 'sa' })).toBe(false); // another account
  });

  it('a ClusterRoleBinding to the namespace’s service-account group; "*/status"; the bootstrap discovery and self-review rules', () => {
    expect(allows('GET', '/apis/apps/v1/namespaces/ns/deployments/d/status')).toBe(true);
    expect(allows('GET', '/apis/apps/v1/namespaces/ns/deployments/d')).toBe(false);
    expect(allows('GET', '/apis/batch/v1')).toBe(true);
    expect(allows('POST', '/apis/authorization.k8s.io/v1/selfsubjectaccessreviews')).toBe(true);
    expect(allows('GET', '/metrics')).toBe(false);
  });
});

describe("the kubeconfig's user, by the same evaluator over the objects options.rbac stands for", () => {
  const user = (verbs: ('get' | 'create')[]) => (method: string, path: string) =>
    rbacAllows(rbacSource(defaultRbacObjects({ model: '1.35', verbs })), LAB_USER, requestAttributes(method, path, q()));

  it("its verbs on pods' streaming subresources (WebSocket's GET is get, SPDY's POST is create), get and list on pods, nothing else", () => {
    const getOnly = user(['get']);
    expect(getOnly('GET', '/api/v1/namespaces/ns/pods/p/exec')).toBe(true);
    expect(getOnly('POST', '/api/v1/namespaces/ns/pods/p/exec')).toBe(false);
    expect(getOnly('GET', '/api/v1/namespaces/ns/pods/p/portforward')).toBe(true);
    expect(getOnly('GET', '/api/v1/namespaces/ns/pods/p')).toBe(true);
    expect(getOnly('GET', '/api/v1/namespaces/ns/pods')).toBe(true);
    expect(getOnly('GET', '/api/v1/namespaces/ns/secrets/s')).toBe(false);
    const both = user(['get', 'create']);
    expect(both('POST', '/api/v1/namespaces/ns/pods/p/attach')).toBe(true);
    expect(both('DELETE', '/api/v1/namespaces/ns/pods/p')).toBe(false);
  });

  it('a service account is not the kubeconfig user: the objects options.rbac stands for bind only the lab-users group', () => {
    const objects = rbacSource(defaultRbacObjects({ model: '1.35', verbs: ['get', 'create'] }));
    expect(rbacAllows(objects, serviceAccountCaller({ namespace: 'ns', name: 'sa' }), requestAttributes('GET', '/api/v1/namespaces/ns/pods/p/exec', q()))).toBe(
      false,
    );
  });
});
