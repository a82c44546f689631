/**
 * The scheduled probe Lambda for one network location: thin. The location's
 * configuration is baked in by the StreamProbe construct (KSP_LOCATION_CONFIG);
 * the event may override clusters, operations, transports, keepalives and holds.
 */
import type { Context } from 'aws-lambda';
import { parseRuntimeConfig, type LocationRuntimeConfig } from '../src/config/probe-config.js';
import { errorMessage } from '../src/errors.js';
import { AccessCache } from '../src/lambda/cluster-access.js';
import { runLocation, type LambdaDeps, type LocationSummary } from '../src/lambda/run-location.js';
import { AWS_CLIENT_CONFIG } from '../src/config/lambda-limits.js';

const log = (line: string) => void process.stdout.write(`${line}\n`);

// Cold start: configuration, clients and caches live as long as the execution environment.
let config: LocationRuntimeConfig | undefined;
let configError: string | undefined;
try {
  config = parseRuntimeConfig(process.env.KSP_LOCATION_CONFIG);
} catch (err) {
  configError = errorMessage(err);
}
/**
 * SDK clients created on first use, one per region: a location that never needs EKS or Secrets Manager
 * never loads them, and a secret or cluster in another region is asked in its own region.
 */
function perRegion<C>(create: (region: string) => Promise<C>): (region: string) => Pick<C & { send: never }, 'send'> {
  const clients = new Map<string, Promise<C>>();
  return (region) => {
    const get = () => {
      let c = clients.get(region);
      if (!c) clients.set(region, (c = create(region)));
      return c;
    };
    return { send: ((command: never, options?: never) => get().then((c) => (c as unknown as { send: (a: never, b?: never) => unknown }).send(command, options))) as never };
  };
}
let credentials: Promise<() => Promise<import('@smithy/types').AwsCredentialIdentity>> | undefined;
const cloudwatch = perRegion(async (region) => new (await import('@aws-sdk/client-cloudwatch')).CloudWatchClient({ region, ...AWS_CLIENT_CONFIG }));
const deps: LambdaDeps = {
  cloudwatch: cloudwatch(config?.region ?? process.env.AWS_REGION ?? 'us-east-1'),
  secretsIn: perRegion(async (region) => new (await import('@aws-sdk/client-secrets-manager')).SecretsManagerClient({ region, ...AWS_CLIENT_CONFIG })),
  eksIn: perRegion(async (region) => new (await import('@aws-sdk/client-eks')).EKSClient({ region, ...AWS_CLIENT_CONFIG })),
  credentials: async () => (await (credentials ??= import('@aws-sdk/credential-provider-node').then((m) => m.defaultProvider())))(),
  log,
};
const cache = new AccessCache();

export async function handler(event: unknown, context: Pick<Context, 'getRemainingTimeInMillis'>): Promise<LocationSummary> {
  if (!config) {
    log(JSON.stringify({ level: 'error', msg: 'bad configuration', error: configError }));
    return { ok: false, location: 'unknown', reports: [], refused: [], error: { code: 'CONFIG_INVALID', message: configError ?? 'no configuration' } };
  }
  return runLocation(event, () => context.getRemainingTimeInMillis(), config, deps, cache);
}
