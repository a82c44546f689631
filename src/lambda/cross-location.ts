/**
 * Where it broke, across locations: the aggregator that turns the pages of a cluster probed from several locations
 * into one page for the cluster when every location fails (its side: API server, kubelet, admission, RBAC) and a page
 * for the location otherwise (a hop on that location's path: what this probe exists to find). Each location's
 * notifier forwards its finished page (location-page.ts) to the project's page bus; this function, in the home
 * location (infra/cross-location.ts), keeps each cluster's location states in a DynamoDB item and decides:
 *
 * - every location of the cluster in ALARM: one page for the cluster, at once, with each location's diagnosis and
 *   evidence link; its RESOLVED when every location is OK again;
 * - otherwise a location in ALARM is paged for itself once it has been in ALARM for `waitSeconds` (the time the same
 *   failure needs to reach every location's alarms: one run of the fastest schedule and two minutes, config
 *   cross-location.ts), so an outage every location sees is not paged per location first; the wait is an SQS message
 *   delayed until then (at most 15 minutes a message, so longer waits are chained); a location back to OK before
 *   its wait ends is not paged (logged); a paged location's OK is its RESOLVED.
 *
 * Decisions run concurrently (a location's change and a queued decision may arrive together): a cluster's item is
 * written only if no other decision wrote it since it was read (its version), else decided again, so a page is sent
 * once. An event for a cluster or location this aggregator does not know is a typed error: its failure is
 * an alarm that pages directly.
 */
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { SNSClient } from '@aws-sdk/client-sns';
import type { SQSClient } from '@aws-sdk/client-sqs';
import { Checker } from '../config/checker.js';
import { probeError } from '../errors.js';
import { parseLocationPage } from './location-page.js';
import { subjectOf } from './notify.js';

/** KSP_CROSS_LOCATION_CONFIG: from infra/cross-location.ts. */
export interface CrossLocationConfig {
  readonly project: string;
  readonly topicArn: string;
  readonly queueUrl: string;
  readonly table: string;
  /** How long a location's page waits for the other locations to agree (s). */
  readonly waitSeconds: number;
  /** Each cluster probed from several locations: its locations. */
  readonly clusters: Readonly<Record<string, readonly string[]>>;
}

/** What is kept per cluster (one DynamoDB item, `record` as JSON). */
export interface ClusterRecord {
  readonly locations: Record<string, LocationState>;
  /** When the cluster was paged (every location failing), until every location is OK again. */
  clusterPaged?: string;
}
export interface LocationState {
  state: 'ALARM' | 'OK';
  since: string;
  subject: string;
  message: string;
  run?: string;
  /** The diagnosis code its page named (LocationPage.diagnosis). */
  diagnosis?: string;
  /** Paged for this location alone. */
  paged: boolean;
}

/** A cluster's record and the version it was read at (0: none yet). */
export interface Versioned {
  readonly record: ClusterRecord;
  readonly version: number;
}

export interface RecordStore {
  get(cluster: string): Promise<Versioned | undefined>;
  /** Writes `record` as version + 1 if the item is still at `version`; false when another decision wrote first. */
  put(cluster: string, record: ClusterRecord, version: number): Promise<boolean>;
}

/** Decisions retried after losing a race for the same cluster's item, before the invocation fails (and is retried). */
export const MAX_RACES = 5;

export interface CrossLocationDeps {
  readonly store: RecordStore;
  readonly sns: Pick<SNSClient, 'send'>;
  readonly sqs: Pick<SQSClient, 'send'>;
  readonly log: (line: string) => void;
  readonly now?: () => Date;
}

/** One page or RESOLVED the aggregator published. */
export interface Published {
  readonly kind: 'cluster' | 'location';
  readonly state: 'ALARM' | 'OK';
  readonly cluster: string;
  readonly location?: string;
  readonly subject: string;
  readonly message: string;
}

/** SQS's longest message delay (SendMessage DelaySeconds: 0 to 900). */
export const MAX_DELAY_SECONDS = 900;

