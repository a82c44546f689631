/**
 * Runs a plan: every operation × transport × keepalive × hold session at
 * once, their starts paced by the CPU share (start-pacer.ts; a 65 s hold plan takes about 65 s), plus the server version, the
 * target's GET (as kubectl does first) and the RBAC preflight, then the A/B
 * verdicts, what each kubectl would experience, and the diagnoses.
 */
import { unlessAborted } from '../timers.js';
import { VERSION } from '../version.js';
import { RestClient, needsCreateForWebSocket, serverVersion } from '../kube/rest.js';
import { rbacPreflight } from '../kube/rbac.js';
import { crossFindings } from './cross-findings.js';
import { readTarget, resolveTarget } from './preflight.js';
import { chooseContainer, type ContainerChoice, type PodContainers } from './container-choice.js';
import { notMeasuredVerdicts, rbacFindings, verdicts } from './verdicts.js';
import { TARGET_DEFAULTS, TARGET_SELECTOR, statefulPodName } from '../kube/target.js';
import { operationsToProbe, probePlainGet } from './method-probe.js';
import { DEFAULT_ECHO_TIMEOUT_MS, runSession, sessionLimitMs, type SessionOptions } from './session.js';
import { StartPacer } from './start-pacer.js';
import {
  rowKey,
  type AccessSummary,
  type ClusterTarget,
  type Diagnosis,
  type ProbePlan,
  type ProbeReport,
  type SessionResult,
  type SessionSpec,
} from './types.js';
import { expandPlan } from './plan-matrix.js';
import { HoldBarrier, sharedProcessGroups, sharesProcess, type HoldTurn } from './shared-process.js';
import { followUps, type FollowUps } from './follow-ups.js';
import { flappingFindings, withRetry } from './retry.js';

export { expandPlan } from './plan-matrix.js';

/**
 * Every session of a plan, in the plan's order: the holds all at once, and the transfers one after another
 * alongside them (each transfer has the path's bandwidth to itself, so SPDY against WebSocket compares the
 * transports and not their share of the path). Sessions that share the container's process (attach) hold one
 * length after another, shortest first, each length's sessions starting their holds together (shared-process.ts).
 */
export async function runSessions(specs: readonly SessionSpec[], run: (s: SessionSpec, turn?: HoldTurn) => Promise<SessionResult>): Promise<SessionResult[]> {
  const out: SessionResult[] = new Array(specs.length);
  const transfers = specs.map((s, i) => [s, i] as const).filter(([s]) => s.transferBytes);
  const chain = (async () => {
    for (const [s, i] of transfers) out[i] = await run(s);
  })();
  const shared = (async () => {
    for (const group of sharedProcessGroups(specs)) {
      const barrier = new HoldBarrier(group.length);
      await Promise.all(
        group.map(async (i) => {
          const turn = barrier.turn();
          try {
            out[i] = await run(specs[i]!, turn);
          } finally {
            turn.arrive();
          }
        }),
      );
    }
  })();
  const alone = specs.map(async (s, i) => (s.transferBytes || sharesProcess(s) ? undefined : (out[i] = await run(s))));
  await Promise.all([...alone, chain, shared]);
  return out;
}

export interface RunOptions {
  readonly onProgress?: SessionOptions['onProgress'];
  /** Told once the target pod and the container of its exec and attach sessions are known, before any session starts. */
  readonly onTarget?: (target: { readonly pod: string } & ContainerChoice) => void;
  /** Skip the RBAC preflight (e.g. no SelfSubjectAccessReview permission). */
  readonly skipPreflight?: boolean;
  /**
   * Aborting it (the CLI on SIGINT / SIGTERM, with the signal's name as reason) stops the holds: every
   * session is closed and ends `interrupted`, the API calls in flight are given up, and the report of
   * what was measured is returned at once.
   */
  readonly signal?: AbortSignal;
  /**
   * Paces the sessions' starts by this process's CPU share (start-pacer.ts), shared by every plan of one
   * invocation (the Lambda's clusters, per-node targets); null: every session starts at once (the benchmark's
   * "before"). @default a pacer of this plan's own
   */
  readonly pacer?: StartPacer | null;
  /**
   * How long the follow-up sessions may run once the holds are over, ms (follow-ups.ts: the idle ladder for a device
   * that forgot a flow, the lifetime check for a cut that pings did not prevent); they run only when the holds raise
   * that question. 0: none. @default the longest hold plus 10 s, at least 30 s (a run takes at most about twice its
   * longest hold)
   */
  readonly followUpBudgetMs?: number;
  /** performance.now() by which the follow-ups must be over whatever the budget (the Lambda's time left). */
  readonly followUpUntilMs?: number;
  /** The pause before a failed session's second attempt, ms (retry.ts); negative: no second attempt. @default RETRY_PAUSE_MS */
  readonly retryPauseMs?: number;
}

