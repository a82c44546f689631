/**
 * The objects `kubectl apply -f` creates, stored as the API server stores them: enough of the REST contract
 * for real kubectl's client-side apply (GET → 404 → POST with `fieldValidation=Strict`; a second apply GETs
 * the object and its last-applied annotation and sends nothing when it is unchanged) and `kubectl delete -f`.
 *
 * What the API server rejects, the store rejects, with the API server's status and wording
 * (k8s.io/apiserver pkg/endpoints/handlers/create.go, rest/create.go; apimachinery's strict decoding):
 * a body for another kind (400), unknown fields under `fieldValidation=Strict` (400 "strict decoding error",
 * a Warning header under `Warn`), a namespace differing from the URL's (400), a missing namespace (404),
 * an invalid object (422), a name already taken (409). Which fields exist and what is valid comes from an
 * injected {@link ObjectSchema} (the tests inject Kubernetes' OpenAPI-generated models); without one only
 * names and namespaces are checked. PATCH merges maps and scalars; a patch of a list is refused (422).
 */
import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { requestAttributes } from './request-info.js';
import { sendJson, sendStatus } from './status.js';

/** A kind the store holds, as discovery lists it. */
export interface StoredKind {
  readonly group: string;
  readonly version: string;
  readonly resource: string;
  readonly kind: string;
  readonly namespaced: boolean;
  readonly shortNames?: readonly string[];
}

/** The kinds a runner manifest (`manifest --runner cronjob|serve [--per-node]`) is made of. */
export const STORED_KINDS: readonly StoredKind[] = [
  { group: '', version: 'v1', resource: 'namespaces', kind: 'Namespace', namespaced: false, shortNames: ['ns'] },
  { group: '', version: 'v1', resource: 'configmaps', kind: 'ConfigMap', namespaced: true, shortNames: ['cm'] },
  { group: '', version: 'v1', resource: 'serviceaccounts', kind: 'ServiceAccount', namespaced: true, shortNames: ['sa'] },
  { group: 'apps', version: 'v1', resource: 'statefulsets', kind: 'StatefulSet', namespaced: true, shortNames: ['sts'] },
  { group: 'apps', version: 'v1', resource: 'daemonsets', kind: 'DaemonSet', namespaced: true, shortNames: ['ds'] },
  { group: 'batch', version: 'v1', resource: 'cronjobs', kind: 'CronJob', namespaced: true, shortNames: ['cj'] },
  // `manifest --runner serve`: the exporter's Deployment, its Service, the NetworkPolicy that opens only its port.
  { group: '', version: 'v1', resource: 'services', kind: 'Service', namespaced: true, shortNames: ['svc'] },
  { group: 'apps', version: 'v1', resource: 'deployments', kind: 'Deployment', namespaced: true, shortNames: ['deploy'] },
  { group: 'networking.k8s.io', version: 'v1', resource: 'networkpolicies', kind: 'NetworkPolicy', namespaced: true, shortNames: ['netpol'] },
  { group: 'rbac.authorization.k8s.io', version: 'v1', resource: 'roles', kind: 'Role', namespaced: true },
  { group: 'rbac.authorization.k8s.io', version: 'v1', resource: 'rolebindings', kind: 'RoleBinding', namespaced: true },
  { group: 'rbac.authorization.k8s.io', version: 'v1', resource: 'clusterroles', kind: 'ClusterRole', namespaced: false },
  { group: 'rbac.authorization.k8s.io', version: 'v1', resource: 'clusterrolebindings', kind: 'ClusterRoleBinding', namespaced: false },
];

/** How long a deleted namespace's objects outlive it. */
const NAMESPACE_TERMINATION_MS = 500;

/** The namespaces every cluster starts with. */
const INITIAL_NAMESPACES = ['default', 'kube-system', 'kube-public', 'kube-node-lease'];

/** One invalid field: `field` in the API server's path syntax (`spec.template.spec.containers[0].image`). */
export interface FieldIssue {
  readonly field: string;
  readonly detail: string;
}