/** The aggregator's entry: a location's page from the bus, or a delayed decision from the queue. */
export async function aggregate(raw: unknown, config: CrossLocationConfig, deps: CrossLocationDeps): Promise<Published[]> {
  const records = (raw as { Records?: unknown } | null)?.Records;
  if (Array.isArray(records)) {
    const out: Published[] = [];
    for (const [i, r] of records.entries()) {
      const cluster = decisionCluster(r, i, config);
      out.push(...(await decided(cluster, config, deps, (record) => record)));
    }
    return out;
  }
  const page = parseLocationPage(raw);
  const locations = knownLocations(config, page.cluster, 'event.detail.cluster');
  if (!locations.includes(page.location))
    throw probeError('CONFIG_INVALID', `cross-location: ${page.location} is not a location probing ${page.cluster} (${locations.join(', ')})`, {
      field: 'event.detail.location',
    });
  if (page.project !== config.project)
    throw probeError('CONFIG_INVALID', `cross-location: a page of project ${page.project}, not ${config.project}`, { field: 'event.detail.project' });
  return decided(page.cluster, config, deps, (record) => {
    const before = record.locations[page.location];
    if (before && Date.parse(before.since) > Date.parse(page.since)) {
      // EventBridge delivers at least once and not in order: an older state change changes nothing.
      deps.log(JSON.stringify({ level: 'info', msg: 'cross-location: older state change ignored', cluster: page.cluster, location: page.location }));
      return undefined;
    }
    record.locations[page.location] = {
      state: page.state,
      since: page.since,
      subject: page.subject,
      message: page.message,
      ...(page.run ? { run: page.run } : {}),
      ...(page.diagnosis ? { diagnosis: page.diagnosis } : {}),
      paged: before?.paged === true,
    };
    return record;
  });
}

/**
 * Read the cluster's record, apply `change` (undefined: nothing to do), decide, and write it only if no other decision
 * wrote since it was read (a DynamoDB condition on its version; a lost race is decided again from the new record), so
 * two locations' changes arriving together page once. Then publish what was decided and queue the next decision; if
 * either fails, the decision's claims are taken back so the retry publishes it (a page may then go out twice, never
 * not at all).
 */
async function decided(
  cluster: string,
  config: CrossLocationConfig,
  deps: CrossLocationDeps,
  change: (record: ClusterRecord) => ClusterRecord | undefined,
): Promise<Published[]> {
  for (let race = 0; race < MAX_RACES; race++) {
    const read = await deps.store.get(cluster);
    const applied = change(structuredClone(read?.record ?? { locations: {} }));
    if (!applied) return [];
    const after = structuredClone(applied);
    const { out, soonest } = decide(cluster, after, config, (deps.now?.() ?? new Date()).getTime());
    const version = read?.version ?? 0;
    if (!(await deps.store.put(cluster, after, version))) continue;
    try {
      await publish(cluster, out, config, deps);
      if (soonest !== undefined) await later(cluster, soonest, config, deps);
    } catch (err) {
      await deps.store.put(cluster, applied, version + 1).catch(() => false);
      throw err;
    }
    if (!out.length) deps.log(JSON.stringify({ level: 'info', msg: 'cross-location: nothing to publish', cluster, clusterPaged: after.clusterPaged ?? null }));
    return out;
  }
  // Five lost races in a row: the invocation fails, EventBridge or SQS retries it, and its Errors alarm pages if it stays.
  throw probeError('INTERNAL', `cross-location: ${cluster}'s record kept changing under ${MAX_RACES} decisions in a row`, { where: 'cross-location decide' });
}

async function publish(cluster: string, out: readonly Published[], config: CrossLocationConfig, deps: CrossLocationDeps): Promise<void> {
  const { PublishCommand } = await import('@aws-sdk/client-sns');
  for (const p of out) {
    await deps.sns.send(new PublishCommand({ TopicArn: config.topicArn, Subject: p.subject, Message: p.message }));
    deps.log(JSON.stringify({ level: 'info', msg: 'cross-location: published', kind: p.kind, state: p.state, cluster, location: p.location ?? null }));
  }
}

