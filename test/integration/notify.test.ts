/**
 * The notifier (src/lambda/notify.ts) with the real @aws-sdk clients against the local AWS stand-in
 * (FilterLogEvents with CloudWatch Logs' JSON filter patterns, SNS Publish with SNS's subject rules), over evidence
 * lines of a real run: the emulated API server behind a hop that refuses both upgrades, logged as the Lambda logs
 * them. The page carries the run's diagnosis sentence, what to check, and the link to exactly that run's evidence.
 */
import { CloudWatchLogsClient } from '@aws-sdk/client-cloudwatch-logs';
import { SNSClient } from '@aws-sdk/client-sns';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmulatorWithKubeconfig, type EmulatorWithKubeconfig } from '../../lab/emulator/kubeconfig.js';
import { upstreamOf, type Hop } from '../../lab/hops/common.js';
import { startL7Hop } from '../../lab/hops/l7-hop.js';
import { parseJsurl } from '../../src/aws/logs-insights-url.js';
import { evidenceLogLines, evidenceQuery, recentEvidenceQuery } from '../../src/lambda/evidence-log.js';
import { notify, parseNotifyConfig, type NotifyConfig } from '../../src/lambda/notify.js';
import { runPlan } from '../../src/probe/runner.js';
import { startLocalAws, type LocalAws } from '../helpers/local-aws.js';
import { labPlan } from '../helpers/plan.js';

const TOKEN = 'notify-secret-token-77aa';
const PAGE_TOPIC = 'arn:aws:sns:eu-west-1:111111111111:ksp-page';
const TICKET_TOPIC = 'arn:aws:sns:eu-west-1:111111111111:ksp-ticket';
const LOG_GROUP = 'S-ProbeLogs736D0130-AbCdEf012345';
const PAGE = 'ksp-eu-west-1-public-prod-eu-PAGE';

let aws: LocalAws;
let lab: EmulatorWithKubeconfig;
let hop: Hop;
let config: NotifyConfig;
let deps: Parameters<typeof notify>[2];
let runId: string;
let runLines: ReturnType<typeof evidenceLogLines>;
const logged: string[] = [];
const now = new Date('2026-12-06T12:00:00Z');

const change = (alarmName: string, value: 'ALARM' | 'OK', previous = value === 'ALARM' ? 'OK' : 'ALARM') => ({
  version: '0',
  id: 'e1',
  'detail-type': 'CloudWatch Alarm State Change',
  source: 'aws.cloudwatch',
  account: '111111111111',
  time: now.toISOString(),
  region: 'eu-west-1',
  resources: [`arn:aws:cloudwatch:eu-west-1:111111111111:alarm:${alarmName}`],
  detail: {
    alarmName,
    state: { value, reason: 'Alarm rule TRUE', timestamp: now.toISOString() },
    previousState: { value: previous, reason: '', timestamp: now.toISOString() },
    configuration: { description: 'PAGE: …' },
  },
});

