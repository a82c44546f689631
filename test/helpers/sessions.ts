/**
 * Session results for rule tests (the model, verdicts, diagnoses): a session that worked, and the ways an upgrade
 * fails, built in one place. Setups that produce results from real traffic are in test/integration and test/lab.
 */
import type { ProbeReport, SessionResult, UpgradeOutcome } from '../../src/probe/types.js';
import { verdicts } from '../../src/probe/verdicts.js';

export const OK_UPGRADE: UpgradeOutcome = { ok: true, status: 101, handshakeMs: 1, phases: {}, error: null, errorCode: null, kubernetesStatus: null };

/** An exec session with kubectl's keepalive that worked, with `over` applied. */
export function session(transport: 'websocket' | 'spdy', over: Partial<SessionResult> = {}): SessionResult {
  return {
    operation: 'exec',
    transport,
    keepalive: 'kubectl',
    holdSeconds: 0,
    subprotocol: 'x',
    upgrade: OK_UPGRADE,
    firstEchoMs: 1,
    hold: { survived: true, disconnectSeconds: null, cause: null },
    echoMs: 1,
    exitCode: 0,
    ok: true,
    error: null,
    errorCode: null,
    durationMs: 1,
    ...over,
  };
}

/** The upgrade answered `status` by the API server (a Kubernetes Status) or by a hop. */
export const refused = (status: number, kubernetesStatus: boolean): Partial<SessionResult> => ({
  ok: false,
  firstEchoMs: null,
  echoMs: null,
  upgrade: { ...OK_UPGRADE, ok: false, status, handshakeMs: null, error: `HTTP ${status}`, errorCode: 'UPGRADE_REJECTED', kubernetesStatus },
});

/** The report a run of `results` publishes (verdicts derived from them, as the runner does), for the metrics code. */
export function probeReport(results: readonly SessionResult[], location: string, cluster: string): ProbeReport {
  return {
    probeVersion: 'test',
    location,
    cluster,
    server: { url: 'https://x', version: null },
    target: { namespace: 'n', pod: 'p' },
    rbac: [],
    results: [...results],
    verdicts: verdicts(results),
    findings: [],
    startedAt: '',
    durationMs: 0,
  } as ProbeReport;
}
