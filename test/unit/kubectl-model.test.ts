/**
 * The kubectl model's rules, one row per kind of failure (the proof that they
 * are kubectl's is test/lab/kubectl-model-proof.test.ts, with real kubectl
 * through real hops).
 */
import { describe, expect, it } from 'vitest';
import { kubectlExperience, type KubectlExperience, type KubectlOutcome } from '../../src/probe/kubectl-model.js';
import type { SessionResult } from '../../src/probe/types.js';
import { OK_UPGRADE, refused, session as base } from '../helpers/sessions.js';

/** The model's rows hold 8 s with kubectl's keepalive. */
const session = (transport: 'websocket' | 'spdy', over: Partial<SessionResult> = {}): SessionResult => base(transport, { holdSeconds: 8, ...over });
const failedWith = (errorCode: string): Partial<SessionResult> => ({
  ok: false,
  firstEchoMs: null,
  upgrade: { ...OK_UPGRADE, ok: false, status: null, handshakeMs: null, errorCode, kubernetesStatus: null },
});
const cutAfter = (s: number): Partial<SessionResult> => ({ ok: false, echoMs: null, hold: { survived: false, disconnectSeconds: s, cause: 'fin' } });

const outcomes = (op: 'exec' | 'portforward', spdy: Partial<SessionResult>, ws: Partial<SessionResult>, proxyScheme?: string): KubectlOutcome[] =>
  kubectlExperience(op, session('spdy', { operation: op, ...spdy }), session('websocket', { operation: op, ...ws }), { proxyScheme }).map((e) => e.outcome);

