/**
 * The kubectl model's rules, one row per kind of failure (the proof that they
 * are kubectl's is test/lab/kubectl-model-proof.test.ts, with real kubectl
 * through real hops).
 */
import { describe, expect, it } from 'vitest';
import { kubectlExperience, type KubectlOutcome } from '../../src/probe/kubectl-model.js';
import type { SessionResult, UpgradeOutcome } from '../../src/probe/types.js';

const OK_UPGRADE: UpgradeOutcome = { ok: true, status: 101, handshakeMs: 1, phases: {}, error: null, errorCode: null, kubernetesStatus: null };
function session(transport: 'websocket' | 'spdy', over: Partial<SessionResult> = {}): SessionResult {
  return {
    operation: 'exec', transport, keepalive: 'kubectl', holdSeconds: 8, subprotocol: 'x', upgrade: OK_UPGRADE, firstEchoMs: 1,
    hold: { survived: true, disconnectSeconds: null, cause: null }, echoMs: 1, exitCode: 0, ok: true, error: null, errorCode: null, durationMs: 1, ...over,
  };
}
const refused = (status: number, kubernetesStatus: boolean): Partial<SessionResult> => ({ ok: false, firstEchoMs: null, upgrade: { ...OK_UPGRADE, ok: false, status, handshakeMs: null, errorCode: 'UPGRADE_REJECTED', kubernetesStatus } });
const failedWith = (errorCode: string): Partial<SessionResult> => ({ ok: false, firstEchoMs: null, upgrade: { ...OK_UPGRADE, ok: false, status: null, handshakeMs: null, errorCode, kubernetesStatus: null } });
const cutAfter = (s: number): Partial<SessionResult> => ({ ok: false, echoMs: null, hold: { survived: false, disconnectSeconds: s, cause: 'fin' } });

const outcomes = (op: 'exec' | 'portforward', spdy: Partial<SessionResult>, ws: Partial<SessionResult>, proxyScheme?: string): KubectlOutcome[] =>
  kubectlExperience(op, session('spdy', { operation: op, ...spdy }), session('websocket', { operation: op, ...ws }), { proxyScheme }).map((e) => e.outcome);

describe('what each kubectl (≤1.29, 1.30, 1.31–1.37, GA) experiences', () => {
  it.each([
    ['both work', 'exec', {}, {}, ['works', 'works', 'works', 'works']],
    ['a hop refuses the WebSocket upgrade (non-101): fallback', 'exec', {}, refused(403, false), ['works', 'works-via-fallback', 'works-via-fallback', 'breaks']],
    ['same for port-forward: 1.30 is still SPDY there', 'portforward', {}, refused(403, false), ['works', 'works', 'works-via-fallback', 'breaks']],
    ['the 1.35 RBAC 403 from the API server is an upgrade failure too', 'exec', {}, refused(403, true), ['works', 'works-via-fallback', 'works-via-fallback', 'breaks']],
    ['a 101 without the subprotocol: fallback', 'exec', {}, failedWith('UPGRADE_BAD_RESPONSE'), ['works', 'works-via-fallback', 'works-via-fallback', 'breaks']],
    ['a refused CONNECT: no fallback', 'exec', failedWith('DIAL_PROXY'), failedWith('DIAL_PROXY'), ['breaks', 'breaks', 'breaks', 'breaks']],
    ['no answer to the upgrade: no fallback', 'exec', {}, failedWith('UPGRADE_TIMEOUT'), ['works', 'breaks', 'breaks', 'breaks']],
    ['cut after the upgrade: no fallback, although SPDY survives', 'portforward', {}, cutAfter(6.1), ['works', 'works', 'breaks', 'breaks']],
    ['a hop refusing SPDY: ≤1.29 breaks, and 1.30 port-forward', 'portforward', refused(400, false), {}, ['breaks', 'breaks', 'works', 'works']],
    ['fallback to a SPDY that fails too', 'exec', refused(400, false), refused(403, false), ['breaks', 'breaks', 'breaks', 'breaks']],
  ] as const)('%s', (_name, op, spdy, ws, want) => {
    expect(outcomes(op, spdy, ws)).toEqual(want);
  });

  it('through an https:// proxy, 1.30 cannot dial WebSocket and falls back; 1.31–1.37 works (1.33+) and says 1.31–1.32 fall back', () => {
    const e = kubectlExperience('exec', session('spdy'), session('websocket'), { proxyScheme: 'https:' });
    expect(e.map((x) => x.outcome)).toEqual(['works', 'works-via-fallback', 'works', 'works']);
    expect(e[2]!.reason).toMatch(/1\.31–1\.32 cannot dial WebSocket through an https:\/\/ proxy/);
  });

  it('a transport that was not probed is unknown, not guessed', () => {
    const e = kubectlExperience('exec', undefined, session('websocket', refused(403, false)));
    expect(e.map((x) => x.outcome)).toEqual(['unknown', 'unknown', 'unknown', 'breaks']);
  });
});
