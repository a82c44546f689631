/**
 * EKS bearer tokens, as `aws eks get-token` mints them: a presigned STS
 * GetCallerIdentity URL (regional endpoint, `x-k8s-aws-id: <cluster>` signed,
 * 60 s expiry), base64url without padding, prefixed `k8s-aws-v1.`. Minted per
 * invocation; the token is a credential and is registered with the redactor.
 */
import { Sha256 } from '@aws-crypto/sha256-js';
import { SignatureV4 } from '@smithy/signature-v4';
import type { AwsCredentialIdentity } from '@smithy/types';

export const EKS_TOKEN_PREFIX = 'k8s-aws-v1.';
export const CLUSTER_ID_HEADER = 'x-k8s-aws-id';
/** aws eks get-token presigns for 60 s; the authenticator accepts 0..900. */
export const PRESIGN_EXPIRES_SECONDS = 60;

export function stsHostname(region: string): string {
  return region.startsWith('cn-') ? `sts.${region}.amazonaws.com.cn` : `sts.${region}.amazonaws.com`;
}

export async function eksToken(o: { clusterName: string; region: string; credentials: AwsCredentialIdentity; now?: Date }): Promise<string> {
  const signer = new SignatureV4({ service: 'sts', region: o.region, credentials: o.credentials, sha256: Sha256 });
  const hostname = stsHostname(o.region);
  const signed = await signer.presign(
    {
      method: 'GET',
      protocol: 'https:',
      hostname,
      path: '/',
      query: { Action: 'GetCallerIdentity', Version: '2011-06-15' },
      headers: { host: hostname, [CLUSTER_ID_HEADER]: o.clusterName },
    },
    { expiresIn: PRESIGN_EXPIRES_SECONDS, signingDate: o.now },
  );
  const query = Object.entries(signed.query ?? {})
    .map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(String(v))}`)
    .join('&');
  const url = `https://${hostname}/?${query}`;
  return EKS_TOKEN_PREFIX + Buffer.from(url).toString('base64url');
}
