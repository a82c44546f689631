/**
 * Cross-location paging with the real @aws-sdk clients against the local AWS stand-in: a location's notifier
 * forwards its page to the project's page bus in another region (EventBridge PutEvents, signed for the bus's region),
 * and the aggregator (DynamoDB GetItem/PutItem, SQS SendMessage with its delay, SNS Publish) pages once for the
 * cluster when every location fails, or for the location after its wait otherwise.
 */
import { CloudWatchLogsClient } from '@aws-sdk/client-cloudwatch-logs';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { EventBridgeClient } from '@aws-sdk/client-eventbridge';
import { SNSClient } from '@aws-sdk/client-sns';
import { SQSClient } from '@aws-sdk/client-sqs';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { isProbeError } from '../../src/errors.js';
import { aggregate, dynamoRecordStore, parseCrossLocationConfig, type CrossLocationConfig, type CrossLocationDeps } from '../../src/lambda/cross-location.js';
import { notify, parseNotifyConfig, type NotifyDeps } from '../../src/lambda/notify.js';
import { startLocalAws, type LocalAws } from '../helpers/local-aws.js';

const BUS = 'arn:aws:events:us-east-1:222222222222:event-bus/ksp-pages';
const TOPIC = 'arn:aws:sns:us-east-1:222222222222:ksp-cross-location-pages';
const LOCATIONS = ['corp-vpc-a', 'eu-central-1-public'] as const;
const REGIONS = { 'corp-vpc-a': 'us-east-1', 'eu-central-1-public': 'eu-central-1' } as const;
const WAIT = 420;

let aws: LocalAws;
let queueUrl: string;
let config: CrossLocationConfig;
let crossDeps: CrossLocationDeps;
let clock: Date;
const logged: string[] = [];
const creds = { accessKeyId: 'AKIDLOCAL', secretAccessKey: 'local' };
const client = (region: string) => ({ region, endpoint: aws.url, credentials: creds });

const change = (location: (typeof LOCATIONS)[number], value: 'ALARM' | 'OK') => ({
  version: '0',
  id: `e-${location}-${value}`,
  'detail-type': 'CloudWatch Alarm State Change',
  source: 'aws.cloudwatch',
  account: '222222222222',
  time: clock.toISOString(),
  region: REGIONS[location],
  resources: [`arn:aws:cloudwatch:${REGIONS[location]}:222222222222:alarm:ksp-${location}-shared-gitops-PAGE`],
  detail: {
    alarmName: `ksp-${location}-shared-gitops-PAGE`,
    state: { value, reason: 'Alarm rule TRUE', timestamp: clock.toISOString() },
    previousState: { value: value === 'ALARM' ? 'OK' : 'ALARM', reason: '', timestamp: clock.toISOString() },
  },
});

/** The location's notifier, as deployed: its page of shared-gitops forwarded to the bus. */
async function notifyFrom(location: (typeof LOCATIONS)[number], value: 'ALARM' | 'OK', bus = BUS) {
  const region = REGIONS[location];
  const notifyConfig = parseNotifyConfig(
    JSON.stringify({
      project: 'ksp',
      location,
      region,
      logGroup: `probe-logs-${location}`,
      routes: {
        [`ksp-${location}-shared-gitops-PAGE`]: {
          topicArn: `arn:aws:sns:${region}:222222222222:ksp-${location}-page`,
          severity: 'PAGE',
          cluster: 'shared-gitops',
          onOk: true,
          forward: bus,
        },
      },
    }),
  );
  const deps: NotifyDeps = {
    logs: new CloudWatchLogsClient(client(region)),
    sns: new SNSClient(client(region)),
    events: (busRegion) => new EventBridgeClient(client(busRegion)),
    log: (l) => logged.push(l),
    now: () => clock,
  };
  return notify(change(location, value), notifyConfig, deps);
}

/** What EventBridge delivers to the aggregator for the last event put on the bus. */
const delivered = () => {
  const e = aws.events.at(-1)!;
  return { version: '0', id: 'x', source: e.source, 'detail-type': e.detailType, account: '222222222222', region: 'us-east-1', detail: e.detail };
};
/** What the queue delivers once a message's delay has passed. */
const due = (i: number) => ({ Records: [{ messageId: `m${i}`, eventSource: 'aws:sqs', body: aws.sent[i]!.body }] });
const advance = (seconds: number) => (clock = new Date(clock.getTime() + seconds * 1000));