beforeAll(async () => {
  aws = await startLocalAws();
  lab = await startEmulatorWithKubeconfig({});
  hop = await startL7Hop('corp-waf', { upstream: upstreamOf(lab.emulator.url), refuse: ['websocket', 'spdy'] });
  const plan = labPlan(hop.url);
  const report = await runPlan({
    ...plan,
    location: 'eu-west-1-public',
    cluster: { ...plan.cluster, name: 'prod-eu', connection: { ...plan.cluster.connection, headers: { Authorization: `Bearer ${TOKEN}` } } },
  });
  // The run's lines as the Lambda writes them, five minutes ago; an older run of another cluster before it.
  runId = '0b0c3f7e-1111-4222-8333-944445555666';
  const older = evidenceLogLines({ ...report, cluster: 'other' }, { id: 'older-run', location: 'eu-west-1-public', schedule: 'short' });
  const lines = evidenceLogLines(report, { id: runId, location: 'eu-west-1-public', schedule: 'short' });
  runLines = lines;
  aws.logGroups.set(LOG_GROUP, [
    ...older.map((l, i) => ({ timestamp: now.getTime() - 3600_000 + i, message: JSON.stringify(l) })),
    { timestamp: now.getTime() - 400_000, message: JSON.stringify({ level: 'info', msg: 'verdict', run: runId, cluster: 'prod-eu' }) },
    { timestamp: now.getTime() - 350_000, message: 'START RequestId: not json' },
    ...lines.map((l, i) => ({ timestamp: now.getTime() - 300_000 + i * 10, message: JSON.stringify(l) })),
  ]);
  aws.logsPageSize = 3; // several pages: the notifier follows nextToken
  config = parseNotifyConfig(
    JSON.stringify({
      location: 'eu-west-1-public',
      region: 'eu-west-1',
      logGroup: LOG_GROUP,
      routes: {
        [PAGE]: { topicArn: PAGE_TOPIC, severity: 'PAGE', cluster: 'prod-eu', onOk: true },
        'ksp-eu-west-1-public-ga-readiness': { topicArn: TICKET_TOPIC, severity: 'TICKET' },
        'ksp-eu-west-1-public-other-PAGE': { topicArn: PAGE_TOPIC, severity: 'PAGE', cluster: 'other', onOk: true },
      },
    }),
  );
  const client = { region: 'eu-west-1', endpoint: aws.url, credentials: { accessKeyId: 'AKIDLOCAL', secretAccessKey: 'local' } };
  deps = { logs: new CloudWatchLogsClient(client), sns: new SNSClient(client), log: (l) => logged.push(l), now: () => now };
}, 60_000);
afterAll(async () => {
  await hop?.close();
  await lab?.stop();
  await aws?.close();
});

