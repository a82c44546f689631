/**
 * How the Lambda reaches each cluster: EKS through its own IAM role (a fresh
 * presigned-STS token per invocation; the CA from the config or
 * eks:DescribeCluster), or a kubeconfig / bearer token kept in Secrets Manager
 * (read once per cold start). Secrets are registered with the redactor.
 */
import type { EKSClient } from '@aws-sdk/client-eks';
import type { SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import type { AwsCredentialIdentity } from '@smithy/types';
import { regionOfArn } from '../aws/arn.js';
import { eksToken } from '../aws/eks-token.js';
import { userAgent } from '../version.js';
import { LAMBDA_CONNECTION_TIMEOUTS } from '../config/lambda-limits.js';
import { NAME_RULES } from '../config/rules.js';
import type { ClusterConfig } from '../config/probe-config.js';
import { probeError } from '../errors.js';
import { connectionFor } from '../kube/credentials.js';
import { parseKubeconfig } from '../kube/kubeconfig.js';
import type { SecretRedactor } from '../kube/secrets.js';
import type { ConnectionConfig } from '../net/connection.js';

export interface AccessDeps {
  /** A Secrets Manager client for the secret's own region (from its ARN). */
  readonly secretsIn: (region: string) => Pick<SecretsManagerClient, 'send'>;
  /** An EKS client for the cluster's region (`auth.region`, else the location's). */
  readonly eksIn: (region: string) => Pick<EKSClient, 'send'>;
  readonly credentials: () => Promise<AwsCredentialIdentity>;
  readonly redactor: SecretRedactor;
  /** Wall clock for the cache's TTL (Date.now). */
  readonly now?: () => number;
}

/** How long a fetched secret is used before it is read again (a rotated token is picked up within this). */
export const SECRET_TTL_MS = 5 * 60_000;

/** Per execution environment: secret values (with when they were read) and DescribeCluster CAs. */
export class AccessCache {
  readonly secrets = new Map<string, { readonly value: string; readonly fetchedAt: number }>();
  readonly cas = new Map<string, string>();

  /** Forget what this cluster's credentials came from, so the next run reads them afresh (after a 401). */
  forget(cluster: ClusterConfig): void {
    if (cluster.auth.type === 'secret') this.secrets.delete(cluster.auth.secretArn);
  }
}

const LAMBDA_TIMEOUTS = LAMBDA_CONNECTION_TIMEOUTS;

/**
 * The connection to one cluster. Every AWS call goes to the region the resource lives in, and takes
 * `signal` (the invocation's credential budget), so a black-holed endpoint cannot hold the run.
 */
export async function connectionForCluster(
  cluster: ClusterConfig,
  locationRegion: string,
  deps: AccessDeps,
  cache: AccessCache,
  signal?: AbortSignal,
): Promise<ConnectionConfig> {
  const server = new URL(cluster.endpoint);
  const now = deps.now ?? Date.now;
  if (cluster.auth.type === 'eks') {
    const auth = cluster.auth;
    const region = auth.region ?? locationRegion;
    const key = `${region}/${auth.clusterName}`;
    let ca = cluster.caData ? Buffer.from(cluster.caData, 'base64').toString('utf8') : cache.cas.get(key);
    if (!ca) {
      const { DescribeClusterCommand } = await import('@aws-sdk/client-eks');
      const out = await deps.eksIn(region).send(new DescribeClusterCommand({ name: auth.clusterName }), { abortSignal: signal });
      const data = out.cluster?.certificateAuthority?.data;
      if (!data)
        throw probeError('CONFIG_INVALID', `eks:DescribeCluster ${auth.clusterName} in ${region} returned no certificate authority`, {
          field: 'clusters.auth.clusterName',
        });
      ca = Buffer.from(data, 'base64').toString('utf8');
      cache.cas.set(key, ca);
    }
    const token = await eksToken({ clusterName: auth.clusterName, region, credentials: await deps.credentials() });
    deps.redactor.add(token);
    return { server, tls: { ca: [ca] }, headers: { Authorization: `Bearer ${token}` }, userAgent: userAgent('lambda'), ...LAMBDA_TIMEOUTS };
  }
  const arn = cluster.auth.secretArn;
  let value = cache.secrets.get(arn);
  if (value === undefined || now() - value.fetchedAt > SECRET_TTL_MS) {
    const { GetSecretValueCommand } = await import('@aws-sdk/client-secrets-manager');
    const out = await deps.secretsIn(regionOfArn(arn)).send(new GetSecretValueCommand({ SecretId: arn }), { abortSignal: signal });
    if (!out.SecretString) throw probeError('CONFIG_INVALID', `secret ${arn} has no SecretString`, { field: 'clusters.auth.secretArn' });
    value = { value: out.SecretString, fetchedAt: now() };
    cache.secrets.set(arn, value);
  }
  return fromSecret(value.value, arn, server, cluster, deps);
}

async function fromSecret(value: string, arn: string, server: URL, cluster: ClusterConfig, deps: AccessDeps): Promise<ConnectionConfig> {
  let parsed: { token?: string; kubeconfig?: string; caData?: string } | undefined;
  try {
    parsed = JSON.parse(value) as typeof parsed;
  } catch {
    parsed = { kubeconfig: value }; // a plain kubeconfig
  }
  if (parsed?.kubeconfig) {
    const ctx = parseKubeconfig(parsed.kubeconfig, `secret ${arn}`);
    if (ctx.user.exec)
      throw probeError('KUBECONFIG_INVALID', `secret ${arn}: exec credential plugins cannot run in the Lambda; store a token or use auth type "eks"`, {
        file: `secret ${arn}`,
        field: 'users.user.exec',
      });
    const conn = await connectionFor(ctx, { env: {}, redactor: deps.redactor });
    return { ...conn, server, userAgent: userAgent('lambda'), ...LAMBDA_TIMEOUTS };
  }
  if (parsed?.token) {
    deps.redactor.add(parsed.token);
    const caData = parsed.caData ?? cluster.caData;
    // The plan's caData met this rule when it was read (config/clusters.ts); the secret's must too.
    const caProblem = parsed.caData === undefined ? undefined : NAME_RULES.caData(parsed.caData);
    if (caProblem) throw probeError('CONFIG_INVALID', `secret ${arn}: caData ${caProblem}`, { field: 'clusters.auth.secretArn' });
    return {
      server,
      tls: caData ? { ca: [Buffer.from(caData, 'base64').toString('utf8')] } : undefined,
      headers: { Authorization: `Bearer ${parsed.token}` },
      userAgent: userAgent('lambda'),
      ...LAMBDA_TIMEOUTS,
    };
  }
  throw probeError('CONFIG_INVALID', `secret ${arn} must hold {"token": …, "caData"?: …}, {"kubeconfig": …} or a kubeconfig`, {
    field: 'clusters.auth.secretArn',
  });
}
