/**
 * Runs a plan: every operation × transport × keepalive × hold session at
 * once (a 65 s hold plan takes about 65 s), plus the server version and the
 * RBAC preflight, then the A/B verdicts and diagnoses.
 */
import { RestClient, needsCreateForWebSocket, serverVersion } from '../kube/rest.js';
import { rbacPreflight } from '../kube/rbac.js';
import { OPERATIONS, type Transport } from '../vocabulary.js';
import { crossFindings, explainFailure } from './diagnosis.js';
import { DEFAULT_ECHO_TIMEOUT_MS, runSession, type SessionOptions } from './session.js';
import type { AccessSummary, Diagnosis, ProbePlan, ProbeReport, SessionResult, SessionSpec, Verdict, VerdictName } from './types.js';

/** The sessions of a plan's matrix. */
export function expandPlan(plan: Pick<ProbePlan, 'operations' | 'transports' | 'keepalives' | 'holdsSeconds'>): SessionSpec[] {
  const specs: SessionSpec[] = [];
  for (const operation of plan.operations)
    for (const keepalive of plan.keepalives)
      for (const holdSeconds of plan.holdsSeconds)
        for (const transport of plan.transports) {
          // A hold of 0 s sends no keepalive at all, so one keepalive mode says it all.
          if (holdSeconds === 0 && keepalive !== plan.keepalives[0]) continue;
          specs.push({ operation, transport, keepalive, holdSeconds });
        }
  return specs;
}

export function verdictName(spdyOk: boolean | undefined, wsOk: boolean | undefined): VerdictName {
  if (spdyOk !== false && wsOk !== false) return 'clean';
  if (spdyOk !== false) return 'websocket-broken';
  if (wsOk !== false) return 'spdy-broken';
  return 'both-broken';
}

export function verdicts(results: readonly SessionResult[], context: { proxy?: string; serverVersion?: string | null }): Verdict[] {
  const out: Verdict[] = [];
  const keys = new Set(results.map((r) => `${r.operation}|${r.keepalive}|${r.holdSeconds}`));
  for (const key of keys) {
    const group = results.filter((r) => `${r.operation}|${r.keepalive}|${r.holdSeconds}` === key);
    const by = (t: Transport) => group.find((r) => r.transport === t);
    const spdy = by('spdy');
    const ws = by('websocket');
    const diagnosis = [ws, spdy].flatMap((r) => (r ? [explainFailure(r, context)].filter((d) => d !== undefined) : []));
    const verdict = verdictName(spdy?.ok, ws?.ok);
    if (verdict === 'websocket-broken' && spdy) {
      diagnosis.push({
        code: 'silent-fallback',
        summary: `kubectl ${spdy.operation === 'exec' ? 'exec' : 'port-forward'} works on this path today only through its silent fallback to SPDY.`,
        check: 'When the fallback and KUBECTL_*_WEBSOCKETS go away (KEP-4006 GA), this path breaks: fix the hop above first.',
      });
    }
    const first = group[0]!;
    out.push({
      operation: first.operation,
      keepalive: first.keepalive,
      holdSeconds: first.holdSeconds,
      spdy: spdy ? (spdy.ok ? 'ok' : 'fail') : 'not-run',
      websocket: ws ? (ws.ok ? 'ok' : 'fail') : 'not-run',
      verdict,
      diagnosis,
    });
  }
  return out;
}

export interface RunOptions {
  readonly onProgress?: SessionOptions['onProgress'];
  /** Skip the RBAC preflight (e.g. no SelfSubjectAccessReview permission). */
  readonly skipPreflight?: boolean;
}

export async function runPlan(plan: ProbePlan, options: RunOptions = {}): Promise<ProbeReport> {
  const t0 = performance.now();
  const startedAt = new Date().toISOString();
  const c = plan.cluster;
  const echoTimeoutMs = plan.echoTimeoutMs ?? DEFAULT_ECHO_TIMEOUT_MS;
  const rest = new RestClient(c.connection);
  const [version, rbac, results] = await Promise.all([
    serverVersion(rest),
    options.skipPreflight ? Promise.resolve([]) : rbacPreflight(rest, c.namespace, c.pod),
    Promise.all(expandPlan(plan).map((spec) => runSession(spec, c, { echoTimeoutMs, onProgress: options.onProgress }))),
  ]).finally(() => rest.close());
  const proxy = c.connection.proxy ? `${c.connection.proxy.url.protocol}//${c.connection.proxy.url.host}` : undefined;
  const gitVersion = version.version?.gitVersion ?? null;
  const context = { proxy, serverVersion: gitVersion };
  const findings = crossFindings(results);
  const access: AccessSummary[] = rbac.map((a) => ({ subresource: a.subresource, verb: a.verb, allowed: a.allowed ?? null }));
  findings.push(...rbacFindings(access, needsCreateForWebSocket(version.version), gitVersion));
  return {
    location: plan.location,
    cluster: c.name,
    server: { url: c.connection.server.toString().replace(/\/$/, ''), version: gitVersion, ...(version.error ? { versionError: version.error } : {}), ...(proxy ? { proxy } : {}) },
    rbac: access,
    results,
    verdicts: verdicts(results, context),
    findings,
    startedAt,
    durationMs: Math.round(performance.now() - t0),
  };
}

/** What the RBAC preflight means for each transport, before anything fails. */
export function rbacFindings(access: readonly AccessSummary[], createForWebSocket: boolean | undefined, gitVersion: string | null): Diagnosis[] {
  const out: Diagnosis[] = [];
  const allowed = (sub: string, verb: string) => access.find((a) => a.subresource === sub && a.verb === verb)?.allowed;
  for (const sub of OPERATIONS) {
    const get = allowed(sub, 'get');
    const create = allowed(sub, 'create');
    const problems: string[] = [];
    if (get === false) problems.push('WebSocket upgrades (GET) need "get", which is denied');
    if (create === false && createForWebSocket) problems.push(`from 1.35 WebSocket upgrades also need "create", which is denied (server ${gitVersion})`);
    if (create === false) problems.push('SPDY upgrades (POST) need "create", which is denied');
    if (problems.length === 0) continue;
    out.push({
      code: 'rbac-preflight',
      summary: `RBAC preflight for pods/${sub}: ${problems.join('; ')}.`,
      check: `Grant get and create on pods/${sub} for the target pod (see \`kube-stream-probe manifest\`).`,
    });
  }
  return out;
}