/** What fields a kind has and what is valid: the emulator's stand-in for the API server's compiled-in types. */
export interface ObjectSchema {
  /** Fields the kind's schema does not define, in path syntax; undefined when the kind is not known to it. */
  unknownFields(kind: StoredKind, obj: Record<string, unknown>): readonly string[] | undefined;
  /** Schema violations (types, required fields, enums). */
  invalid(kind: StoredKind, obj: Record<string, unknown>): readonly FieldIssue[];
}

export const groupVersion = (k: Pick<StoredKind, 'group' | 'version'>): string => (k.group ? `${k.group}/${k.version}` : k.version);
/** The collection's path prefix: /api/v1 or /apis/GROUP/VERSION. */
export const gvPath = (k: Pick<StoredKind, 'group' | 'version'>): string => (k.group ? `/apis/${k.group}/${k.version}` : `/api/${k.version}`);
const qualified = (k: StoredKind): string => (k.group ? `${k.resource}.${k.group}` : k.resource);

/** The group-versions the store serves, for /apis (legacy discovery). */
export function storedGroups(): { name: string; versions: { groupVersion: string; version: string }[] }[] {
  const groups = new Map<string, { groupVersion: string; version: string }[]>();
  for (const k of STORED_KINDS.filter((x) => x.group !== '')) {
    const list = groups.get(k.group) ?? [];
    if (!list.some((v) => v.version === k.version)) list.push({ groupVersion: groupVersion(k), version: k.version });
    groups.set(k.group, list);
  }
  return [...groups].map(([name, versions]) => ({ name, versions }));
}

/** The discovery entries of the stored kinds of one group-version. */
export function storedResources(group: string, version: string): Record<string, unknown>[] {
  return STORED_KINDS.filter((k) => k.group === group && k.version === version).map((k) => ({
    name: k.resource,
    singularName: k.kind.toLowerCase(),
    namespaced: k.namespaced,
    kind: k.kind,
    verbs: ['create', 'delete', 'get', 'list'],
    ...(k.shortNames ? { shortNames: k.shortNames } : {}),
  }));
}

type Obj = Record<string, unknown> & { metadata?: Record<string, unknown> };

export class ObjectStore {
  private readonly objects = new Map<string, Obj>();
  private resourceVersion = 1;

