/** The session evidence recorder and the Logs Insights link: bounds, masking, and the console's link format. */
import { describe, expect, it } from 'vitest';
import { jsurl, logsInsightsUrl, parseJsurl } from '../../src/aws/logs-insights-url.js';
import { evidenceLink, evidenceQuery } from '../../src/lambda/evidence-log.js';
import { EVIDENCE_LIMITS, EvidenceRecorder } from '../../src/probe/evidence.js';
import type { Clock } from '../../src/timers.js';

function fakeClock(): Clock & { t: number } {
  const c = { t: 1000, now: () => c.t, after: () => () => {} };
  return c;
}

describe('EvidenceRecorder', () => {
  it('keeps the newest control frames, counts the ones before, dates each from the start, and chains the wire log', () => {
    const clock = fakeClock();
    const chained: string[] = [];
    const rec = new EvidenceRecorder(
      clock,
      (t) => t.replaceAll('tok3n', '<redacted>'),
      (e) => chained.push(e.kind),
    );
    rec.log({
      kind: 'request',
      conn: 1,
      what: 'x',
      method: 'GET',
      url: 'https://h/api?x=tok3n',
      headers: [
        ['Authorization', 'Bearer tok3n'],
        ['X-Other', 'a tok3n b'],
      ],
    });
    for (let i = 0; i < EVIDENCE_LIMITS.frames + 8; i++) {
      clock.t += 100;
      rec.log({ kind: 'websocket', conn: 1, what: 'x', direction: i % 2 ? 'received' : 'sent', frame: i % 2 ? 'PONG' : 'PING' });
    }
    const t = rec.trace();
    expect(t.request).toEqual({
      atMs: 0,
      method: 'GET',
      url: 'https://h/api?x=<redacted>',
      headers: [
        ['Authorization', 'Bearer <masked>'],
        ['X-Other', 'a <redacted> b'],
      ],
    });
    expect(t.frames).toHaveLength(EVIDENCE_LIMITS.frames);
    expect(t.framesDropped).toBe(8);
    expect(t.frames.at(-1)).toEqual({ atMs: 2000, direction: '<', frame: 'WebSocket PONG' });
    expect(t.frames[0]!.atMs).toBe(900);
    expect(chained).toHaveLength(1 + EVIDENCE_LIMITS.frames + 8);
  });

  it('clips long values', () => {
    const rec = new EvidenceRecorder(fakeClock(), (t) => t);
    rec.log({ kind: 'response', conn: 1, what: 'x', status: 403, statusText: 'Forbidden', headers: [['X-Long', 'v'.repeat(1000)]] });
    expect(rec.trace().reply!.headers[0]![1].length).toBe(EVIDENCE_LIMITS.valueChars);
  });
});

describe('the Logs Insights link', () => {
  it("is Grafana's CloudWatch console link, character for character (its test's vector)", () => {
    // grafana/grafana public/app/plugins/datasource/cloudwatch: "View in CloudWatch console" for
    // stats count(@message) by bin(1h) over two log groups, 2016-12-31 15:00–16:00 UTC.
    expect(
      logsInsightsUrl({
        region: 'us-east-1',
        logGroup: 'fake-log-group-one',
        query: 'stats count(@message) by bin(1h)',
        range: { start: new Date('2016-12-31T15:00:00.000Z'), end: new Date('2016-12-31T16:00:00.000Z') },
      }).replace("~'fake-log-group-one))", "~'fake-log-group-one~'fake-log-group-two))"),
    ).toBe(
      "https://us-east-1.console.aws.amazon.com/cloudwatch/home?region=us-east-1#logs-insights:queryDetail=~(end~'2016-12-31T16*3a00*3a00.000Z~start~'2016-12-31T15*3a00*3a00.000Z~timeType~'ABSOLUTE~tz~'UTC~editorString~'stats*20count*28*40message*29*20by*20bin*281h*29~isLiveTail~false~source~(~'fake-log-group-one~'fake-log-group-two))",
    );
  });

  it('JSURL round-trips what the links hold', () => {
    const v = { a: 'x y$z~(é)', n: -1.5, b: false, z: null, arr: ['/aws/lambda/p', 'q'], empty: [], o: { k: 'v' } };
    expect(parseJsurl(jsurl(v))).toEqual(v);
  });

  it("the evidence link opens the run's query over the log group, a minute either side of the run", () => {
    const url = evidenceLink({
      region: 'eu-west-1',
      logGroup: '/aws/lambda/kube-stream-probe-eu-west-1-public',
      runId: '3f0c6f8e-aaaa-bbbb-cccc-0123456789ab',
      from: new Date('2026-12-06T10:00:00Z'),
      to: new Date('2026-12-06T10:01:10Z'),
    });
    expect(url.startsWith('https://eu-west-1.console.aws.amazon.com/cloudwatch/home?region=eu-west-1#logs-insights:queryDetail=')).toBe(true);
    const detail = parseJsurl(url.split('queryDetail=')[1]!) as Record<string, unknown>;
    expect(detail).toEqual({
      end: '2026-12-06T10:02:10.000Z',
      start: '2026-12-06T09:59:00.000Z',
      timeType: 'ABSOLUTE',
      tz: 'UTC',
      editorString: evidenceQuery('3f0c6f8e-aaaa-bbbb-cccc-0123456789ab'),
      isLiveTail: false,
      source: ['/aws/lambda/kube-stream-probe-eu-west-1-public'],
    });
    expect(evidenceQuery('a"b')).toContain('run = "a\\"b"');
  });
});
