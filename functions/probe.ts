/**
 * The scheduled probe Lambda for one network location: thin. The location's
 * configuration is baked in by the StreamProbe construct (KSP_LOCATION_CONFIG);
 * the event may override clusters, operations, transports, keepalives and holds.
 */
import type { Context } from 'aws-lambda';
import { parseRuntimeConfig, type LocationRuntimeConfig } from '../src/config/probe-config.js';
import { errorMessage } from '../src/errors.js';
import { AccessCache } from '../src/lambda/cluster-access.js';
import { runLocation, type LocationSummary } from '../src/lambda/run-location.js';

const log = (line: string) => void process.stdout.write(`${line}\n`);

// Cold start: configuration, clients and caches live as long as the execution environment.
let config: LocationRuntimeConfig | undefined;
let configError: string | undefined;
try {
  config = parseRuntimeConfig(process.env.KSP_LOCATION_CONFIG);
} catch (err) {
  configError = errorMessage(err);
}
/** An SDK client created on first use: a location that never needs EKS or Secrets Manager never loads them. */
function lazyClient<C extends { send(command: never, options?: never): Promise<unknown> }>(create: () => Promise<C>): Pick<C, 'send'> {
  let client: Promise<C> | undefined;
  return { send: ((command: never, options?: never) => (client ??= create()).then((c) => c.send(command, options))) as C['send'] };
}
let credentials: Promise<() => Promise<import('@smithy/types').AwsCredentialIdentity>> | undefined;
const deps = {
  cloudwatch: lazyClient(async () => new (await import('@aws-sdk/client-cloudwatch')).CloudWatchClient({})),
  secrets: lazyClient(async () => new (await import('@aws-sdk/client-secrets-manager')).SecretsManagerClient({})),
  eks: lazyClient(async () => new (await import('@aws-sdk/client-eks')).EKSClient({})),
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