beforeAll(async () => {
  aws = await startLocalAws();
  aws.buses.add(BUS);
  for (const l of LOCATIONS) aws.logGroups.set(`probe-logs-${l}`, []);
  queueUrl = `${aws.url}/222222222222/ksp-decisions`;
  config = parseCrossLocationConfig(
    JSON.stringify({ project: 'ksp', topicArn: TOPIC, queueUrl, table: 'ksp-states', waitSeconds: WAIT, clusters: { 'shared-gitops': LOCATIONS } }),
  );
  crossDeps = {
    store: dynamoRecordStore(new DynamoDBClient(client('us-east-1')), 'ksp-states'),
    sns: new SNSClient(client('us-east-1')),
    sqs: new SQSClient({ ...client('us-east-1'), useQueueUrlAsEndpoint: false }),
    log: (l) => logged.push(l),
    now: () => clock,
  };
});
afterAll(async () => {
  await aws?.close();
});
beforeEach(() => {
  aws.tables.set('ksp-states', new Map());
  aws.events.length = 0;
  aws.sent.length = 0;
  aws.published.length = 0;
  aws.calls.length = 0;
  clock = new Date('2026-12-06T12:00:00Z');
});

describe('the notifier forwards a shared cluster’s page to the page bus', () => {
  it('in the bus’s own region, with the finished page; nothing is published from the location', async () => {
    const out = await notifyFrom('eu-central-1-public', 'ALARM');
    expect(out.forwarded).toBe(true);
    expect(aws.calls).toContain('PutEvents us-east-1');
    expect(aws.published).toEqual([]);
    expect(aws.events).toHaveLength(1);
    expect(aws.events[0]).toMatchObject({
      bus: BUS,
      source: 'kube-stream-probe',
      detailType: 'Location page state change',
      detail: {
        project: 'ksp',
        cluster: 'shared-gitops',
        location: 'eu-central-1-public',
        state: 'ALARM',
        subject: 'PAGE: eu-central-1-public -> shared-gitops',
      },
    });
    expect((aws.events[0]!.detail as { message: string }).message).toMatch(/No failed session in the last 6 h/);
  });

  it('a bus that refuses it (gone, another region): the page is published from the location instead, and the log says why', async () => {
    const out = await notifyFrom('corp-vpc-a', 'ALARM', 'arn:aws:events:us-east-1:222222222222:event-bus/deleted');
    expect(out.forwarded).toBeUndefined();
    expect(aws.published).toEqual([expect.objectContaining({ topicArn: 'arn:aws:sns:us-east-1:222222222222:ksp-corp-vpc-a-page' })]);
    expect(logged.at(-2)).toMatch(/"msg":"notify: not forwarded, published here".*ResourceNotFoundException|does not exist/);
  });
});

