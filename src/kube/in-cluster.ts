/** A pod's own credentials: its service account, as client-go's rest.InClusterConfig reads them. */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { ResolvedContext } from './context.js';
import { readText } from './kubeconfig-fields.js';

/** Where a pod's service account is mounted (kubelet's projected volume). */
export const SERVICE_ACCOUNT_DIR = '/var/run/secrets/kubernetes.io/serviceaccount';

/** The context name of a pod's own service account (client-go's rest.InClusterConfig has none; results need one). */
export const IN_CLUSTER_CONTEXT = 'in-cluster';

/**
 * In-cluster configuration, as client-go's rest.InClusterConfig: the API server from
 * KUBERNETES_SERVICE_HOST/PORT, the service account's CA, its projected token (read again for each
 * connection, since the kubelet rotates it) and its namespace. undefined outside a pod. KSP_SERVICE_ACCOUNT_DIR
 * names another mount (a pod that projects its own token with `automountServiceAccountToken: false`).
 */
export function inClusterContext(
  env: NodeJS.ProcessEnv,
  namespaceOverride?: string,
  dir = env.KSP_SERVICE_ACCOUNT_DIR || SERVICE_ACCOUNT_DIR,
): ResolvedContext | undefined {
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
    contextName: IN_CLUSTER_CONTEXT,
    namespace,
    cluster: { name: IN_CLUSTER_CONTEXT, server, caPem, insecureSkipTlsVerify: false },
    user: { name: 'service-account', tokenFile: join(dir, 'token') },
    source,
  };
}