  constructor(
    extraNamespaces: readonly string[],
    private readonly schema?: ObjectSchema,
  ) {
    for (const ns of new Set([...INITIAL_NAMESPACES, ...extraNamespaces])) {
      this.put(STORED_KINDS[0]!, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns }, spec: { finalizers: ['kubernetes'] } });
    }
  }

  /** Stores an object of a stored kind as a create would, without validating it (tests seed RBAC with it). */
  add(obj: Obj & { kind: string }): Obj {
    const kind = STORED_KINDS.find((k) => k.kind === obj.kind);
    if (!kind) throw new Error(`the emulator does not store ${obj.kind}`);
    return this.put(kind, structuredClone(obj));
  }

  /** Every stored object of a kind (tests read what kubectl created). */
  list(kind: string): readonly Obj[] {
    return [...this.objects.entries()].filter(([k]) => k.startsWith(`${kind}/`)).map(([, o]) => o);
  }

  /** Serves the request when it names a stored kind; false when it is not this store's. */
  async handle(req: IncomingMessage, res: ServerResponse, path: string, query: URLSearchParams): Promise<boolean> {
    const method = req.method ?? 'GET';
    const route = this.route(method, path, query);
    if (!route) return false;
    const { kind, namespace, name } = route;
    if (name === undefined) {
      if (method === 'GET') return (this.sendList(res, kind, namespace, query), true);
      if (method === 'POST') return (await this.create(req, res, kind, namespace, query), true);
    } else {
      const key = this.key(kind, namespace, name);
      const found = this.objects.get(key);
      if (method === 'GET') {
        if (found) sendJson(res, 200, found);
        else sendStatus(res, 404, `${qualified(kind)} "${name}" not found`);
        return true;
      }
      if (method === 'DELETE') {
        if (!found) return (sendStatus(res, 404, `${qualified(kind)} "${name}" not found`), true);
        this.objects.delete(key);
        // A namespace's objects go with it, a moment later (the namespace controller): while it terminates they
        // can still be read and deleted, so `kubectl delete -f` of a manifest starting with its Namespace succeeds.
        if (kind.kind === 'Namespace') setTimeout(() => this.purgeNamespace(name), NAMESPACE_TERMINATION_MS).unref();
        sendJson(res, 200, found);
        return true;
      }
      if (method === 'PATCH') {
        if (!found) return (sendStatus(res, 404, `${qualified(kind)} "${name}" not found`), true);
        await this.patch(req, res, kind, key, found, query);
        return true;
      }
    }
    sendStatus(res, 405, `the server does not allow this method on the requested resource (${method})`);
    return true;
  }

  /** The stored kind, namespace and name a request names (RequestInfoFactory's attributes); undefined when none. */
  private route(method: string, path: string, query: URLSearchParams): { kind: StoredKind; namespace?: string; name?: string } | undefined {
    const a = requestAttributes(method, path, query);
    if (!a.resourceRequest || a.subresource !== undefined) return undefined;
    const kind = STORED_KINDS.find((k) => k.group === a.apiGroup && k.version === a.apiVersion && k.resource === a.resource);
    if (!kind) return undefined;
    // A Namespace's namespace attribute is its own name; other kinds are served only at their own scope.
    if (kind.kind === 'Namespace') return { kind, name: a.name };
    if (kind.namespaced !== (a.namespace !== undefined)) return undefined;
    return { kind, namespace: a.namespace, name: a.name };
  }

  private purgeNamespace(name: string): void {
    if (this.objects.has(this.key(STORED_KINDS[0]!, undefined, name))) return; // created again meanwhile
    for (const k of [...this.objects.keys()]) if (k.split('/')[1] === name) this.objects.delete(k);
  }

  private key(kind: StoredKind, namespace: string | undefined, name: string): string {
    return `${kind.kind}/${namespace ?? ''}/${name}`;
  }

  private sendList(res: ServerResponse, kind: StoredKind, namespace: string | undefined, query: URLSearchParams): void {
    // kubectl delete waits for an object with `fieldSelector=metadata.name=NAME`; no other selector is served.
    const selector = query.get('fieldSelector');
    const byName = selector ? /^metadata\.name=([^,]+)$/.exec(selector)?.[1] : undefined;
    if (selector && byName === undefined) return sendStatus(res, 400, `the emulator serves only fieldSelector=metadata.name=NAME, not "${selector}"`);
    if (query.get('watch') === 'true' || query.get('watch') === '1') return sendStatus(res, 405, 'the emulator does not serve watches');
    const items = [...this.objects.entries()]
      .filter(([k]) => k.startsWith(`${kind.kind}/${namespace === undefined ? '' : `${namespace}/`}`))
      .map(([, o]) => o)
      .filter((o) => byName === undefined || o.metadata?.name === byName);
    sendJson(res, 200, { kind: `${kind.kind}List`, apiVersion: groupVersion(kind), metadata: { resourceVersion: String(this.resourceVersion) }, items });
  }

  private async create(req: IncomingMessage, res: ServerResponse, kind: StoredKind, namespace: string | undefined, query: URLSearchParams): Promise<void> {
    let obj: Obj;
    try {
      obj = parseObject(await readBody(req));
    } catch {
      return sendStatus(res, 400, `the body of the request was not a valid ${kind.kind} object`);
    }
    const gv = groupVersion(kind);
    if (obj.apiVersion !== gv || obj.kind !== kind.kind) {
      return sendStatus(res, 400, `the API version in the data (${String(obj.apiVersion)}) does not match the expected API version (${gv})`);
    }
    const meta = (obj.metadata ??= {});
    if (meta.namespace !== undefined && namespace !== undefined && meta.namespace !== namespace) {
      return sendStatus(res, 400, 'the namespace of the provided object does not match the namespace sent on the request');
    }
    if (namespace !== undefined && !this.objects.has(this.key(STORED_KINDS[0]!, undefined, namespace))) {
      return sendStatus(res, 404, `namespaces "${namespace}" not found`);
    }
    const warnings = this.admit(res, kind, obj, query);
    if (!warnings) return;
    const key = this.key(kind, namespace, meta.name as string);
    if (this.objects.has(key)) return sendStatus(res, 409, `${qualified(kind)} "${meta.name as string}" already exists`);
    if (namespace !== undefined) meta.namespace = namespace;
    sendObject(res, 201, this.put(kind, obj), warnings);
  }

  /**
   * PATCH as a strategic merge patch or a JSON merge patch (RFC 7386) of maps and scalars: what kubectl apply
   * sends when an object's labels, annotations or scalar fields changed, or to add its last-applied annotation
   * to an object created otherwise. A patch that changes a list or carries a strategic-merge directive ($patch,
   * $setElementOrder, …) needs the kind's merge keys, which the emulator does not have: it is refused, naming
   * the field, rather than merged wrongly.
   */
  private async patch(req: IncomingMessage, res: ServerResponse, kind: StoredKind, key: string, found: Obj, query: URLSearchParams): Promise<void> {
    const type = String(req.headers['content-type'] ?? '')
      .split(';')[0]!
      .trim();
    if (type !== 'application/strategic-merge-patch+json' && type !== 'application/merge-patch+json') {
      return sendStatus(res, 415, `the emulator applies strategic merge and JSON merge patches, not ${type || 'an untyped body'}`);
    }
    let patch: Obj;
    try {
      patch = parseObject(await readBody(req));
    } catch {
      return sendStatus(res, 400, 'the body of the request was not a valid patch');
    }
    const list = listIn(patch, '');
    if (list !== undefined) {
      return sendStatus(
        res,
        422,
        `the emulator merges maps and scalars only; this patch changes the list or directive at ${list}: delete ${qualified(kind)} and apply again`,
      );
    }
    const merged = mergePatch(structuredClone(found), patch) as Obj;
    const meta = merged.metadata ?? {};
    const before = found.metadata ?? {};
    if (meta.name !== before.name || meta.namespace !== before.namespace || merged.kind !== found.kind || merged.apiVersion !== found.apiVersion) {
      return sendStatus(res, 400, 'a patch may not change the kind, apiVersion, name or namespace');
    }
    const warnings = this.admit(res, kind, merged, query);
    if (!warnings) return;
    meta.resourceVersion = String(++this.resourceVersion);
    if (typeof meta.generation === 'number' && JSON.stringify(merged.spec) !== JSON.stringify(found.spec)) meta.generation += 1;
    this.objects.set(key, merged);
    sendObject(res, 200, merged, warnings);
  }

  /**
   * Field validation and the schema's checks, as the API server decodes and validates a body: unknown fields
   * refused under `fieldValidation=Strict` (400), warned about under `Warn`, dropped in every case; invalid
   * values refused (422). Returns the warnings, or undefined when it has answered.
   */
  private admit(res: ServerResponse, kind: StoredKind, obj: Obj, query: URLSearchParams): string[] | undefined {
    const validation = query.get('fieldValidation') ?? 'Warn';
    if (!['Strict', 'Warn', 'Ignore'].includes(validation)) {
      sendStatus(res, 400, `fieldValidation ${validation} is invalid; valid values: Ignore, Warn, Strict`);
      return undefined;
    }
    const unknown = this.schema?.unknownFields(kind, obj) ?? [];
    if (unknown.length > 0 && validation === 'Strict') {
      const list = unknown.map((f) => `unknown field "${f}"`).join(', ');
      sendStatus(res, 400, `${kind.kind} in version "${kind.version}" cannot be handled as a ${kind.kind}: strict decoding error: ${list}`);
      return undefined;
    }
    // Unknown fields are dropped on decoding whatever the directive: the stored object lacks them.
    for (const f of unknown) dropField(obj, f);
    const name = obj.metadata?.name;
    const issues: FieldIssue[] = [];
    if (typeof name !== 'string' || name === '') issues.push({ field: 'metadata.name', detail: 'Required value: name or generateName is required' });
    else if (!/^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/.test(name) || name.length > 253) {
      issues.push({
        field: 'metadata.name',
        detail: `Invalid value: "${name}": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.'`,
      });
    }
    issues.push(...(this.schema?.invalid(kind, obj) ?? []));
    if (issues.length > 0) {
      const what = `${kind.kind}${kind.group ? `.${kind.group}` : ''} "${typeof name === 'string' ? name : ''}"`;
      sendStatus(res, 422, `${what} is invalid: ${issues.map((i) => `${i.field}: ${i.detail}`).join(', ')}`);
      return undefined;
    }
    return validation === 'Warn' ? unknown.map((f) => `unknown field "${f}"`) : [];
  }

  private put(kind: StoredKind, obj: Obj): Obj {
    const meta = (obj.metadata ??= {});
    meta.uid = randomUUID();
    meta.resourceVersion = String(++this.resourceVersion);
    meta.creationTimestamp = new Date().toISOString().replace(/\.\d+Z$/, 'Z');
    if (kind.group === 'apps' || kind.group === 'batch') meta.generation = 1;
    if (kind.kind === 'Namespace') obj.status = { phase: 'Active' };
    this.objects.set(this.key(kind, meta.namespace as string | undefined, meta.name as string), obj);
    return obj;
  }
}

