/**
 * The pre-upgrade audit, read-only: the server's version and streaming
 * gates, its own streaming counters (read per version), the RBAC that grants
 * streaming, the local kubectl clients and the proxy they go through, the
 * toggles left in automation, then the A/B of `run` — and one verdict:
 * ready, ready after fixes (in order of likelihood), or blocked.
 */
import { rowText } from '../probe/row-text.js';
import { DIAGNOSES, FIX_ORDER, type FixCategory } from '../probe/diagnosis-codes.js';
import { IDLE_DEVICES } from '../probe/idle-devices.js';
import type { ResolvedContext } from '../kube/kubeconfig.js';
import { RestClient, minorVersion, serverVersion } from '../kube/rest.js';
import type { ConnectionConfig } from '../net/connection.js';
import { TODAYS_KUBECTL } from '../probe/kubectl-model.js';
import { runPlan } from '../probe/runner.js';
import type { ProbePlan, ProbeReport } from '../probe/types.js';
import { VERSION } from '../version.js';
import { localKubectls, type LocalClient } from './local.js';
import { parseMetrics } from './prometheus.js';
import { rbacFindings, roleGrants, type RbacFinding, type RoleGrant } from './rbac-audit.js';
import { scanForToggles, type ScanResult } from './scan.js';
import { counterReadings, gateStates, type CounterReading, type GateState } from './streaming-metrics.js';
import { readKubeletCounters, type KubeletAudit } from './kubelet-metrics.js';

export { FIX_ORDER, type FixCategory } from '../probe/diagnosis-codes.js';

export interface AuditFix {
  readonly category: FixCategory;
  readonly what: string;
  readonly evidence: string;
}

export interface AuditReport {
  readonly probeVersion: string;
  readonly context: string;
  readonly server: { readonly url: string; readonly version: string | null; readonly minor: number | null; readonly error?: string };
  /** The API server's /metrics: read, or why not (forbidden: the caller may not get the non-resource URL /metrics). */
  readonly metrics: { readonly state: 'read' | 'forbidden' | 'failed'; readonly detail?: string };
  readonly gates: readonly GateState[];
  readonly counters: readonly CounterReading[];
  /** The kubelets' own WebSocket pass-through counter (1.36+ kubelets only, through nodes/proxy when allowed). */
  readonly kubelets: KubeletAudit;
  readonly rbac: {
    readonly state: 'read' | 'forbidden' | 'failed';
    readonly detail?: string;
    readonly roles: readonly RoleGrant[];
    readonly findings: readonly RbacFinding[];
  };
  readonly clients: { readonly local: readonly LocalClient[]; readonly proxyScheme: string | null; readonly findings: readonly string[] };
  readonly toggles: ScanResult | null;
  readonly ab: ProbeReport | null;
  readonly verdict: 'ready' | 'ready-after-fixes' | 'blocked';
  /** What the A/B's holds could not see: the documented idle timeouts above its longest hold (never READY without it). */
  readonly idleNotMeasured: IdleNotMeasured;
  readonly fixes: readonly AuditFix[];
  readonly blockedBecause: readonly string[];
}

export interface IdleNotMeasured {
  /** The A/B's longest hold, s; null when the A/B was skipped (no idle timeout measured at all). */
  readonly longestHoldSeconds: number | null;
  /** The documented devices (src/probe/idle-devices.ts, docs/diagnoses.md) whose timeout is above it, shortest first. */
  readonly devices: readonly { readonly product: string; readonly seconds: number }[];
}

/** The idle timeouts an A/B with these holds cannot have seen: every documented one longer than its longest hold. */
export function idleNotMeasured(holdsSeconds: readonly number[] | null): IdleNotMeasured {
  const longest = holdsSeconds?.length ? Math.max(...holdsSeconds) : null;
  const devices = IDLE_DEVICES.filter((d) => longest === null || d.seconds > longest)
    .map((d) => ({ product: d.product, seconds: d.seconds }))
    .sort((a, b) => a.seconds - b.seconds);
  return { longestHoldSeconds: longest, devices };
}

export interface AuditOptions {
  readonly scan?: readonly string[];
  readonly pathEnv?: string;
  /** The A/B to run, as `run` would (null: skip it). */
  readonly plan: Omit<ProbePlan, 'cluster'> & { readonly cluster: Omit<ProbePlan['cluster'], 'connection'> };
  readonly skipAb?: boolean;
  readonly signal?: AbortSignal;
}

