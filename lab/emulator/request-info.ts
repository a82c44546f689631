/**
 * A request's attributes as the API server's RequestInfoFactory derives them from method and path
 * (k8s.io/apiserver pkg/endpoints/request/requestinfo.go): a resource request's verb, group, version, resource,
 * subresource, namespace and name, or a non-resource request's path. The emulator's one parser of API paths:
 * the RBAC authorizer reads these attributes, the object store routes by them.
 */

/** What a request asks to do, as an authorizer sees it. */
export type RequestAttributes = ResourceAttributes | { readonly resourceRequest: false; readonly verb: string; readonly path: string };

export interface ResourceAttributes {
  readonly resourceRequest: true;
  readonly verb: string;
  readonly apiGroup: string;
  /** The version in the path (v1); the authorizer ignores it, the object store routes by it. */
  readonly apiVersion?: string;
  readonly resource: string;
  readonly subresource?: string;
  readonly namespace?: string;
  readonly name?: string;
}

const NAMESPACE_SUBRESOURCES = new Set(['status', 'finalize']);
const VERBS: Readonly<Record<string, string>> = { POST: 'create', PUT: 'update', PATCH: 'patch', DELETE: 'delete' };

/** The request's attributes from its method and path (RequestInfoFactory, simplified to the paths the emulator serves). */
export function requestAttributes(method: string, path: string, query: URLSearchParams): RequestAttributes {
  const m = /^\/(?:api\/(v1)|apis\/([^/]+)\/([^/]+))(\/.*)?$/.exec(path);
  // Non-resource requests (/version, /api, /openapi/v3…) take the lower-cased method as their verb.
  if (!m?.[4]) return { resourceRequest: false, verb: method === 'HEAD' ? 'get' : method.toLowerCase(), path };
  const apiGroup = m[2] ?? '';
  const apiVersion = m[1] ?? m[3]!;
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
  return { resourceRequest: true, verb, apiGroup, apiVersion, resource, subresource, namespace, name };
}