function parseObject(text: string): Obj {
  const parsed: unknown = JSON.parse(text);
  if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed)) throw new Error('not an object');
  return parsed as Obj;
}

function sendObject(res: ServerResponse, code: number, obj: Obj, warnings: readonly string[]): void {
  if (warnings.length > 0)
    res.setHeader(
      'Warning',
      warnings.map((w) => `299 - ${JSON.stringify(w)}`),
    );
  sendJson(res, code, obj);
}

/** The first list or strategic-merge directive (a "$" key) in a patch, as a field path; undefined when none. */
function listIn(value: unknown, path: string): string | undefined {
  if (Array.isArray(value)) return path || '(the body)';
  if (!value || typeof value !== 'object') return undefined;
  for (const [k, v] of Object.entries(value)) {
    const at = path ? `${path}.${k}` : k;
    if (k.startsWith('$')) return at;
    const found = listIn(v, at);
    if (found !== undefined) return found;
  }
  return undefined;
}

/** RFC 7386: maps merge, null deletes, anything else replaces. */
function mergePatch(target: unknown, patch: unknown): unknown {
  if (!patch || typeof patch !== 'object' || Array.isArray(patch)) return patch;
  const out: Record<string, unknown> = target && typeof target === 'object' && !Array.isArray(target) ? (target as Record<string, unknown>) : {};
  for (const [k, v] of Object.entries(patch)) {
    if (v === null) delete out[k];
    else out[k] = mergePatch(out[k], v);
  }
  return out;
}

/** Deletes the field at an API server path (`spec.containers[0].foo`) from `obj`. */
function dropField(obj: Record<string, unknown>, path: string): void {
  const steps = path.split(/\.|(?=\[)/).map((s) => (/^\[\d+\]$/.test(s) ? Number(s.slice(1, -1)) : s));
  let at: unknown = obj;
  for (const step of steps.slice(0, -1)) at = (at as Record<string | number, unknown> | undefined)?.[step];
  if (at && typeof at === 'object') delete (at as Record<string | number, unknown>)[steps[steps.length - 1]!];
}

export async function readBody(req: IncomingMessage, max = 1024 * 1024): Promise<string> {
  return (await readBodyBytes(req, max)).toString('utf8');
}

/** The request body as bytes, at most `max` (a larger one rejects). */
export function readBodyBytes(req: IncomingMessage, max = 1024 * 1024): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let n = 0;
    req.on('data', (c: Buffer) => {
      n += c.length;
      if (n > max) reject(new Error('body too large'));
      else chunks.push(c);
    });
    req.on('end', () => resolve(Buffer.concat(chunks)));
    req.on('error', reject);
  });
}
