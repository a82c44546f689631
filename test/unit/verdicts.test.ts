/**
 * The A/B rule of verdicts(): a transport that was not probed is neither
 * "ok" nor "failed", so a one-transport run never blames the other transport.
 */
import { describe, expect, it } from 'vitest';
import { verdictName, verdicts } from '../../src/probe/verdicts.js';
import type { SessionResult } from '../../src/probe/types.js';
import { OK_UPGRADE, session } from '../helpers/sessions.js';

/** A hop that refuses every upgrade with its own 403 (WebSocket and SPDY alike). */
const refusedByHop: Partial<SessionResult> = {
  ok: false,
  firstEchoMs: null,
  echoMs: null,
  upgrade: { ...OK_UPGRADE, ok: false, status: 403, handshakeMs: null, error: 'HTTP 403', errorCode: 'UPGRADE_REJECTED', kubernetesStatus: false },
};

describe('verdicts with one transport probed', () => {
  it('a hop breaking both, probed over WebSocket only: websocket-fails, "not compared", never websocket-broken', () => {
    const [v] = verdicts([session('websocket', refusedByHop)]);
    expect(v!.verdict).toBe('websocket-fails');
    expect(v!.spdy).toBe('not-run');
    expect(v!.diagnosis.map((d) => d.code)).toEqual(['hop-refused-upgrade', 'not-compared']);
    expect(v!.diagnosis.map((d) => d.summary).join(' ')).not.toMatch(/SPDY works|falls back to SPDY, which works/);
  });

  it('over SPDY only, a working path is spdy-ok, not clean (WebSocket was not measured)', () => {
    expect(verdicts([session('spdy')])[0]!.verdict).toBe('spdy-ok');
    expect(verdicts([session('spdy', refusedByHop)])[0]!.verdict).toBe('spdy-fails');
  });

  it('the A/B itself is unchanged with both', () => {
    expect([verdictName(true, true), verdictName(true, false), verdictName(false, true), verdictName(false, false)]).toEqual([
      'clean',
      'websocket-broken',
      'spdy-broken',
      'both-broken',
    ]);
    expect(verdicts([session('spdy'), session('websocket', refusedByHop)])[0]!.diagnosis.map((d) => d.code)).not.toContain('not-compared');
  });
});

describe("an SDK client's sessions (keepalive sdk) are read by the kubectl row's WS-only forecast, not a row of their own", () => {
  const held = { holdSeconds: 8 };
  const cut: Partial<SessionResult> = { ok: false, echoMs: null, hold: { survived: false, disconnectSeconds: 7.0, cause: 'fin' } };
  const run = (sdk: Partial<SessionResult>) =>
    verdicts([session('spdy', held), session('websocket', held), session('websocket', { ...held, keepalive: 'sdk', ...sdk })]);

  it('one row, kubectl clean, WS-only breaks with the SDK session cut at 7.0 s, and the cut is diagnosed on the row', () => {
    const vs = run(cut);
    expect(vs).toHaveLength(1);
    expect(vs[0]!.keepalive).toBe('kubectl');
    expect(vs[0]!.verdict).toBe('clean');
    expect(vs[0]!.kubectl!.find((k) => k.client === 'websocket-only')!.outcome).toBe('breaks');
    expect(vs[0]!.diagnosis.map((d) => d.summary).join(' ')).toMatch(/SDK-client WebSocket/);
  });

  it('the SDK session of another hold is not read: that hold is unknown, never works', () => {
    const vs = verdicts([session('spdy', held), session('websocket', held), session('websocket', { holdSeconds: 30, keepalive: 'sdk' })]);
    expect(vs[0]!.kubectl!.find((k) => k.client === 'websocket-only')!.outcome).toBe('unknown');
  });

  it('the SDK session held: works', () => {
    expect(
      run({})
        .at(0)!
        .kubectl!.find((k) => k.client === 'websocket-only')!.outcome,
    ).toBe('works');
  });
});

describe("the API server's own 400 on the streaming subresources: not-measured, its Status first, no path finding", () => {
  const refused = (message: string): Partial<SessionResult> => ({
    ok: false,
    firstEchoMs: null,
    echoMs: null,
    upgrade: {
      ...OK_UPGRADE,
      ok: false,
      status: 400,
      handshakeMs: null,
      error: `WebSocket exec upgrade answered 400 by the API server (Status BadRequest): ${message}`,
      errorCode: 'UPGRADE_REJECTED',
      kubernetesStatus: true,
    },
  });
  it('no container named on a pod of several: target-missing, the container rule and --container named', () => {
    const r = refused('a container name must be specified for pod probe-target, choose one of: [main echo tty]');
    const [v] = verdicts([session('spdy', r), session('websocket', r)]);
    expect(v!.verdict).toBe('not-measured');
    expect(v!.kubectl).toBeNull();
    expect(v!.diagnosis[0]).toMatchObject({
      code: 'target-missing',
      summary: expect.stringContaining('a container name must be specified for pod probe-target, choose one of: [main echo tty]'),
      check: expect.stringContaining('--container'),
    });
  });
  it("a pod not scheduled: target-not-running with the API server's words", () => {
    const r = refused('pod probe-target does not have a host assigned');
    const [v] = verdicts([session('spdy', r), session('websocket', r)]);
    expect(v!.verdict).toBe('not-measured');
    expect(v!.diagnosis[0]).toMatchObject({ code: 'target-not-running', summary: expect.stringContaining('does not have a host assigned') });
  });
});
