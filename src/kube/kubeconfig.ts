/**
 * kubeconfig loading compatible with kubectl's: contexts and namespaces,
 * certificate-authority(-data), insecure-skip-tls-verify, tls-server-name,
 * client certificates, token / tokenFile, exec credential plugins and
 * proxy-url. Relative paths resolve against the kubeconfig's directory.
 *
 * Why not @kubernetes/client-node: bundled and minified it is 957 KB (the
 * whole Lambda budget is 600 KB) against 115 KB for `yaml`, and we need only
 * this file's worth of it (measured 2026-12-02, see docs/decisions.md).
 */
import { existsSync, readFileSync } from 'node:fs';
import { delimiter, dirname, isAbsolute, join } from 'node:path';
import YAML from 'yaml';
import { probeError } from '../errors.js';

export interface ExecPluginConfig {
  readonly apiVersion: string;
  readonly command: string;
  readonly args: readonly string[];
  readonly env: readonly { readonly name: string; readonly value: string }[];
  readonly provideClusterInfo: boolean;
  readonly installHint?: string;
}

export interface ResolvedCluster {
  readonly name: string;
  readonly server: URL;
  readonly caPem?: string;
  readonly insecureSkipTlsVerify: boolean;
  readonly tlsServerName?: string;
  readonly proxyUrl?: URL;
}

export interface ResolvedUser {
  readonly name: string;
  readonly token?: string;
  readonly tokenFile?: string;
  readonly clientCertPem?: string;
  readonly clientKeyPem?: string;
  readonly exec?: ExecPluginConfig;
  readonly username?: string;
  readonly password?: string;
}

export interface ResolvedContext {
  readonly contextName: string;
  readonly namespace: string;
  readonly cluster: ResolvedCluster;
  readonly user: ResolvedUser;
  /** Where the kubeconfig came from, for messages. */
  readonly source: string;
}

type Obj = Record<string, unknown>;

const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

function fail(source: string, field: string, rule: string): never {
  throw probeError('KUBECONFIG_INVALID', `${source}: ${field} ${rule}`, { file: source, field });
}

function str(o: Obj, key: string, source: string, field: string): string | undefined {
  const v = o[key];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'string') fail(source, `${field}.${key}`, `must be a string, not ${typeof v}`);
  return v;
}

function bool(o: Obj, key: string, source: string, field: string): boolean {
  const v = o[key];
  if (v === undefined || v === null) return false;
  if (typeof v !== 'boolean') fail(source, `${field}.${key}`, `must be true or false`);
  return v;
}

function readText(path: string, source: string, field: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch (err) {
    throw probeError('KUBECONFIG_UNREADABLE', `${source}: ${field} file ${path} cannot be read (${(err as NodeJS.ErrnoException).code ?? 'error'})`, {
      file: path,
      field,
    });
  }
}

function decodeData(value: string, source: string, field: string): string {
  if (!/^[A-Za-z0-9+/=\s]*$/.test(value)) fail(source, field, 'is not base64');
  return Buffer.from(value, 'base64').toString('utf8');
}

/** A PEM from `<name>-data` (base64) or `<name>` (a file path). */
function pem(o: Obj, name: string, dir: string, source: string, field: string): string | undefined {
  const data = str(o, `${name}-data`, source, field);
  if (data) return decodeData(data, source, `${field}.${name}-data`);
  const path = str(o, name, source, field);
  if (path) return readText(isAbsolute(path) ? path : join(dir, path), source, `${field}.${name}`);
  return undefined;
}

function named(doc: Obj, list: string, item: string, name: string, source: string): Obj {
  const arr = doc[list];
  if (arr !== undefined && arr !== null && !Array.isArray(arr)) fail(source, list, 'must be a list');
  const entry = ((arr as unknown[] | undefined) ?? []).find((e) => isObj(e) && e.name === name);
  if (!entry) fail(source, list, `has no entry named "${name}"`);
  const inner = (entry as Obj)[item];
  if (inner !== undefined && !isObj(inner)) fail(source, `${list}[${name}].${item}`, 'must be a mapping');
  return (inner as Obj | undefined) ?? {};
}