/** The follow-ups' default budget for a plan (RunOptions.followUpBudgetMs). */
export function defaultFollowUpBudgetMs(holdsSeconds: readonly number[]): number {
  return Math.max(30_000, (Math.max(0, ...holdsSeconds) + 10) * 1000);
}

/** A report that says only why nothing was measured (the target could not be found, read or used). */
async function unmeasuredReport(
  plan: ProbePlan,
  rest: RestClient,
  o: {
    why: Diagnosis;
    pod: string | null;
    selector: string | undefined;
    interrupted: boolean;
    serverUrl: string;
    proxy: string | undefined;
    startedAt: string;
    t0: number;
    signal: AbortSignal | undefined;
  },
): Promise<ProbeReport> {
  const version = await unlessAborted(serverVersion(rest), o.signal, { error: 'interrupted' });
  return {
    probeVersion: VERSION,
    location: plan.location,
    cluster: plan.cluster.name,
    server: {
      url: o.serverUrl,
      version: version.version?.gitVersion ?? null,
      ...(version.error ? { versionError: version.error } : {}),
      ...(o.proxy ? { proxy: o.proxy } : {}),
    },
    target: { namespace: plan.cluster.namespace, pod: o.pod, ...(o.selector ? { selector: o.selector } : {}) },
    rbac: [],
    results: [],
    verdicts: notMeasuredVerdicts(expandPlan(plan), o.why, o.interrupted ? 'interrupted' : 'not-measured'),
    findings: [],
    startedAt: o.startedAt,
    durationMs: Math.round(performance.now() - o.t0),
  };
}