function knownLocations(config: CrossLocationConfig, cluster: unknown, field: string): readonly string[] {
  const locations = typeof cluster === 'string' ? config.clusters[cluster] : undefined;
  if (!locations)
    throw probeError(
      'CONFIG_INVALID',
      `cross-location: ${JSON.stringify(cluster)} is not a cluster several locations probe (${Object.keys(config.clusters).join(', ')})`,
      {
        field,
      },
    );
  return locations;
}

function decisionCluster(r: unknown, i: number, config: CrossLocationConfig): string {
  const c = new Checker('');
  const body = c.str(c.obj(r, `Records[${i}]`), 'body', `Records[${i}]`);
  let cluster: unknown;
  try {
    cluster = (JSON.parse(body) as { cluster?: unknown }).cluster;
  } catch {
    c.fail(`Records[${i}].body`, 'is not JSON');
  }
  knownLocations(config, cluster, `Records[${i}].body.cluster`);
  return cluster as string;
}

/** A decision for `cluster` in `seconds` (chained past SQS's 15-minute limit). */
async function later(cluster: string, seconds: number, config: CrossLocationConfig, deps: CrossLocationDeps): Promise<void> {
  const { SendMessageCommand } = await import('@aws-sdk/client-sqs');
  const delay = Math.max(0, Math.min(MAX_DELAY_SECONDS, Math.ceil(seconds)));
  await deps.sqs.send(new SendMessageCommand({ QueueUrl: config.queueUrl, MessageBody: JSON.stringify({ cluster }), DelaySeconds: delay }));
}

const list = (names: readonly string[]) => names.join(', ');

/**
 * What `cluster`'s location states call for at `now` (ms): the pages to publish, marked in `record` as published;
 * and, when a location's wait has not ended, in how many seconds to decide again.
 */
function decide(cluster: string, record: ClusterRecord, config: CrossLocationConfig, now: number): { out: Published[]; soonest?: number } {
  let soonest: number | undefined;
  const locations = config.clusters[cluster]!;
  const stateOf = (l: string) => record.locations[l];
  const alarming = locations.filter((l) => stateOf(l)?.state === 'ALARM');
  const out: Published[] = [];
  if (alarming.length === locations.length) {
    if (!record.clusterPaged) {
      out.push(
        clusterPage(
          cluster,
          locations.map((l) => [l, stateOf(l)!] as const),
        ),
      );
      record.clusterPaged = new Date(now).toISOString();
    }
  } else if (record.clusterPaged) {
    if (alarming.length === 0) {
      out.push({
        kind: 'cluster',
        state: 'OK',
        cluster,
        subject: subjectOf(`RESOLVED: PAGE every location -> ${cluster}`),
        message: `${cluster} works again from every location that probes it (${list(locations)}): each location's page is OK.`,
      });
      record.clusterPaged = undefined;
      for (const l of locations) if (stateOf(l)) stateOf(l)!.paged = false;
    }
    // Some locations recovered, others not: still the cluster's incident, told once; its RESOLVED when all are OK.
  } else {
    for (const l of locations) {
      const s = stateOf(l);
      if (!s) continue;
      if (s.state === 'OK' && s.paged) {
        out.push({ kind: 'location', state: 'OK', cluster, location: l, subject: s.subject, message: s.message });
        s.paged = false;
      }
      if (s.state !== 'ALARM' || s.paged) continue;
      const waited = (now - Date.parse(s.since)) / 1000;
      if (waited + 1 >= config.waitSeconds) {
        out.push(locationPage(cluster, l, s, locations));
        s.paged = true;
      } else soonest = Math.min(soonest ?? Infinity, config.waitSeconds - waited);
    }
  }
  return { out, ...(soonest !== undefined ? { soonest } : {}) };
}