function parseYaml(text: string, source: string): Obj {
  let doc: unknown;
  try {
    doc = YAML.parse(text);
  } catch (err) {
    const e = err as { linePos?: { line: number }[]; message: string };
    throw probeError('KUBECONFIG_INVALID', `${source}: not valid YAML${e.linePos?.[0] ? ` (line ${e.linePos[0].line})` : ''}: ${e.message.split('\n')[0]}`, {
      file: source,
    });
  }
  // An empty file is an empty kubeconfig (kubectl reads it so).
  if (doc === null || doc === undefined) return {};
  if (!isObj(doc)) fail(source, 'the document', 'must be a mapping (apiVersion, clusters, users, contexts)');
  return doc;
}

export function parseKubeconfig(text: string, source: string, contextOverride?: string, namespaceOverride?: string): ResolvedContext {
  return resolveDocument(parseYaml(text, source), source, dirname(source), contextOverride, namespaceOverride);
}

function resolveDocument(doc: Obj, source: string, dir: string, contextOverride?: string, namespaceOverride?: string): ResolvedContext {
  const contextName = contextOverride ?? str(doc, 'current-context', source, '');
  if (!contextName) fail(source, 'current-context', 'is not set and no --context was given');
  const ctx = named(doc, 'contexts', 'context', contextName, source);
  const clusterName = str(ctx, 'cluster', source, `contexts[${contextName}].context`);
  if (!clusterName) fail(source, `contexts[${contextName}].context.cluster`, 'is missing');
  const userName = str(ctx, 'user', source, `contexts[${contextName}].context`);
  const c = named(doc, 'clusters', 'cluster', clusterName, source);
  const cf = `clusters[${clusterName}].cluster`;
  const serverText = str(c, 'server', source, cf);
  if (!serverText) fail(source, `${cf}.server`, 'is missing');
  let server: URL;
  try {
    server = new URL(serverText);
  } catch {
    fail(source, `${cf}.server`, `"${serverText}" is not a URL`);
  }
  if (server.protocol !== 'https:' && server.protocol !== 'http:') fail(source, `${cf}.server`, `must be http:// or https://, not ${server.protocol}`);
  const proxyText = str(c, 'proxy-url', source, cf);
  let proxyUrl: URL | undefined;
  if (proxyText) {
    try {
      proxyUrl = new URL(proxyText);
    } catch {
      fail(source, `${cf}.proxy-url`, 'is not a URL');
    }
    if (!['http:', 'https:', 'socks5:', 'socks5h:'].includes(proxyUrl.protocol))
      fail(source, `${cf}.proxy-url`, `scheme ${proxyUrl.protocol} is not http, https or socks5`);
  }
  const insecure = bool(c, 'insecure-skip-tls-verify', source, cf);
  const caPem = pem(c, 'certificate-authority', dir, source, cf);
  if (insecure && caPem) fail(source, cf, 'sets both insecure-skip-tls-verify and a certificate authority (kubectl refuses this too)');
  const cluster: ResolvedCluster = {
    name: clusterName,
    server,
    caPem,
    insecureSkipTlsVerify: insecure,
    tlsServerName: str(c, 'tls-server-name', source, cf),
    proxyUrl,
  };
  let user: ResolvedUser = { name: userName ?? '' };
  if (userName) {
    const u = named(doc, 'users', 'user', userName, source);
    const uf = `users[${userName}].user`;
    const tokenFile = str(u, 'tokenFile', source, uf);
    user = {
      name: userName,
      token: str(u, 'token', source, uf),
      tokenFile: tokenFile ? (isAbsolute(tokenFile) ? tokenFile : join(dir, tokenFile)) : undefined,
      clientCertPem: pem(u, 'client-certificate', dir, source, uf),
      clientKeyPem: pem(u, 'client-key', dir, source, uf),
      exec: parseExec(u.exec, source, `${uf}.exec`),
      username: str(u, 'username', source, uf),
      password: str(u, 'password', source, uf),
    };
    if ((user.clientCertPem === undefined) !== (user.clientKeyPem === undefined))
      fail(source, uf, 'has a client certificate without a key, or a key without a certificate');
  }
  const namespace = namespaceOverride ?? str(ctx, 'namespace', source, `contexts[${contextName}].context`) ?? 'default';
  return { contextName, namespace, cluster, user, source };
}

