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
import { delimiter, dirname, isAbsolute, join } from 'node:path';
import { probeError } from '../errors.js';
import type { ExecPluginConfig, ResolvedCluster, ResolvedContext, ResolvedUser } from './context.js';
import { inClusterContext } from './in-cluster.js';
import { bool, fail, isObj, named, type Obj, parseYaml, pem, str } from './kubeconfig-fields.js';
import { kubeconfigPaths, mergeKubeconfigs } from './kubeconfig-merge.js';
import { caBundleProblem, clientPairProblem } from './pem-check.js';

export type { ExecPluginConfig, ResolvedCluster, ResolvedContext, ResolvedUser } from './context.js';
export { inClusterContext, SERVICE_ACCOUNT_DIR } from './in-cluster.js';
export { kubeconfigPaths, mergeKubeconfigs } from './kubeconfig-merge.js';

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
  const caProblem = caPem === undefined ? undefined : caBundleProblem(caPem);
  if (caProblem) fail(source, `${cf}.${c['certificate-authority-data'] ? 'certificate-authority-data' : 'certificate-authority'}`, caProblem);
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
    const pair = user.clientCertPem === undefined ? undefined : clientPairProblem(user.clientCertPem, user.clientKeyPem!);
    if (pair) {
      const name = pair.which === 'certificate' ? 'client-certificate' : 'client-key';
      fail(source, `${uf}.${u[`${name}-data`] ? `${name}-data` : name}`, pair.rule);
    }
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
