/**
 * The AWS side of a run (CloudWatch, Secrets Manager, EKS, credentials), shared by the two runners: the
 * Lambda handler (functions/probe.ts) and the container task (functions/task.ts). SDK clients are created on
 * first use, one per region: a location that never needs EKS or Secrets Manager never loads them, and a
 * secret or cluster in another region is asked in its own region.
 */
import type { AwsCredentialIdentity } from '@smithy/types';
import { AWS_CLIENT_CONFIG } from '../config/lambda-limits.js';
import type { LambdaDeps } from './run-location.js';

function perRegion<C>(create: (region: string) => Promise<C>): (region: string) => Pick<C & { send: never }, 'send'> {
  const clients = new Map<string, Promise<C>>();
  return (region) => {
    const get = () => {
      let c = clients.get(region);
      if (!c) clients.set(region, (c = create(region)));
      return c;
    };
    return {
      send: ((command: never, options?: never) =>
        get().then((c) => (c as unknown as { send: (a: never, b?: never) => unknown }).send(command, options))) as never,
    };
  };
}

export function awsDeps(region: string, log: (line: string) => void): LambdaDeps {
  let credentials: Promise<() => Promise<AwsCredentialIdentity>> | undefined;
  const cloudwatch = perRegion(async (r) => new (await import('@aws-sdk/client-cloudwatch')).CloudWatchClient({ region: r, ...AWS_CLIENT_CONFIG }));
  return {
    cloudwatch: cloudwatch(region),
    secretsIn: perRegion(async (r) => new (await import('@aws-sdk/client-secrets-manager')).SecretsManagerClient({ region: r, ...AWS_CLIENT_CONFIG })),
    eksIn: perRegion(async (r) => new (await import('@aws-sdk/client-eks')).EKSClient({ region: r, ...AWS_CLIENT_CONFIG })),
    credentials: async () => (await (credentials ??= import('@aws-sdk/credential-provider-node').then((m) => m.defaultProvider())))(),
    log,
  };
}