function locationPage(cluster: string, location: string, s: LocationState, locations: readonly string[]): Published {
  const others = locations.filter((l) => l !== location);
  return {
    kind: 'location',
    state: 'ALARM',
    cluster,
    location,
    subject: s.subject,
    message: [
      `Seen from ${location} only: ${list(others)}, which also ${others.length > 1 ? 'probe' : 'probes'} ${cluster}, ${others.length > 1 ? 'have' : 'has'} not paged (kubectl works from there, or the probe there is not reporting: see that location's probe-health ticket). So the break is most likely on ${location}'s own path to the API server (a proxy, load balancer, NAT gateway or firewall between them), not the cluster.`,
      '',
      s.message,
    ].join('\n'),
  };
}

function clusterPage(cluster: string, states: readonly (readonly [string, LocationState])[]): Published {
  // The first location's diagnosis, by its field (the code its notifier read from its evidence).
  const diagnosis = states.find(([, s]) => s.diagnosis)?.[1].diagnosis;
  return {
    kind: 'cluster',
    state: 'ALARM',
    cluster,
    subject: subjectOf(`PAGE: every location -> ${cluster}${diagnosis ? ` - ${diagnosis}` : ''}`),
    message: [
      `PAGE: ${cluster} fails from every location that probes it (${list(states.map(([l]) => l))}): the cluster's side (its API server, kubelet, admission or RBAC), not one location's network path. One page for the cluster; each location's diagnosis and evidence follow.`,
      ...states.flatMap(([l, s]) => ['', `--- ${l} (in ALARM since ${s.since}) ---`, s.message]),
    ].join('\n'),
  };
}

/** KSP_CROSS_LOCATION_CONFIG, checked. */
export function parseCrossLocationConfig(text: string | undefined): CrossLocationConfig {
  const c = new Checker('');
  let raw: unknown;
  try {
    raw = JSON.parse(text ?? '');
  } catch {
    c.fail('KSP_CROSS_LOCATION_CONFIG', 'is not JSON');
  }
  const f = 'KSP_CROSS_LOCATION_CONFIG';
  const o = c.obj(raw, f);
  for (const k of ['project', 'topicArn', 'queueUrl', 'table'] as const) c.str(o, k, f);
  if (typeof o.waitSeconds !== 'number' || !(o.waitSeconds >= 0)) c.fail(`${f}.waitSeconds`, 'must be a number of seconds');
  const clusters = c.obj(o.clusters, `${f}.clusters`);
  for (const k of Object.keys(clusters)) c.strings(clusters, k, `${f}.clusters`, 2);
  return o as unknown as CrossLocationConfig;
}

/**
 * The DynamoDB store: one item per cluster, its record as JSON and a version number; GetItem consistent, PutItem
 * conditional on the version read (ConditionalCheckFailedException: another decision wrote first).
 */
export function dynamoRecordStore(client: Pick<DynamoDBClient, 'send'>, table: string): RecordStore {
  return {
    async get(cluster) {
      const { GetItemCommand } = await import('@aws-sdk/client-dynamodb');
      const r = await client.send(new GetItemCommand({ TableName: table, Key: { cluster: { S: cluster } }, ConsistentRead: true }));
      const json = r.Item?.record?.S;
      return json ? { record: JSON.parse(json) as ClusterRecord, version: Number(r.Item?.version?.N ?? 0) } : undefined;
    },
    async put(cluster, record, version) {
      const { PutItemCommand } = await import('@aws-sdk/client-dynamodb');
      try {
        await client.send(
          new PutItemCommand({
            TableName: table,
            Item: { cluster: { S: cluster }, record: { S: JSON.stringify(record) }, version: { N: String(version + 1) } },
            ...(version === 0
              ? { ConditionExpression: 'attribute_not_exists(cluster)' }
              : { ConditionExpression: '#v = :v', ExpressionAttributeNames: { '#v': 'version' }, ExpressionAttributeValues: { ':v': { N: String(version) } } }),
          }),
        );
        return true;
      } catch (err) {
        if ((err as { name?: string }).name === 'ConditionalCheckFailedException') return false;
        throw err;
      }
    },
  };
}