const RBAC_LISTS = { clusterRoles: 'clusterroles', roles: 'roles', clusterRoleBindings: 'clusterrolebindings', roleBindings: 'rolebindings' } as const;

async function readMetrics(rest: RestClient): Promise<{ state: AuditReport['metrics']['state']; detail?: string; text?: string }> {
  try {
    const r = await rest.request('GET', '/metrics', undefined, undefined, { accept: 'text/plain', fullText: true });
    if (r.status === 200) return { state: 'read', text: r.fullText ?? '' };
    if (r.status === 401 || r.status === 403)
      return {
        state: 'forbidden',
        detail: `${r.status}: the caller may not get the non-resource URL /metrics (grant get on nonResourceURLs ["/metrics"] to read gates and counters)`,
      };
    return { state: 'failed', detail: `GET /metrics answered ${r.status}` };
  } catch (err) {
    return { state: 'failed', detail: (err as Error).message };
  }
}

async function readRbac(rest: RestClient): Promise<AuditReport['rbac']> {
  const got: Record<string, unknown[]> = {};
  for (const [key, resource] of Object.entries(RBAC_LISTS)) {
    try {
      const r = await rest.request('GET', `/apis/rbac.authorization.k8s.io/v1/${resource}`);
      if (r.status === 401 || r.status === 403)
        return {
          state: 'forbidden',
          detail: `${r.status} on list ${resource}: the audit needs list on roles, clusterroles and their bindings`,
          roles: [],
          findings: [],
        };
      if (r.status !== 200) return { state: 'failed', detail: `list ${resource} answered ${r.status}`, roles: [], findings: [] };
      got[key] = ((r.body as { items?: unknown[] } | undefined)?.items ?? []) as unknown[];
    } catch (err) {
      return { state: 'failed', detail: (err as Error).message, roles: [], findings: [] };
    }
  }
  const roles = roleGrants(got as never);
  return { state: 'read', roles, findings: rbacFindings(roles) };
}

/** The fix a diagnosis is filed under, or none (it restates another, qualifies a measurement, or blocks the audit). */
export function fixCategory(code: keyof typeof DIAGNOSES): FixCategory | undefined {
  const filing = DIAGNOSES[code].audit;
  return (FIX_ORDER as readonly string[]).includes(filing) ? (filing as FixCategory) : undefined;
}