describe('the notifier', () => {
  it("a page carries the newest failed run's diagnosis, what to check, the failed sessions and the link to that run's evidence", async () => {
    const out = await notify(change(PAGE, 'ALARM'), config, deps);
    expect(out.run).toBe(runId);
    const sent = aws.published.at(-1)!;
    expect(sent).toMatchObject({ topicArn: PAGE_TOPIC, subject: 'PAGE: eu-west-1-public -> prod-eu - hop-refused-upgrade' });
    expect(sent.message).toMatch(/^PAGE: ksp-eu-west-1-public-prod-eu-PAGE is ALARM since 2026-12-06T12:00:00.000Z\.\nDiagnosis: hop-refused-upgrade: /);
    expect(sent.message).toMatch(/\nCheck next: .+/);
    expect(sent.message).toContain(`Failed in run ${runId}`);
    expect(sent.message).toMatch(/WebSocket exec 0s \(first\); WebSocket exec 0s \(retry\)/);
    const url = /That run's evidence \(what the wire showed\): (\S+)/.exec(sent.message)![1]!;
    const detail = parseJsurl(url.split('queryDetail=')[1]!) as Record<string, unknown>;
    expect(detail).toMatchObject({ editorString: evidenceQuery(runId), source: [LOG_GROUP], timeType: 'ABSOLUTE' });
    // The range holds the run's lines, with a minute either side.
    expect(Date.parse(detail.start as string)).toBe(now.getTime() - 300_000 - 60_000);
    expect(Date.parse(detail.end as string)).toBeGreaterThan(now.getTime() - 300_000 + 60_000);
    expect(JSON.stringify(aws.published)).not.toContain(TOKEN);
    expect(aws.calls.filter((c) => c.startsWith('FilterLogEvents')).length).toBeGreaterThan(1);
  });

  it('a run older than the last half hour is found in the last 6 h', async () => {
    const out = await notify(change('ksp-eu-west-1-public-other-PAGE', 'ALARM'), config, deps);
    expect(out.run).toBe('older-run');
    expect(out.message).toMatch(/\nDiagnosis: hop-refused-upgrade: /);
  });

  it('its OK: resolved, with nothing looked up', async () => {
    const before = aws.calls.length;
    await notify(change(PAGE, 'OK'), config, deps);
    expect(aws.published.at(-1)).toMatchObject({ topicArn: PAGE_TOPIC, subject: 'RESOLVED: PAGE eu-west-1-public -> prod-eu' });
    expect(aws.calls.slice(before)).toEqual(['Publish eu-west-1']);
  });

  it("a ticket reads every cluster's evidence and names the cluster", async () => {
    await notify(change('ksp-eu-west-1-public-ga-readiness', 'ALARM'), config, deps);
    const sent = aws.published.at(-1)!;
    expect(sent.topicArn).toBe(TICKET_TOPIC);
    expect(sent.message).toContain(`Failed in run ${runId} at`);
    expect(sent.message).toContain('(prod-eu)');
    // A ticket says only that it opened: its OK publishes nothing.
    const count = aws.published.length;
    expect(await notify(change('ksp-eu-west-1-public-ga-readiness', 'OK'), config, deps)).toMatchObject({ skipped: true });
    expect(aws.published.length).toBe(count);
  });

  it('the subject names the diagnosis by its field, never by the words of its sentence (issue 53)', async () => {
    expect(runLines[0]!.diagnosisCode).toBe('hop-refused-upgrade');
    // The same run's lines, the first session a one-off (flapping) and the sentences not starting with their codes.
    const lines = runLines.map((l, i) => ({
      ...l,
      diagnosisCode: i === 0 ? 'flapping' : 'idle-timeout',
      diagnosis: i === 0 ? 'hop-refused-upgrade: a sentence that begins like another code' : 'Cut: after 8.0 s idle.',
    }));
    aws.logGroups.set(
      'fields-group',
      lines.map((l, i) => ({ timestamp: now.getTime() - 300_000 + i * 10, message: JSON.stringify(l) })),
    );
    const out = await notify(change(PAGE, 'ALARM'), { ...config, logGroup: 'fields-group' }, deps);
    expect(out.subject).toBe('PAGE: eu-west-1-public -> prod-eu - idle-timeout');
    expect(out.diagnosis).toBe('idle-timeout');
    expect(out.message).toMatch(/\nDiagnosis: Cut: after 8\.0 s idle\.\n/);
  });

  it('evidence that cannot be read never loses the page: it says why and links the recent evidence', async () => {
    const broken = { ...config, logGroup: 'no-such-group' };
    const out = await notify(change(PAGE, 'ALARM'), broken, deps);
    expect(out.run).toBeUndefined();
    expect(out.message).toMatch(/The evidence could not be read \(.*log group does not exist.*\)\. Recent evidence: https:\/\//);
    const url = /Recent evidence: (\S+)/.exec(out.message)![1]!;
    expect(parseJsurl(url.split('queryDetail=')[1]!)).toMatchObject({ editorString: recentEvidenceQuery('prod-eu'), source: ['no-such-group'] });
    expect(aws.published.at(-1)!.topicArn).toBe(PAGE_TOPIC);
    expect(logged.some((l) => /notify: evidence unread/.test(l))).toBe(true);
  });

  it('an alarm it has no route for, or an event that is not an alarm change: a typed error naming the field, nothing published', async () => {
    const count = aws.published.length;
    await expect(notify(change('someone-elses-alarm', 'ALARM'), config, deps)).rejects.toMatchObject({
      code: 'CONFIG_INVALID',
      message: expect.stringMatching(/no route for alarm someone-elses-alarm/),
    });
    await expect(notify({ 'detail-type': 'Scheduled Event' }, config, deps)).rejects.toMatchObject({
      code: 'CONFIG_INVALID',
      message: expect.stringMatching(/event\.detail-type is "Scheduled Event"/),
    });
    expect(() => parseNotifyConfig('{"location":"x"}')).toThrow(/KSP_NOTIFY_CONFIG\.region must be a string/);
    expect(aws.published.length).toBe(count);
  });
});