function parseExec(v: unknown, source: string, field: string): ExecPluginConfig | undefined {
  if (v === undefined || v === null) return undefined;
  if (!isObj(v)) fail(source, field, 'must be a mapping');
  const apiVersion = str(v, 'apiVersion', source, field);
  const supported = ['client.authentication.k8s.io/v1', 'client.authentication.k8s.io/v1beta1'];
  if (!apiVersion || !supported.includes(apiVersion)) fail(source, `${field}.apiVersion`, `must be one of ${supported.join(', ')}`);
  const command = str(v, 'command', source, field);
  if (!command) fail(source, `${field}.command`, 'is missing');
  const args = v.args ?? [];
  if (!Array.isArray(args) || !args.every((a) => typeof a === 'string')) fail(source, `${field}.args`, 'must be a list of strings');
  const env = v.env ?? [];
  if (!Array.isArray(env) || !env.every((e) => isObj(e) && typeof e.name === 'string' && typeof e.value === 'string'))
    fail(source, `${field}.env`, 'must be a list of {name, value} strings');
  return {
    apiVersion,
    command,
    args: args as string[],
    env: env as { name: string; value: string }[],
    provideClusterInfo: bool(v, 'provideClusterInfo', source, field),
    installHint: str(v, 'installHint', source, field),
  };
}

/** The kubeconfig files kubectl would read: --kubeconfig alone, else every path in $KUBECONFIG, else ~/.kube/config. */
export function kubeconfigPaths(explicit: string | undefined, env: NodeJS.ProcessEnv): { readonly paths: readonly string[]; readonly explicit: boolean } {
  if (explicit) return { paths: [explicit], explicit: true };
  const fromEnv = (env.KUBECONFIG ?? '').split(delimiter).filter(Boolean);
  if (fromEnv.length) return { paths: fromEnv, explicit: false };
  const home = env.HOME ?? env.USERPROFILE;
  return { paths: home ? [join(home, '.kube', 'config')] : [], explicit: false };
}

/** The fields of a kubeconfig that name files, resolved against the file that defines them. */
const PATH_FIELDS: Readonly<Record<string, readonly string[]>> = {
  clusters: ['certificate-authority'],
  users: ['client-certificate', 'client-key', 'tokenFile'],
};

/**
 * Merges kubeconfig documents as kubectl does (client-go clientcmd, loader.go `Load`): the first file to
 * define a cluster, user or context by name wins, whole (a later file's entry of the same name is
 * discarded, even its other fields); `current-context` comes from the first file that sets it; relative
 * paths resolve against the file that holds them.
 */
export function mergeKubeconfigs(docs: readonly { readonly doc: Obj; readonly path: string }[]): Obj {
  const merged: Obj = { clusters: [], users: [], contexts: [] };
  for (const { doc, path } of docs) {
    if (merged['current-context'] === undefined && typeof doc['current-context'] === 'string' && doc['current-context'])
      merged['current-context'] = doc['current-context'];
    for (const list of ['clusters', 'users', 'contexts'] as const) {
      const entries = doc[list];
      if (entries === undefined || entries === null) continue;
      if (!Array.isArray(entries)) fail(path, list, 'must be a list');
      const into = merged[list] as Obj[];
      for (const e of entries) {
        if (!isObj(e) || typeof e.name !== 'string' || into.some((x) => x.name === e.name)) continue;
        const item = list.slice(0, -1);
        const inner = e[item];
        const fields = PATH_FIELDS[list] ?? [];
        if (isObj(inner) && fields.some((f) => typeof inner[f] === 'string' && !isAbsolute(inner[f] as string))) {
          const fixed: Obj = { ...inner };
          for (const f of fields) if (typeof fixed[f] === 'string' && !isAbsolute(fixed[f] as string)) fixed[f] = join(dirname(path), fixed[f] as string);
          into.push({ ...e, [item]: fixed });
        } else into.push(e);
      }
    }
  }
  return merged;
}

