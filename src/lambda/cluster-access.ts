/**
 * How the Lambda reaches each cluster: EKS through its own IAM role (a fresh
 * presigned-STS token per invocation; the CA from the config or
 * eks:DescribeCluster), or a kubeconfig / bearer token kept in Secrets Manager
 * (read once per cold start). Secrets are registered with the redactor.
 */
import type { EKSClient } from '@aws-sdk/client-eks';
import type { SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import type { AwsCredentialIdentity } from '@smithy/types';
import { eksToken } from '../aws/eks-token.js';
import { userAgent } from '../version.js';
import { LAMBDA_CONNECTION_TIMEOUTS } from '../config/lambda-limits.js';
import type { ClusterConfig } from '../config/probe-config.js';
import { probeError } from '../errors.js';
import { connectionFor } from '../kube/credentials.js';
import { parseKubeconfig } from '../kube/kubeconfig.js';
import type { SecretRedactor } from '../kube/secrets.js';
import type { ConnectionConfig } from '../net/connection.js';

export interface AccessDeps {
  readonly secrets: Pick<SecretsManagerClient, 'send'>;
  readonly eks: Pick<EKSClient, 'send'>;
  readonly credentials: () => Promise<AwsCredentialIdentity>;
  readonly redactor: SecretRedactor;
}

/** Per cold start: secret values and DescribeCluster CAs. */
export class AccessCache {
  readonly secrets = new Map<string, string>();
  readonly cas = new Map<string, string>();
}

const LAMBDA_TIMEOUTS = LAMBDA_CONNECTION_TIMEOUTS;

export async function connectionForCluster(cluster: ClusterConfig, region: string, deps: AccessDeps, cache: AccessCache): Promise<ConnectionConfig> {
  const server = new URL(cluster.endpoint);
  if (cluster.auth.type === 'eks') {
    const auth = cluster.auth;
    let ca = cluster.caData ? Buffer.from(cluster.caData, 'base64').toString('utf8') : cache.cas.get(auth.clusterName);
    if (!ca) {
      const { DescribeClusterCommand } = await import('@aws-sdk/client-eks');
      const out = await deps.eks.send(new DescribeClusterCommand({ name: auth.clusterName }));
      const data = out.cluster?.certificateAuthority?.data;
      if (!data) throw probeError('CONFIG_INVALID', `eks:DescribeCluster ${auth.clusterName} returned no certificate authority`, { field: 'clusters.auth.clusterName' });
      ca = Buffer.from(data, 'base64').toString('utf8');
      cache.cas.set(auth.clusterName, ca);
    }
    const token = await eksToken({ clusterName: auth.clusterName, region: auth.region ?? region, credentials: await deps.credentials() });
    deps.redactor.add(token);
    return { server, tls: { ca: [ca] }, headers: { Authorization: `Bearer ${token}` }, userAgent: userAgent('lambda'), ...LAMBDA_TIMEOUTS };
  }
  const arn = cluster.auth.secretArn;
  let value = cache.secrets.get(arn);
  if (value === undefined) {
    const { GetSecretValueCommand } = await import('@aws-sdk/client-secrets-manager');
    const out = await deps.secrets.send(new GetSecretValueCommand({ SecretId: arn }));
    if (!out.SecretString) throw probeError('CONFIG_INVALID', `secret ${arn} has no SecretString`, { field: 'clusters.auth.secretArn' });
    value = out.SecretString;
    cache.secrets.set(arn, value);
  }
  let parsed: { token?: string; kubeconfig?: string; caData?: string } | undefined;
  try {
    parsed = JSON.parse(value) as typeof parsed;
  } catch {
    parsed = { kubeconfig: value }; // a plain kubeconfig
  }
  if (parsed?.kubeconfig) {
    const ctx = parseKubeconfig(parsed.kubeconfig, `secret ${arn}`);
    if (ctx.user.exec) throw probeError('KUBECONFIG_INVALID', `secret ${arn}: exec credential plugins cannot run in the Lambda; store a token or use auth type "eks"`, { file: `secret ${arn}`, field: 'users.user.exec' });
    const conn = await connectionFor(ctx, { env: {}, redactor: deps.redactor });
    return { ...conn, server, userAgent: userAgent('lambda'), ...LAMBDA_TIMEOUTS };
  }
  if (parsed?.token) {
    deps.redactor.add(parsed.token);
    const caData = parsed.caData ?? cluster.caData;
    return {
      server,
      tls: caData ? { ca: [Buffer.from(caData, 'base64').toString('utf8')] } : undefined,
      headers: { Authorization: `Bearer ${parsed.token}` },
      userAgent: userAgent('lambda'),
      ...LAMBDA_TIMEOUTS,
    };
  }
  throw probeError('CONFIG_INVALID', `secret ${arn} must hold {"token": …, "caData"?: …}, {"kubeconfig": …} or a kubeconfig`, { field: 'clusters.auth.secretArn' });
}