describe('what each kubectl (≤1.29, 1.30, 1.31–1.37, 1.38) and a WebSocket-only client experience', () => {
  it.each([
    // After a hold kubectl's pings kept its session alive: without an SDK client's session WebSocket-only is unknown.
    ['both work', 'exec', {}, {}, ['works', 'works', 'works', 'works', 'unknown']],
    [
      'a hop refuses the WebSocket upgrade (non-101): fallback, at 1.38 too; WebSocket-only clients break',
      'exec',
      {},
      refused(403, false),
      ['works', 'works-via-fallback', 'works-via-fallback', 'works-via-fallback', 'breaks'],
    ],
    [
      'same for port-forward: 1.30 is still SPDY there',
      'portforward',
      {},
      refused(403, false),
      ['works', 'works', 'works-via-fallback', 'works-via-fallback', 'breaks'],
    ],
    [
      'the 1.35 RBAC 403 from the API server is an upgrade failure too',
      'exec',
      {},
      refused(403, true),
      ['works', 'works-via-fallback', 'works-via-fallback', 'works-via-fallback', 'breaks'],
    ],
    [
      'a 101 without the subprotocol: fallback',
      'exec',
      {},
      failedWith('UPGRADE_BAD_RESPONSE'),
      ['works', 'works-via-fallback', 'works-via-fallback', 'works-via-fallback', 'breaks'],
    ],
    ['a refused CONNECT: no fallback', 'exec', failedWith('DIAL_PROXY'), failedWith('DIAL_PROXY'), ['breaks', 'breaks', 'breaks', 'breaks', 'breaks']],
    ['no answer to the upgrade: no fallback', 'exec', {}, failedWith('UPGRADE_TIMEOUT'), ['works', 'breaks', 'breaks', 'breaks', 'breaks']],
    ['cut after the upgrade: no fallback, although SPDY survives', 'portforward', {}, cutAfter(6.1), ['works', 'works', 'breaks', 'breaks', 'breaks']],
    // With no SDK client's session, WebSocket-only port-forward (the legacy protocol) was not measured: unknown.
    ['a hop refusing SPDY: ≤1.29 breaks, and 1.30 port-forward', 'portforward', refused(400, false), {}, ['breaks', 'breaks', 'works', 'works', 'unknown']],
    ['fallback to a SPDY that fails too', 'exec', refused(400, false), refused(403, false), ['breaks', 'breaks', 'breaks', 'breaks', 'breaks']],
  ] as const)('%s', (_name, op, spdy, ws, want) => {
    expect(outcomes(op, spdy, ws)).toEqual(want);
  });

  it('1.38 is never "breaks" where 1.31–1.37 works through the fallback (KEP-4006 GA keeps it); it says SPDY can no longer be forced', () => {
    const e = kubectlExperience('exec', session('spdy'), session('websocket', refused(403, false)));
    const ga = e.find((x) => x.client === '1.38')!;
    expect(ga.outcome).toBe('works-via-fallback');
    expect(ga.reason).toMatch(/KUBECTL_\*_WEBSOCKETS=false no longer forces SPDY/);
  });

  it('every forecast carries its source: the KEP section and the GA PR for 1.38, the client-go issues for WebSocket-only clients', () => {
    const e = kubectlExperience('exec', session('spdy'), session('websocket'));
    for (const x of e) expect(x.source.length).toBeGreaterThan(20);
    expect(e.find((x) => x.client === '1.38')!.source).toMatch(/"GA" graduation criteria.*kubernetes\/enhancements#6364, milestone v1\.38/);
    expect(e.find((x) => x.client === 'websocket-only')!.source).toMatch(/piraeus-operator#1036, troubleshoot#2037/);
  });

  it('through an https:// proxy, 1.30 cannot dial WebSocket and falls back (1.30.4+; 1.30.0–1.30.3 fail); 1.31–1.37 works (1.33+) and says 1.31–1.32 fall back', () => {
    const e = kubectlExperience('exec', session('spdy'), session('websocket'), { proxyScheme: 'https:' });
    expect(e.map((x) => x.outcome)).toEqual(['works', 'works-via-fallback', 'works', 'works', 'unknown']);
    expect(e[1]!.reason).toMatch(/1\.30\.0–1\.30\.3 have no such fallback and fail here: kubernetes#126231/);
    expect(e[2]!.reason).toMatch(/1\.31–1\.32 cannot dial WebSocket through an https:\/\/ proxy/);
  });

  it('a transport that was not probed is unknown, not guessed', () => {
    const e = kubectlExperience('exec', undefined, session('websocket', refused(403, false)));
    expect(e.map((x) => x.outcome)).toEqual(['unknown', 'unknown', 'unknown', 'unknown', 'breaks']);
  });
});

describe("the WebSocket-only forecast reads the session held as SDK clients hold (keepalive sdk), never kubectl's pings", () => {
  const sdk = (op: 'exec' | 'portforward', over: Partial<SessionResult> = {}) => session('websocket', { operation: op, keepalive: 'sdk', ...over });
  const wsOnly = (
    op: 'exec' | 'portforward',
    ws: Partial<SessionResult>,
    sdkSession: SessionResult | undefined,
    holdSeconds = 8,
    proxyScheme?: string,
  ): KubectlExperience =>
    kubectlExperience(
      op,
      session('spdy', { operation: op, holdSeconds }),
      session('websocket', { operation: op, holdSeconds, ...ws }),
      { proxyScheme },
      { sdk: sdkSession },
    ).find((e) => e.client === 'websocket-only')!;

  it.each(['exec', 'portforward'] as const)('%s: kubectl held (pings), the SDK client was cut at 7.0 s: breaks, and says why', (op) => {
    const f = wsOnly(op, {}, sdk(op, cutAfter(7.0)));
    expect(f.outcome).toBe('breaks');
    expect(f.reason).toMatch(/SDK clients and browser terminals break/);
    expect(f.reason).toMatch(/tools on client-go ≥ 0\.36 work/);
  });
  it('both held: works, for both kinds of client', () => {
    const f = wsOnly('exec', {}, sdk('exec'));
    expect(f.outcome).toBe('works');
    expect(f.reason).toMatch(/SDK clients and browser terminals work.*tools on client-go ≥ 0\.36 work/);
  });
  it("the SDK client held but kubectl's WebSocket failed: client-go ≥ 0.36 tools break, so the column does", () => {
    const f = wsOnly('exec', refused(403, false), sdk('exec'));
    expect(f.outcome).toBe('breaks');
    expect(f.reason).toMatch(/tools on client-go ≥ 0\.36 break/);
  });
  it.each([
    ['exec', 8, 'unknown'],
    ['portforward', 8, 'unknown'],
    // Port-forward: SDK clients speak the kubelet's legacy protocol, not the tunnel kubectl's session measured.
    ['portforward', 0, 'unknown'],
    // Exec with no hold: SDK clients send what kubectl sends (no ping is due), so kubectl's session speaks for them.
    ['exec', 0, 'works'],
  ] as const)('without an SDK client session, %s at hold %s s is %s, with the flag that measures it', (op, hold, want) => {
    const f = wsOnly(op, {}, undefined, hold);
    expect(f.outcome).toBe(want);
    if (want === 'unknown') expect(f.reason).toMatch(/--keepalive sdk/);
  });
  it('a WebSocket refusal breaks the column with or without an SDK session', () => {
    expect(wsOnly('portforward', refused(403, false), undefined).outcome).toBe('breaks');
  });
  it('through a proxy, says the Python client dials directly (it ignores proxy-url), which was not measured', () => {
    expect(wsOnly('exec', {}, sdk('exec'), 8, 'http:').reason).toMatch(/Python client ignores the kubeconfig's proxy-url/);
    expect(wsOnly('exec', {}, sdk('exec'), 8).reason).not.toMatch(/Python/);
  });
});
