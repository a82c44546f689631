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
import { awsDeps } from '../src/lambda/aws-deps.js';

const log = (line: string) => void process.stdout.write(`${line}\n`);

// Cold start: configuration, clients and caches live as long as the execution environment.
let config: LocationRuntimeConfig | undefined;
let configError: string | undefined;
try {
  config = parseRuntimeConfig(process.env.KSP_LOCATION_CONFIG);
} catch (err) {
  configError = errorMessage(err);
}
const deps: LambdaDeps = awsDeps(config?.region ?? process.env.AWS_REGION ?? 'us-east-1', log);
const cache = new AccessCache();

export async function handler(event: unknown, context: Pick<Context, 'getRemainingTimeInMillis'>): Promise<LocationSummary> {
  if (!config) {
    log(JSON.stringify({ level: 'error', msg: 'bad configuration', error: configError }));
    return { ok: false, location: 'unknown', reports: [], refused: [], error: { code: 'CONFIG_INVALID', message: configError ?? 'no configuration' } };
  }
  return runLocation(event, () => context.getRemainingTimeInMillis(), config, deps, cache);
}
