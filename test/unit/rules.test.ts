/**
 * Rules a mutation left unnoticed before (issue 25's list), each named after
 * the rule: the tolerance of knownTimeoutNear, a hop's 404/403 on both
 * upgrades is a path finding (not "target missing"), STREAM_ERROR after a 101
 * never falls back, and SPDY WINDOW_UPDATE frames carry no flags.
 */
import { describe, expect, it } from 'vitest';
import { knownTimeoutNear } from '../../src/probe/diagnosis.js';
import { kubectlExperience } from '../../src/probe/kubectl-model.js';
import { verdicts } from '../../src/probe/verdicts.js';
import { SpdyFrameParser } from '../../src/streaming/spdy/parser.js';
import { refused, session } from '../helpers/sessions.js';

describe("knownTimeoutNear: within 3 % (at least 1 s) of a documented device's timer", () => {
  it.each([
    [60, /Application Load Balancer \(60 s.*nginx/],
    [58.2, /60 s/],
    [61.8, /60 s/],
    [58.1, undefined],
    [61.9, undefined],
    [30, /connection lifetime of GCP external Application Load Balancer/],
    [29, /30 s/],
    [31, /30 s/],
    [28.9, undefined],
    [100, /Cloudflare/],
    [240, /Azure Load Balancer with "TCP reset on idle"/],
    [350, undefined], // the 350 s devices forget flows: they never close at their timer (idle-bracket.ts dates them)
  ] as const)('%s s', (s, want) => {
    const got = knownTimeoutNear(s);
    if (want === undefined) expect(got).toBeUndefined();
    else expect(got).toMatch(want);
  });
});

describe("a hop answering 404 or 403 to both upgrades is a path finding, not the probe's own setup", () => {
  it.each([404, 403])('%s from a hop (no Kubernetes Status): both-broken with hop-refused-upgrade, never target-missing or target-forbidden', (status) => {
    const [v] = verdicts([session('websocket', refused(status, false)), session('spdy', refused(status, false))]);
    expect(v!.verdict).toBe('both-broken');
    expect(v!.diagnosis.map((d) => d.code)).toEqual(['hop-refused-upgrade', 'hop-refused-upgrade']);
  });

  it.each([
    [404, 'target-missing'],
    [403, 'target-forbidden'],
  ])('%s from the API server (a Kubernetes Status) on both: not-measured, %s', (status, code) => {
    const [v] = verdicts([session('websocket', refused(status, true)), session('spdy', refused(status, true))]);
    expect(v!.verdict).toBe('not-measured');
    expect(v!.diagnosis[0]!.code).toBe(code);
  });
});

describe('STREAM_ERROR after the 101 never falls back', () => {
  it('1.31-1.38 break although SPDY works; the error stream is not an upgrade failure', () => {
    const ws = session('websocket', { ok: false, firstEchoMs: null, echoMs: null, errorCode: 'STREAM_ERROR', error: 'the server reported an error' });
    const e = kubectlExperience('exec', session('spdy'), ws);
    expect(e.map((x) => [x.client, x.outcome])).toEqual([
      ['1.29', 'works'],
      ['1.30', 'breaks'],
      ['1.31-1.37', 'breaks'],
      ['1.38', 'breaks'],
      ['websocket-only', 'breaks'],
    ]);
    expect(e[2]!.reason).toMatch(/upgraded, then the server sent an error on the error stream; kubectl does not fall back/);
  });
});

describe('SPDY WINDOW_UPDATE frames carry no flags', () => {
  const frame = (flags: number) => Buffer.from([0x80, 0x03, 0x00, 0x09, flags, 0x00, 0x00, 0x08, 0, 0, 0, 1, 0, 0, 0x10, 0]);
  it('flags 0: stream 1, delta 4096', () => {
    expect(new SpdyFrameParser().push(frame(0))).toEqual([{ type: 'WINDOW_UPDATE', streamId: 1, delta: 4096 }]);
  });
  it('any flag is a protocol error naming it', () => {
    expect(() => new SpdyFrameParser().push(frame(1))).toThrow(/flags 1, must be 0/);
  });
});