export async function runAudit(ctx: ResolvedContext, connection: ConnectionConfig, options: AuditOptions): Promise<AuditReport> {
  const rest = new RestClient(connection);
  let version, metrics, rbac, kubelets;
  try {
    [version, metrics, rbac, kubelets] = await Promise.all([serverVersion(rest), readMetrics(rest), readRbac(rest), readKubeletCounters(rest)]);
  } finally {
    await rest.close();
  }
  const gitVersion = version.version?.gitVersion ?? null;
  const serverMinor = minorVersion(gitVersion);
  const samples = metrics.text !== undefined ? parseMetrics(metrics.text) : [];
  const gates = metrics.state === 'read' ? gateStates(samples) : [];
  const counters = metrics.state === 'read' ? counterReadings(samples, serverMinor) : [];

  const proxyScheme = connection.proxy?.url.protocol.replace(/:$/, '') ?? null;
  const local = await localKubectls(options.pathEnv);
  const clientFindings = local
    .filter((c) => proxyScheme === 'https' && c.minor !== null && c.minor < 33)
    .map(
      (c) =>
        `${c.path} (${c.version}) reaches this cluster through an https:// proxy: below 1.33 kubectl cannot dial WebSocket through it and works only by falling back to SPDY (1.30.0–1.30.3 not even that); upgrade it to 1.33+.`,
    );
  const toggles = options.scan?.length ? scanForToggles(options.scan) : null;

  const ab = options.skipAb ? null : await runPlan({ ...options.plan, cluster: { ...options.plan.cluster, connection } }, { signal: options.signal });

  // What to fix, most likely causes first.
  const fixes: AuditFix[] = [];
  for (const v of ab?.verdicts ?? []) {
    const today = v.kubectl?.find((k) => k.client === TODAYS_KUBECTL)?.outcome;
    // A path only the fallback carries is a fix too: at 1.38 nothing can force SPDY, and WebSocket-only clients fail there now.
    const wsOnly = v.kubectl?.find((k) => k.client === 'websocket-only')?.outcome;
    // Unreachable is no path finding: it blocks the audit below (the rule run's exit code follows too).
    if (v.verdict === 'clean' || v.verdict === 'unreachable' || (today !== 'breaks' && wsOnly !== 'breaks' && v.verdict !== 'both-broken')) continue;
    for (const d of v.diagnosis) {
      // Filed where the catalogue says (src/probe/diagnosis-codes.ts): a restatement or a qualifier is no fix of its own.
      const category = fixCategory(d.code);
      if (category) fixes.push({ category, what: d.check, evidence: `${v.operation} ${v.keepalive} ${rowText(v)}: ${d.summary}` });
    }
  }
  for (const f of rbac.findings)
    fixes.push({
      category: 'RBAC',
      what: f.fix,
      evidence: `${f.role} grants ${f.shape} on ${f.resource}: ${f.meaning}${f.subjects.length ? ` (bound to ${f.subjects.join(', ')})` : ''}`,
    });
  for (const h of toggles?.hits ?? [])
    fixes.push({
      category: 'toggles',
      what: `remove ${h.toggle} from ${h.file}:${h.line} (kubectl 1.38, KEP-4006 GA, ignores it with a warning) and make the path work over WebSocket`,
      evidence: `${h.file}:${h.line}: ${h.text}`,
    });
  for (const c of clientFindings) fixes.push({ category: 'clients', what: 'upgrade kubectl to 1.33 or later', evidence: c });
  for (const c of counters) {
    if (c.failed)
      fixes.push({
        category: 'upgrade passthrough',
        what: `find who gets non-101 answers on ${c.name}`,
        evidence: `the API server counted ${c.failed} failed WebSocket streaming requests (${Object.entries(c.byCode)
          .map(([k, n]) => `${k}: ${n}`)
          .join(', ')})`,
      });
  }
  // Cross-session findings (an SDK client's cut beside kubectl's surviving session, pings that do not count) are fixes
  // as they are in run's report.
  for (const f of ab?.findings ?? []) {
    const category = fixCategory(f.code);
    if (category) fixes.push({ category, what: f.check, evidence: f.summary });
  }
  const unique = fixes.filter((f, i) => fixes.findIndex((g) => g.category === f.category && g.what === f.what) === i);
  unique.sort((a, b) => FIX_ORDER.indexOf(a.category) - FIX_ORDER.indexOf(b.category));

  const blockedBecause: string[] = [];
  if (!gitVersion) blockedBecause.push(`the API server's version could not be read (${version.error ?? 'no answer'})`);
  if (ab && ab.verdicts.some((v) => v.verdict === 'not-measured'))
    blockedBecause.push(`the A/B could not measure the path: ${ab.verdicts.find((v) => v.verdict === 'not-measured')!.diagnosis[0]?.summary ?? ''}`);
  const unreachable = ab?.verdicts.find((v) => v.verdict === 'unreachable');
  if (unreachable) blockedBecause.push(`the A/B could not reach the API server: ${unreachable.diagnosis[0]?.summary ?? ''}`);
  if (ab && ab.verdicts.some((v) => v.verdict === 'interrupted')) blockedBecause.push('the A/B was interrupted');
  const verdict = blockedBecause.length ? 'blocked' : unique.length ? 'ready-after-fixes' : 'ready';
  return {
    probeVersion: VERSION,
    context: ctx.contextName,
    server: {
      url: connection.server.toString().replace(/\/$/, ''),
      version: gitVersion,
      minor: serverMinor,
      ...(version.error ? { error: version.error } : {}),
    },
    metrics: { state: metrics.state, ...(metrics.detail ? { detail: metrics.detail } : {}) },
    gates,
    counters,
    kubelets,
    rbac,
    clients: { local, proxyScheme, findings: clientFindings },
    toggles,
    ab,
    verdict,
    idleNotMeasured: idleNotMeasured(options.skipAb ? null : options.plan.holdsSeconds),
    fixes: unique,
    blockedBecause,
  };
}