describe('the aggregator, through DynamoDB, SQS and SNS', () => {
  it('one location fails: no page at once, a decision queued for its wait, then one page naming that location', async () => {
    await notifyFrom('corp-vpc-a', 'ALARM');
    expect(await aggregate(delivered(), config, crossDeps)).toEqual([]);
    expect(aws.sent).toEqual([{ queueUrl, body: JSON.stringify({ cluster: 'shared-gitops' }), delaySeconds: WAIT }]);
    expect(aws.published).toEqual([]);
    advance(WAIT);
    const out = await aggregate(due(0), config, crossDeps);
    expect(out.map((p) => [p.kind, p.state, p.location])).toEqual([['location', 'ALARM', 'corp-vpc-a']]);
    expect(aws.published).toHaveLength(1);
    expect(aws.published[0]).toMatchObject({ topicArn: TOPIC, subject: 'PAGE: corp-vpc-a -> shared-gitops' });
    expect(aws.published[0]!.message).toMatch(/^Seen from corp-vpc-a only: eu-central-1-public, which also probes shared-gitops, has not paged/);
    expect(aws.published[0]!.message).toMatch(/corp-vpc-a's own path to the API server/);
    // Its OK is its RESOLVED; the queue's second look at it changes nothing.
    advance(600);
    await notifyFrom('corp-vpc-a', 'OK');
    expect((await aggregate(delivered(), config, crossDeps)).map((p) => [p.kind, p.state, p.location])).toEqual([['location', 'OK', 'corp-vpc-a']]);
    expect(aws.published.at(-1)!.subject).toBe('RESOLVED: PAGE corp-vpc-a -> shared-gitops');
  });

  it('every location fails within the wait: one page for the cluster, at once, with each location’s page; its RESOLVED when all are OK', async () => {
    await notifyFrom('corp-vpc-a', 'ALARM');
    await aggregate(delivered(), config, crossDeps);
    advance(180);
    await notifyFrom('eu-central-1-public', 'ALARM');
    const out = await aggregate(delivered(), config, crossDeps);
    expect(out.map((p) => [p.kind, p.state])).toEqual([['cluster', 'ALARM']]);
    expect(aws.published[0]!.subject).toBe('PAGE: every location -> shared-gitops');
    expect(aws.published[0]!.message).toMatch(
      /^PAGE: shared-gitops fails from every location that probes it \(corp-vpc-a, eu-central-1-public\): the cluster's side/,
    );
    expect(aws.published[0]!.message).toContain('--- corp-vpc-a (in ALARM since 2026-12-06T12:00:00.000Z) ---');
    expect(aws.published[0]!.message).toContain('--- eu-central-1-public (in ALARM since 2026-12-06T12:03:00.000Z) ---');
    // The first location's delayed decision comes due (the second's change decided the cluster: nothing to wait for).
    expect(aws.sent).toHaveLength(1);
    advance(WAIT);
    expect(await aggregate(due(0), config, crossDeps)).toEqual([]);
    // One recovers: still the cluster's incident; both: its RESOLVED.
    await notifyFrom('corp-vpc-a', 'OK');
    expect(await aggregate(delivered(), config, crossDeps)).toEqual([]);
    await notifyFrom('eu-central-1-public', 'OK');
    expect((await aggregate(delivered(), config, crossDeps)).map((p) => [p.kind, p.state])).toEqual([['cluster', 'OK']]);
    expect(aws.published.map((p) => p.subject)).toEqual(['PAGE: every location -> shared-gitops', 'RESOLVED: PAGE every location -> shared-gitops']);
  });

  it('both locations’ changes decided at the same moment (concurrent invocations): the item’s version makes one of them decide again, and the cluster is paged once', async () => {
    await notifyFrom('corp-vpc-a', 'ALARM');
    const a = delivered();
    await notifyFrom('eu-central-1-public', 'ALARM');
    const b = delivered();
    const outs = await Promise.all([aggregate(a, config, crossDeps), aggregate(b, config, crossDeps)]);
    expect(outs.flat().map((p) => [p.kind, p.state])).toEqual([['cluster', 'ALARM']]);
    expect(aws.published).toHaveLength(1);
    // Both read the empty item first; one write lost and was decided again (three writes).
    expect(aws.calls.filter((c) => c.startsWith('PutItem')).length).toBe(3);
  });

  it('a page SNS refuses is not lost: the decision is taken back, the invocation fails, and its retry publishes it', async () => {
    await notifyFrom('corp-vpc-a', 'ALARM');
    await aggregate(delivered(), config, crossDeps);
    advance(WAIT);
    const refusing = { ...crossDeps, sns: { send: () => Promise.reject(new Error('AuthorizationError: not authorized to perform SNS:Publish')) } };
    await expect(aggregate(due(0), config, refusing)).rejects.toThrow(/AuthorizationError/);
    expect((await aggregate(due(0), config, crossDeps)).map((p) => [p.kind, p.location])).toEqual([['location', 'corp-vpc-a']]);
    expect(aws.published).toHaveLength(1);
  });

  it('a location back to OK before its wait ends is not paged; an older state change arriving late changes nothing', async () => {
    await notifyFrom('corp-vpc-a', 'ALARM');
    const alarm = delivered();
    await aggregate(alarm, config, crossDeps);
    advance(120);
    await notifyFrom('corp-vpc-a', 'OK');
    await aggregate(delivered(), config, crossDeps);
    expect(await aggregate(alarm, config, crossDeps)).toEqual([]);
    expect(logged.at(-1)).toMatch(/older state change ignored/);
    advance(WAIT);
    expect(await aggregate(due(0), config, crossDeps)).toEqual([]);
    expect(aws.published).toEqual([]);
  });

  it('a wait longer than SQS allows (15 minutes) is chained', async () => {
    const long = { ...config, waitSeconds: 3720 };
    await notifyFrom('corp-vpc-a', 'ALARM');
    await aggregate(delivered(), long, crossDeps);
    expect(aws.sent.map((m) => m.delaySeconds)).toEqual([900]);
    for (let i = 0; i < 4; i++) {
      advance(900);
      expect(await aggregate(due(i), long, crossDeps)).toEqual([]);
    }
    expect(aws.sent.map((m) => m.delaySeconds)).toEqual([900, 900, 900, 900, 120]);
    advance(120);
    expect((await aggregate(due(4), long, crossDeps)).map((p) => p.location)).toEqual(['corp-vpc-a']);
  });

  it('the cluster’s page names the diagnosis from the pages’ field, never out of a subject (issue 53)', async () => {
    // Each location's evidence: a cut whose sentence does not start with its code.
    for (const l of LOCATIONS)
      aws.logGroups.set(`probe-logs-${l}`, [
        {
          timestamp: clock.getTime() - 60_000,
          message: JSON.stringify({
            msg: 'evidence',
            run: `run-${l}`,
            cluster: 'shared-gitops',
            session: 'WebSocket exec',
            row: '65s',
            attempt: 'only',
            ok: false,
            diagnosisCode: 'idle-timeout',
            diagnosis: 'The session was cut after 8.0 s idle - a hop',
            check: 'Raise the idle timeout.',
          }),
        },
      ]);
    try {
      await notifyFrom('corp-vpc-a', 'ALARM');
      const first = delivered();
      expect(first.detail).toMatchObject({ subject: 'PAGE: corp-vpc-a -> shared-gitops - idle-timeout', diagnosis: 'idle-timeout' });
      // Both pages' subjects without the code (cut, as SNS cuts subjects at 100 characters): the field still says it.
      await aggregate({ ...first, detail: { ...(first.detail as object), subject: 'PAGE: corp-vpc-a -> shared-gitops' } }, config, crossDeps);
      await notifyFrom('eu-central-1-public', 'ALARM');
      const second = delivered();
      const cut = { ...second, detail: { ...(second.detail as object), subject: 'PAGE: eu-central-1-public -> shared-gitops' } };
      const out = await aggregate(cut, config, crossDeps);
      expect(out.map((p) => p.subject)).toEqual(['PAGE: every location -> shared-gitops - idle-timeout']);
      // A field that is not a code is refused, naming it.
      const err = await aggregate({ ...second, detail: { ...(second.detail as object), diagnosis: 'Cut: after 8 s' } }, config, crossDeps).catch(
        (x: unknown) => x,
      );
      expect(isProbeError(err) && (err.context as { field: string }).field).toBe('event.detail.diagnosis');
    } finally {
      for (const l of LOCATIONS) aws.logGroups.set(`probe-logs-${l}`, []);
    }
  });

  it('what it cannot place is a typed error naming the field, never a silent drop', async () => {
    await notifyFrom('corp-vpc-a', 'ALARM');
    const e = delivered();
    const bad = [
      [{ ...e, detail: { ...(e.detail as object), cluster: 'payments' } }, 'event.detail.cluster'],
      [{ ...e, detail: { ...(e.detail as object), location: 'elsewhere' } }, 'event.detail.location'],
      [{ ...e, detail: { ...(e.detail as object), state: 'INSUFFICIENT_DATA' } }, 'event.detail.state'],
      [{ ...e, 'detail-type': 'CloudWatch Alarm State Change' }, 'event'],
      [{ Records: [{ body: '{"cluster":"payments"}' }] }, 'Records[0].body.cluster'],
      [{ Records: [{ body: 'not json' }] }, 'Records[0].body'],
    ] as const;
    for (const [event, field] of bad) {
      const err = await aggregate(event, config, crossDeps).then(
        () => undefined,
        (x: unknown) => x,
      );
      expect(isProbeError(err) && err.code === 'CONFIG_INVALID' && (err.context as { field: string }).field).toBe(field);
    }
    expect(() => parseCrossLocationConfig('{"project":"ksp"}')).toThrow(/KSP_CROSS_LOCATION_CONFIG\.topicArn is required/);
  });
});