/** Where a pod's service account is mounted (kubelet's projected volume). */
export const SERVICE_ACCOUNT_DIR = '/var/run/secrets/kubernetes.io/serviceaccount';

/**
 * In-cluster configuration, as client-go's rest.InClusterConfig: the API server from
 * KUBERNETES_SERVICE_HOST/PORT, the service account's CA, its projected token (read again for each
 * connection, since the kubelet rotates it) and its namespace. undefined outside a pod.
 */
export function inClusterContext(env: NodeJS.ProcessEnv, namespaceOverride?: string, dir = SERVICE_ACCOUNT_DIR): ResolvedContext | undefined {
  const host = env.KUBERNETES_SERVICE_HOST;
  const port = env.KUBERNETES_SERVICE_PORT;
  if (!host || !port || !existsSync(join(dir, 'token'))) return undefined;
  const source = `in-cluster service account (${dir})`;
  const server = new URL(`https://${host.includes(':') ? `[${host}]` : host}:${port}`);
  const caPem = readText(join(dir, 'ca.crt'), source, 'ca.crt');
  let namespace = namespaceOverride;
  if (!namespace) {
    try {
      namespace = readFileSync(join(dir, 'namespace'), 'utf8').trim() || 'default';
    } catch {
      namespace = 'default';
    }
  }
  return {
    contextName: 'in-cluster',
    namespace,
    cluster: { name: 'in-cluster', server, caPem, insecureSkipTlsVerify: false },
    user: { name: 'service-account', tokenFile: join(dir, 'token') },
    source,
  };
}

export interface LoadOptions {
  readonly context?: string;
  readonly namespace?: string;
  /** For in-cluster auth (default SERVICE_ACCOUNT_DIR). */
  readonly serviceAccountDir?: string;
}

/**
 * The context kubectl would use: --kubeconfig (which must exist), else $KUBECONFIG's files merged
 * (missing ones skipped, as kubectl does), else ~/.kube/config; with none of them, in a pod, its
 * service account.
 */
export function loadKubeconfigFor(explicit: string | undefined, env: NodeJS.ProcessEnv, options: LoadOptions = {}): ResolvedContext {
  const { paths, explicit: isExplicit } = kubeconfigPaths(explicit, env);
  const docs: { doc: Obj; path: string }[] = [];
  for (const path of paths) {
    let text: string;
    try {
      text = readFileSync(path, 'utf8');
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      // client-go: a missing --kubeconfig is an error; missing files of the list are ignored.
      if (code === 'ENOENT' && !isExplicit) continue;
      throw probeError('KUBECONFIG_UNREADABLE', `kubeconfig ${path} cannot be read (${code ?? 'error'})`, { file: path });
    }
    docs.push({ doc: parseYaml(text, path), path });
  }
  if (docs.length === 0) {
    const inCluster = isExplicit ? undefined : inClusterContext(env, options.namespace, options.serviceAccountDir);
    if (inCluster) return inCluster;
    const where = paths.length ? paths.join(delimiter) : 'no --kubeconfig, no $KUBECONFIG and no $HOME';
    throw probeError('KUBECONFIG_UNREADABLE', `no kubeconfig found (${where}) and not in a pod (no KUBERNETES_SERVICE_HOST with a service account token)`, {
      file: paths[0],
    });
  }
  if (docs.length === 1) return resolveDocument(docs[0]!.doc, docs[0]!.path, dirname(docs[0]!.path), options.context, options.namespace);
  const source = `KUBECONFIG ${docs.map((d) => d.path).join(delimiter)}`;
  return resolveDocument(mergeKubeconfigs(docs), source, '/', options.context, options.namespace);
}
