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
import { readFileSync } from 'node:fs';
import { dirname, isAbsolute, join } from 'node:path';
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
    throw probeError('KUBECONFIG_UNREADABLE', `${source}: ${field} file ${path} cannot be read (${(err as NodeJS.ErrnoException).code ?? 'error'})`, { file: path, field });
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

export function parseKubeconfig(text: string, source: string, contextOverride?: string, namespaceOverride?: string): ResolvedContext {
  let doc: unknown;
  try {
    doc = YAML.parse(text);
  } catch (err) {
    const e = err as { linePos?: { line: number }[]; message: string };
    throw probeError('KUBECONFIG_INVALID', `${source}: not valid YAML${e.linePos?.[0] ? ` (line ${e.linePos[0].line})` : ''}: ${e.message.split('\n')[0]}`, { file: source });
  }
  if (!isObj(doc)) fail(source, 'the document', 'must be a mapping (apiVersion, clusters, users, contexts)');
  const dir = dirname(source);
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
    if (!['http:', 'https:', 'socks5:', 'socks5h:'].includes(proxyUrl.protocol)) fail(source, `${cf}.proxy-url`, `scheme ${proxyUrl.protocol} is not http, https or socks5`);
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
    if ((user.clientCertPem === undefined) !== (user.clientKeyPem === undefined)) fail(source, uf, 'has a client certificate without a key, or a key without a certificate');
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
  if (!Array.isArray(env) || !env.every((e) => isObj(e) && typeof e.name === 'string' && typeof e.value === 'string')) fail(source, `${field}.env`, 'must be a list of {name, value} strings');
  return {
    apiVersion,
    command,
    args: args as string[],
    env: env as { name: string; value: string }[],
    provideClusterInfo: bool(v, 'provideClusterInfo', source, field),
    installHint: str(v, 'installHint', source, field),
  };
}

/** The kubeconfig path kubectl would use: --kubeconfig, else the first of $KUBECONFIG, else ~/.kube/config. */
export function kubeconfigPath(explicit: string | undefined, env: NodeJS.ProcessEnv): string {
  if (explicit) return explicit;
  const fromEnv = env.KUBECONFIG?.split(':').find(Boolean);
  if (fromEnv) return fromEnv;
  const home = env.HOME ?? env.USERPROFILE;
  if (!home) throw probeError('KUBECONFIG_UNREADABLE', 'no --kubeconfig, no $KUBECONFIG and no $HOME: cannot find a kubeconfig', {});
  return join(home, '.kube', 'config');
}

export function loadKubeconfig(path: string, context?: string, namespace?: string): ResolvedContext {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    throw probeError('KUBECONFIG_UNREADABLE', `kubeconfig ${path} cannot be read (${(err as NodeJS.ErrnoException).code ?? 'error'})`, { file: path });
  }
  return parseKubeconfig(text, path, context, namespace);
}
