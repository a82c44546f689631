/**
 * The scheduled probe Lambda for one network location: thin. The location's
 * configuration is baked in by the StreamProbe construct (KSP_LOCATION_CONFIG);
 * the event may override clusters, operations, transports, keepalives and holds. The same bundle's `notify` is the
 * location's notifier, and its `aggregate` the project's cross-location aggregator (below).
 */
import type { Context } from 'aws-lambda';
import { parseRuntimeConfig, type LocationRuntimeConfig } from '../src/config/probe-config.js';
import { errorMessage } from '../src/errors.js';
import { AccessCache } from '../src/lambda/cluster-access.js';
import { runLocation, type LambdaDeps, type LocationSummary } from '../src/lambda/run-location.js';
import { awsDeps } from '../src/lambda/aws-deps.js';
import { notify as notifyAlarm, parseNotifyConfig, type NotifyConfig, type NotifyDeps, type NotifyOutcome } from '../src/lambda/notify.js';
import {
  aggregate as aggregateLocations,
  dynamoRecordStore,
  parseCrossLocationConfig,
  type CrossLocationConfig,
  type CrossLocationDeps,
} from '../src/lambda/cross-location.js';
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
const deps: LambdaDeps = awsDeps(config?.region ?? process.env.AWS_REGION ?? 'us-east-1', log);
const cache = new AccessCache();

export async function handler(event: unknown, context: Pick<Context, 'getRemainingTimeInMillis'>): Promise<LocationSummary> {
  if (!config) {
    log(JSON.stringify({ level: 'error', msg: 'bad configuration', error: configError }));
    return { ok: false, location: 'unknown', reports: [], refused: [], error: { code: 'CONFIG_INVALID', message: configError ?? 'no configuration' } };
  }
  return runLocation(event, () => context.getRemainingTimeInMillis(), config, deps, cache);
}

/**
 * The notifier (src/lambda/notify.ts), the same bundle's second entry (handler `index.notify`, infra/notifier.ts):
 * an alarm's state change in, the page or ticket with its run's diagnosis and evidence link out. Its configuration
 * is KSP_NOTIFY_CONFIG; a bad one, or an event it cannot route, fails the invocation (its Errors alarm pages).
 */
let notifyConfig: NotifyConfig | undefined;
let notifyDeps: NotifyDeps | undefined;
export async function notify(event: unknown): Promise<NotifyOutcome> {
  notifyConfig ??= parseNotifyConfig(process.env.KSP_NOTIFY_CONFIG);
  if (!notifyDeps) {
    const region = notifyConfig.region;
    const [{ CloudWatchLogsClient }, { SNSClient }, { EventBridgeClient }] = await Promise.all([
      import('@aws-sdk/client-cloudwatch-logs'),
      import('@aws-sdk/client-sns'),
      import('@aws-sdk/client-eventbridge'),
    ]);
    const buses = new Map<string, InstanceType<typeof EventBridgeClient>>();
    notifyDeps = {
      logs: new CloudWatchLogsClient({ region, ...AWS_CLIENT_CONFIG }),
      sns: new SNSClient({ region, ...AWS_CLIENT_CONFIG }),
      // The page bus may be in another region: EventBridge is asked there.
      events: (busRegion) => buses.get(busRegion) ?? buses.set(busRegion, new EventBridgeClient({ region: busRegion, ...AWS_CLIENT_CONFIG })).get(busRegion)!,
      log,
    };
  }
  return notifyAlarm(event, notifyConfig, notifyDeps);
}

/**
 * The cross-location aggregator (src/lambda/cross-location.ts), the bundle's third entry (handler `index.aggregate`,
 * infra/cross-location.ts): a location's forwarded page or a delayed decision in, the page for the location or the
 * cluster out. Its configuration is KSP_CROSS_LOCATION_CONFIG; a bad one, or an event it cannot place, fails the
 * invocation (its Errors alarm pages).
 */
let crossConfig: CrossLocationConfig | undefined;
let crossDeps: CrossLocationDeps | undefined;
export async function aggregate(event: unknown): Promise<{ published: number }> {
  crossConfig ??= parseCrossLocationConfig(process.env.KSP_CROSS_LOCATION_CONFIG);
  if (!crossDeps) {
    const region = process.env.AWS_REGION ?? 'us-east-1';
    const [{ DynamoDBClient }, { SNSClient }, { SQSClient }] = await Promise.all([
      import('@aws-sdk/client-dynamodb'),
      import('@aws-sdk/client-sns'),
      import('@aws-sdk/client-sqs'),
    ]);
    crossDeps = {
      store: dynamoRecordStore(new DynamoDBClient({ region, ...AWS_CLIENT_CONFIG }), crossConfig.table),
      sns: new SNSClient({ region, ...AWS_CLIENT_CONFIG }),
      sqs: new SQSClient({ region, ...AWS_CLIENT_CONFIG }),
      log,
    };
  }
  return { published: (await aggregateLocations(event, crossConfig, crossDeps)).length };
}