export async function runPlan(plan: ProbePlan, options: RunOptions = {}): Promise<ProbeReport> {
  const t0 = performance.now();
  const startedAt = new Date().toISOString();
  const spec = plan.cluster;
  const echoTimeoutMs = plan.echoTimeoutMs ?? DEFAULT_ECHO_TIMEOUT_MS;
  const rest = new RestClient(spec.connection);
  const proxyUrl = spec.connection.proxy?.url;
  const proxy = proxyUrl ? `${proxyUrl.protocol}//${proxyUrl.host}` : undefined;
  const serverUrl = spec.connection.server.toString().replace(/\/$/, '');
  try {
    // No pod named: find it by label first (a StatefulSet's pod, wherever the last drain put it).
    const selector = spec.pod ? undefined : (spec.selector ?? TARGET_SELECTOR);
    const interruptedBefore = {
      notMeasured: {
        code: 'interrupted',
        summary: 'The run was interrupted while the target pod was being looked up: nothing was probed.',
        check: 'Run again.',
      },
    } as const;
    const found = selector ? await unlessAborted(resolveTarget(rest, spec.namespace, selector), options.signal, interruptedBefore) : { pod: spec.pod! };
    // When the list itself failed on the path, probe the manifest's pod by name: the upgrades meet the same failure.
    const resolved = 'unresolved' in found ? { pod: statefulPodName(TARGET_DEFAULTS.name) } : found;
    const notMeasuredReport = (why: Diagnosis, pod: string | null, interrupted: boolean) =>
      unmeasuredReport(plan, rest, { why, pod, selector, interrupted, serverUrl, proxy, startedAt, t0, signal: options.signal });
    if ('notMeasured' in resolved) return await notMeasuredReport(resolved.notMeasured, null, resolved === interruptedBefore);
    // kubectl GETs the pod before it upgrades, and so does the probe: its answer says whether the target can be measured
    // and which container exec and attach run in (container-choice.ts; a list already returned the pod itself).
    const read = await unlessAborted(readTarget(rest, { ...spec, pod: resolved.pod }), options.signal, {});
    if (read.notMeasured) return await notMeasuredReport(read.notMeasured, resolved.pod, false);
    const listed = 'object' in resolved ? (resolved.object as PodContainers) : undefined;
    const choice = chooseContainer(read.pod ?? listed, spec.container, selector !== undefined);
    options.onTarget?.({ pod: resolved.pod, ...choice });
    const c: ClusterTarget = { ...spec, pod: resolved.pod, ...(choice.container ? { container: choice.container } : {}) };
    // The sessions run alongside the version and RBAC reads: a long hold is not delayed by them.
    // Interrupted, the API calls in flight are given up (what they would have said is not needed to print what was measured).
    const signal = options.signal;
    const pacer = options.pacer === null ? undefined : (options.pacer ?? new StartPacer());
    const [version, rbac, results] = await Promise.all([
      unlessAborted(serverVersion(rest), signal, { error: 'interrupted' }),
      options.skipPreflight ? Promise.resolve([]) : unlessAborted(rbacPreflight(rest, c.namespace, c.pod), signal, []),
      runSessions(expandPlan(plan), (s, holdTurn) => {
        // A retry (retry.ts) dials on its own: its group's barrier was passed by the first attempt.
        let turn = holdTurn;
        const attempt = () => {
          const t = turn;
          turn = undefined;
          return runSession(s, c, { echoTimeoutMs, onProgress: options.onProgress, signal, pacer, holdTurn: t });
        };
        // Only when a second attempt (which waits no turn) fits before the follow-ups' end (the Lambda's time before publishing).
        const attemptMs = sessionLimitMs(s, c, { echoTimeoutMs });
        return withRetry(attempt, { signal, pauseMs: options.retryPauseMs, untilMs: options.followUpUntilMs, attemptMs });
      }),
    ]);
    const gitVersion = version.version?.gitVersion ?? null;
    // WebSocket refused by a hop's rule where SPDY passed: is the rule on the method or on the Upgrade header?
    const toProbe = signal?.aborted ? [] : operationsToProbe(results);
    const budgetMs = options.followUpBudgetMs ?? defaultFollowUpBudgetMs(plan.holdsSeconds);
    const untilMs = Math.min(performance.now() + budgetMs, options.followUpUntilMs ?? Number.POSITIVE_INFINITY);
    const [methodProbes, path] = await Promise.all([
      // Interrupted, no plain GET runs and none is read as refused (verdicts.ts: undefined, not []).
      signal?.aborted ? undefined : toProbe.length ? unlessAborted(probePlainGet(rest, c, toProbe), signal, undefined) : [],
      // With no budget, what the holds themselves showed is still said (a bracket from their quiet gaps).
      signal?.aborted
        ? ({} as FollowUps)
        : followUps(results, (s) => runSession(s, c, { echoTimeoutMs, onProgress: options.onProgress, signal, pacer }), { untilMs, echoTimeoutMs, signal }),
    ]);
    const verdictList = verdicts(results, {
      proxy,
      proxyScheme: proxyUrl?.protocol,
      serverVersion: gitVersion,
      port: c.port,
      methodProbes,
      idle: path.idleBracket,
      lifetime: path.lifetimeCheck,
    });
    // Findings compare sessions of measured verdicts only: a closed port is not "exec and port-forward disagree".
    // An SDK client's session counts with the kubectl row of its operation and hold (it has no row of its own).
    const rowOf = (r: SessionResult) => rowKey(r.keepalive === 'sdk' ? { ...r, keepalive: 'kubectl' } : r);
    const measured = results.filter((r) => verdictList.some((v) => v.verdict !== 'not-measured' && rowKey(v) === rowOf(r)));
    const findings = [...crossFindings(measured, { idle: path.idleBracket, lifetime: path.lifetimeCheck }), ...flappingFindings(measured)];
    const access: AccessSummary[] = rbac.map((a) => ({
      subresource: a.subresource,
      verb: a.verb,
      allowed: a.allowed ?? null,
      ...(a.allowed === undefined ? { unread: a.reason ?? 'no answer' } : {}),
    }));
    findings.push(...rbacFindings(access, needsCreateForWebSocket(version.version), gitVersion, plan.operations));
    return {
      probeVersion: VERSION,
      location: plan.location,
      cluster: c.name,
      server: { url: serverUrl, version: gitVersion, ...(version.error ? { versionError: version.error } : {}), ...(proxy ? { proxy } : {}) },
      target: {
        namespace: c.namespace,
        pod: c.pod,
        ...(selector ? { selector } : {}),
        ...(choice.container ? { container: choice.container } : {}),
        containerSource: choice.source,
        ...('unresolved' in found ? { lookupError: found.unresolved } : {}),
      },
      rbac: access,
      results,
      verdicts: verdictList,
      findings,
      ...path,
      startedAt,
      durationMs: Math.round(performance.now() - t0),
    };
  } finally {
    await (options.signal?.aborted ? rest.destroy() : rest.close());
  }
}
