/**
 * From results to verdicts: the A/B per operation × keepalive × hold, what
 * each kubectl would experience there (kubectl-model.ts), the diagnoses, and
 * `not-measured` when the probe's own setup (credentials, target, port) kept
 * it from measuring the path.
 */
import { OPERATION_WORDS, OPERATIONS, TRANSPORT_WORDS, type Operation, type Transport } from '../vocabulary.js';
import { explainFailure, type DiagnosisContext } from './diagnosis.js';
import { TODAYS_KUBECTL, kubectlExperience, modelsKubectl, type ModelContext } from './kubectl-model.js';
import { TODAYS_KUBECTL_LABEL } from './kubectl-clients.js';
import type { MethodProbe } from './method-probe.js';
import { refusedByHopRule, upgradeStripped } from './upgrade-refusal.js';
import { hopFix, identifyHop } from './hop-products.js';
import { transferRateGap } from './transfer-diagnosis.js';
import { rowKey, type AccessSummary, type Diagnosis, type SessionCell, type SessionResult, type SessionSpec, type Verdict, type VerdictName } from './types.js';

export interface VerdictContext extends ModelContext, DiagnosisContext {
  /** The target's port (port-forward), for messages. */
  readonly port?: number;
  /** Set when the probe could not measure anything (the preflight found why). */
  readonly notMeasured?: Diagnosis;
  /**
   * Plain GETs on subresources whose WebSocket upgrade a hop refused by a rule (method-probe.ts); undefined when
   * none was run (the run was interrupted first): nothing is then concluded about the rule's kind.
   */
  readonly methodProbes?: readonly MethodProbe[];
}

/** A verdict's row: operation, keepalive, hold, and the transfer size or hold shape when it has one. */
function rowHead(s: SessionSpec): Pick<Verdict, 'operation' | 'keepalive' | 'holdSeconds' | 'transferBytes' | 'holdShape' | 'transferShape'> {
  return {
    operation: s.operation,
    keepalive: s.keepalive,
    holdSeconds: s.holdSeconds,
    ...(s.transferBytes ? { transferBytes: s.transferBytes } : {}),
    ...(s.holdShape ? { holdShape: s.holdShape } : {}),
    ...(s.transferShape ? { transferShape: s.transferShape } : {}),
  };
}

/** The A/B; undefined is a transport not probed, which is never read as working (nor as failing). */
export function verdictName(spdyOk: boolean | undefined, wsOk: boolean | undefined): VerdictName {
  if (spdyOk === undefined && wsOk === undefined) throw new Error('verdictName: neither transport was probed');
  if (spdyOk === undefined) return wsOk ? 'websocket-ok' : 'websocket-fails';
  if (wsOk === undefined) return spdyOk ? 'spdy-ok' : 'spdy-fails';
  if (spdyOk && wsOk) return 'clean';
  if (spdyOk !== false) return 'websocket-broken';
  if (wsOk !== false) return 'spdy-broken';
  return 'both-broken';
}

const statusText = (r: SessionResult) => r.upgrade.error ?? `HTTP ${r.upgrade.status}`;

/**
 * Results that say the probe's setup failed, the same way on every transport:
 * the API server refused its credentials, the target is missing, its RBAC
 * allows neither upgrade, or the pod's port is closed. A 403 on WebSocket only
 * (the 1.35 `create` rule) is a path finding, not this.
 */
/** The API server's words for a container the pod does not have (k8s.io/kubernetes pkg/registry/core/pod/strategy.go). */
const CONTAINER_NOT_VALID = /container \S+ is not valid for pod \S+/;
/** Its words when none was named and the pod has more than one (strategy.go validateContainer). */
const CONTAINER_REQUIRED = /a container name must be specified for pod \S+/;
/** Its words for a pod the scheduler has not placed (strategy.go streamLocation, PortForwardLocation). */
const NO_HOST = /pod \S+ does not have a host assigned/;

export function notMeasuredReason(group: readonly SessionResult[], port?: number): Diagnosis | undefined {
  const all = (p: (r: SessionResult) => boolean) => group.length > 0 && group.every(p);
  const first = group[0];
  if (!first) return undefined;
  const from = (status: number) => all((r) => r.upgrade.status === status && r.upgrade.kubernetesStatus === true);
  if (all((r) => r.upgrade.status === 401)) {
    return {
      code: 'credentials-rejected',
      summary: `The API server rejected the probe's credentials (401 Unauthorized) on every upgrade: ${statusText(first)}`,
      check:
        'Fix the kubeconfig user (an expired token, an exec plugin that failed, a client certificate the server does not trust): kubectl with the same kubeconfig gets the same 401.',
    };
  }
  if (from(404)) {
    return {
      code: 'target-missing',
      summary: `The target does not exist: ${statusText(first)}`,
      check:
        "Deploy it (`kube-stream-probe manifest | kubectl apply -f -`), or point --pod / -n (or the config's target) at a pod that runs cat and a TCP echo port.",
    };
  }
  // The API server's own 400 for a container the pod does not have (pod strategy streamLocation: "container X is not
  // valid for pod Y"): a terminal attach needs the manifest's `tty` container, which targets deployed before it lack.
  if (from(400) && group.every((r) => CONTAINER_NOT_VALID.test(r.upgrade.error ?? ''))) {
    return {
      code: 'target-missing',
      summary: `The target pod lacks the container this row needs: ${statusText(first)}`,
      check:
        first.holdShape === 'tty' && first.operation === 'attach'
          ? "A terminal attach joins the target's `tty` container (tty: true), which targets deployed before it lack: re-apply `kube-stream-probe manifest` (it adds the container), or leave attach out of --tty."
          : "Fix --container (the config's target.container), or re-apply `kube-stream-probe manifest`.",
    };
  }
  // The API server's 400 when no container was named and the pod has several (the probe names one whenever it could
  // read the pod, as kubectl does: container-choice.ts): its Status says why, so no path finding is drawn from it.
  if (from(400) && group.every((r) => CONTAINER_REQUIRED.test(r.upgrade.error ?? ''))) {
    return {
      code: 'target-missing',
      summary: `The API server refused every ${OPERATION_WORDS[first.operation]} before upgrading: ${statusText(first)}`,
      check:
        "Name the container with --container (the config's target.container). The probe names the pod's kubectl.kubernetes.io/default-container (else its first container), as kubectl does, whenever it can read the pod: this run could not (see the pod's GET with -v).",
    };
  }
  if (from(400) && group.every((r) => NO_HOST.test(r.upgrade.error ?? ''))) {
    return {
      code: 'target-not-running',
      summary: `The target pod is not scheduled on any node: ${statusText(first)}`,
      check: "Check why it is Pending with `kubectl describe pod` (its events name the scheduler's reason).",
    };
  }
  if (from(403)) {
    return {
      code: 'target-forbidden',
      summary: `The probe's RBAC allows neither upgrade (403 on WebSocket and SPDY): ${statusText(first)}`,
      check: 'Grant get and create on pods/exec and pods/portforward for the target (see `kube-stream-probe manifest`).',
    };
  }
  // The pod's own refusal, on the error stream: it says nothing about the path, and leaves no A/B to compare.
  const closed = group.find((r) => r.errorCode === 'PORTFORWARD_ERROR');
  if (closed) {
    return {
      code: 'target-port-closed',
      summary: `The pod refused the forwarded connection to port ${port ?? '?'} (${TRANSPORT_WORDS[closed.transport]}): ${closed.error ?? ''}`,
      check: `--port (the config's target.port) must be the target's TCP echo port (8080 in \`kube-stream-probe manifest\`), and the pod must listen on it.`,
    };
  }
  return undefined;
}

/** Verdicts that say only why nothing was measured (e.g. the credentials could not be fetched). */
export function notMeasuredVerdicts(specs: readonly SessionSpec[], why: Diagnosis, verdict: 'not-measured' | 'interrupted' = 'not-measured'): Verdict[] {
  const seen = new Set<string>();
  // An SDK client's sessions have no row of their own (verdicts()).
  return specs.flatMap((s) => {
    if (s.keepalive === 'sdk') return [];
    const key = rowKey(s);
    if (seen.has(key)) return [];
    seen.add(key);
    return [
      {
        ...rowHead(s),
        spdy: 'not-run',
        websocket: 'not-run',
        verdict,
        kubectl: null,
        diagnosis: [why],
      },
    ];
  });
}

export function verdicts(results: readonly SessionResult[], given: VerdictContext = {}): Verdict[] {
  const out: Verdict[] = [];
  // Each session's diagnosis may read the others of its run (the no-ping twin of a kubectl-keepalive hold).
  const context: VerdictContext = { peers: results, ...given };
  // An SDK client's sessions (keepalive sdk) are no row of their own: they are what the WS-only forecast of the
  // kubectl row of the same operation and hold reads, and their failures are said there.
  const keys = new Set(results.filter((r) => r.keepalive !== 'sdk').map(rowKey));
  for (const key of keys) {
    const group = results.filter((r) => rowKey(r) === key);
    const by = (t: Transport) => group.find((r) => r.transport === t);
    const spdy = by('spdy');
    const ws = by('websocket');
    const first = group[0]!;
    const head = rowHead(first);
    const cell = (r: SessionResult | undefined): SessionCell => (r ? (r.errorCode === 'INTERRUPTED' ? 'interrupted' : r.ok ? 'ok' : 'fail') : 'not-run');
    const stopped = group.filter((r) => r.errorCode === 'INTERRUPTED');
    if (stopped.length) {
      // Half a measurement is no A/B: say what was held, and nothing about the path.
      const held = stopped.map((r) => `${TRANSPORT_WORDS[r.transport]} ${r.error ?? 'interrupted'}`).join('; ');
      out.push({
        ...head,
        spdy: cell(spdy),
        websocket: cell(ws),
        verdict: 'interrupted',
        kubectl: null,
        diagnosis: [
          {
            code: 'interrupted',
            summary: `The run was interrupted before these sessions finished: ${held}.`,
            check: `Run again and let the ${first.transferBytes ? 'transfers' : `${first.holdSeconds} s holds`} finish; what finished is in the table.`,
          },
        ],
      });
      continue;
    }
    const unmeasured = context.notMeasured ?? notMeasuredReason(group, context.port);
    if (unmeasured) {
      // What the other sessions found about the path is still said.
      const others = context.notMeasured
        ? []
        : group.filter((r) => r.errorCode !== 'PORTFORWARD_ERROR').flatMap((r) => [explainFailure(r, context)].filter((d) => d !== undefined));
      out.push({
        ...head,
        spdy: cell(spdy),
        websocket: cell(ws),
        verdict: 'not-measured',
        kubectl: null,
        diagnosis: [unmeasured, ...(unmeasured.code === 'target-port-closed' ? others : [])],
      });
      continue;
    }
    const signatures = pathSignatures(spdy, ws, context);
    const replaced = new Set(signatures.map((x) => x.replaces));
    // The WS-only forecast reads the SDK client's session of this operation and hold (a silent hold, not a transfer).
    const sdk =
      first.keepalive === 'kubectl' && !first.transferBytes && !first.holdShape
        ? results.find((r) => r.keepalive === 'sdk' && r.operation === first.operation && r.holdSeconds === first.holdSeconds)
        : undefined;
    const diagnosis = [ws, spdy].flatMap((r) =>
      r ? [explainFailure(r, context)].filter((d): d is Diagnosis => d !== undefined && !replaced.has(d.code)) : [],
    );
    // The SDK client's failure is said when it says something the WebSocket session's does not (a cut kubectl's pings
    // prevented, the legacy port-forward refused); the same refusal twice is said once.
    const sdkWhy = sdk ? explainFailure(sdk, context) : undefined;
    const wsWhy = ws ? explainFailure(ws, context) : undefined;
    if (sdkWhy && sdkWhy.code !== wsWhy?.code) diagnosis.push(sdkWhy);
    diagnosis.push(...signatures.map((x) => x.diagnosis));
    const gap = transferRateGap(spdy, ws);
    if (gap) diagnosis.push(gap);
    const kubectl = modelsKubectl(first.keepalive, first.holdSeconds) ? kubectlExperience(first.operation, spdy, ws, context, { sdk }) : null;
    const today = kubectl?.find((k) => k.client === TODAYS_KUBECTL);
    const op = OPERATION_WORDS[first.operation];
    if (today?.outcome === 'works-via-fallback') {
      diagnosis.push({
        code: 'silent-fallback',
        summary: `kubectl ${op} (${TODAYS_KUBECTL_LABEL}) works on this path today only through its silent fallback to SPDY: ${today.reason}.`,
        check:
          'Fix the hop above. kubectl 1.38 (KEP-4006 GA) keeps this fallback, so it still hides the hop, but ignores KUBECTL_*_WEBSOCKETS: nobody can force SPDY there any more. Clients without a fallback (browser terminals, SDK clients, tools on client-go ≥ 0.36) fail on this path now.',
      });
    } else if (today?.outcome === 'breaks' && spdy?.ok) {
      // exec, attach and cp are kubectl's RemoteCommand (one toggle); port-forward has its own.
      const env = first.operation === 'portforward' ? 'KUBECTL_PORT_FORWARD_WEBSOCKETS=false' : 'KUBECTL_REMOTE_COMMAND_WEBSOCKETS=false';
      diagnosis.push({
        code: 'kubectl-breaks-today',
        summary: `kubectl ${op} (${TODAYS_KUBECTL_LABEL}) fails on this path today although SPDY works: ${today.reason}.`,
        check: `Fix the hop above. Until then, ${env} makes kubectl 1.30–1.37 use SPDY, which works here; kubectl 1.38 (KEP-4006 GA) ignores it, so only the fix helps there.`,
      });
    }
    const only = spdy && ws ? undefined : (spdy ?? ws)!.transport;
    if (only) {
      const other: Transport = only === 'spdy' ? 'websocket' : 'spdy';
      diagnosis.push({
        code: 'not-compared',
        summary: `Only ${TRANSPORT_WORDS[only]} was probed for ${op}: this says what ${TRANSPORT_WORDS[only]} does on this path, not which transport a hop breaks.`,
        check: `Probe ${TRANSPORT_WORDS[other]} too (--transports websocket,spdy) for the A/B: ${TRANSPORT_WORDS[other]} may fail the same way (then the path is broken for both), or work (then a hop breaks only ${TRANSPORT_WORDS[only]}).`,
      });
    }
    // Neither transport reached the API server: no A/B, one rule with the audit (unreachable, exit 3). What kubectl
    // would do is still said (nothing works from here), and the same cause is said once, not per session.
    const verdict = group.every(unreachableSession) ? 'unreachable' : verdictName(spdy?.ok, ws?.ok);
    const said =
      verdict === 'unreachable' && diagnosis.every((d) => d.code === 'unreachable')
        ? [
            {
              code: 'unreachable' as const,
              summary: `Could not reach the API server for ${op} over either transport (no HTTP answer, no A/B): ${[...new Set(group.map((r) => r.upgrade.error ?? r.upgrade.errorCode))].join('; ')}`,
              check: 'Check DNS, routing, security groups and the CA from this location: kubectl fails here before any streaming (kubectl get pods too).',
            },
          ]
        : diagnosis;
    out.push({ ...head, spdy: cell(spdy), websocket: cell(ws), verdict, kubectl, diagnosis: said });
  }
  return out;
}

/** Every streaming subresource, as a fix names them. */
const STREAMING_SUBRESOURCE_WORDS = 'pods/exec, pods/attach and pods/portforward';

/**
 * The dial failed before anything answered (DNS, TCP): nothing was reached. A TLS failure is not this: a peer
 * answered with a certificate (an intercepting proxy, a wrong CA), a finding about the path that stays a verdict.
 */
const UNREACHABLE_CODES: ReadonlySet<string> = new Set(['DIAL_DNS', 'DIAL_REFUSED', 'DIAL_TIMEOUT', 'DIAL_FAILED']);
export const unreachableSession = (r: SessionResult): boolean => !r.ok && r.upgrade.status === null && UNREACHABLE_CODES.has(r.upgrade.errorCode ?? '');

/** A diagnosis drawn from both transports, and the one-session diagnosis it explains (and so replaces). */
interface Signature {
  readonly diagnosis: Diagnosis;
  readonly replaces: string;
}

/**
 * What the two transports together say about the hop, beyond each failure:
 * - verb-acl: SPDY's POST passed, WebSocket's GET was refused by a hop with 403/405, and a plain GET (no Upgrade)
 *   was refused by the hop too (or could not be tried): a method rule written for SPDY. When the plain GET reaches
 *   the API server, the rule is on the Upgrade header: the hop refuses WebSocket, said so with that evidence;
 * - http2-leg: WebSocket upgraded, SPDY reached the API server without its Upgrade (400): a hop carries
 *   WebSocket (HTTP/2 has a mapping for it, RFC 8441 extended CONNECT) but not SPDY/3.1, which has none.
 */
function pathSignatures(spdy: SessionResult | undefined, ws: SessionResult | undefined, context: VerdictContext): Signature[] {
  if (!spdy || !ws) return [];
  const out: Signature[] = [];
  if (spdy.upgrade.ok && refusedByHopRule(ws?.upgrade)) {
    const hop = identifyHop(ws.upgrade);
    const by = hop ? `${hop.product.name} (${hop.evidence})` : 'a hop, not the API server';
    const sub = `pods/${ws.operation}`;
    const plain = context.methodProbes?.find((m) => m.operation === ws.operation);
    const fallbackNote = 'kubectl 1.30–1.38 hide it by falling back to SPDY; WebSocket-only clients fail.';
    // The fix is the hop's rule, whichever subresource showed it: it names every streaming subresource (kubectl exec,
    // cp, attach and port-forward all upgrade there), so one hop's rule is one finding in the report, not one per operation.
    const all = STREAMING_SUBRESOURCE_WORDS;
    // No plain GET was run (interrupted before it): the one-session diagnosis (a hop refused the upgrade) stands;
    // calling it a method rule would be a finding the evidence does not hold.
    const tried = context.methodProbes !== undefined;
    if (tried && plain?.byApiServer) {
      out.push({
        replaces: 'hop-refused-upgrade',
        diagnosis: {
          code: 'hop-refused-upgrade',
          summary: `On ${sub}, SPDY's POST passed and WebSocket's upgrade was refused with ${ws.upgrade.status} by ${by}; a plain GET (no Upgrade) to ${sub} reached the API server (${plain.status}): the rule matches the WebSocket Upgrade, not the method.`,
          check: `A rule refuses WebSocket upgrades (\`Upgrade: websocket\`) on the way: allow them for ${all}. ${fallbackNote} ${hopFix('rule', hop)}`,
        },
      });
    } else if (tried) {
      const evidence =
        plain && plain.status !== null ? ` A plain GET (no Upgrade) to ${sub} was refused with ${plain.status} by the hop too: the rule is on the method.` : '';
      out.push({
        replaces: 'hop-refused-upgrade',
        diagnosis: {
          code: 'verb-acl',
          summary: `On ${sub}, SPDY's POST passed and WebSocket's GET was refused with ${ws.upgrade.status} by ${by}.${evidence}`,
          check: `A rule (WAF, egress ACL, proxy policy) allows POST and not GET on ${sub}, as written when kubectl spoke only SPDY: allow GET with \`Upgrade: websocket\` on ${all} too. ${fallbackNote} ${hopFix('rule', hop)}`,
        },
      });
    }
  }
  if (ws.upgrade.ok && upgradeStripped(spdy.upgrade)) {
    const hop = identifyHop(spdy.upgrade);
    // A Via entry with protocol version 2 ("2 nghttpx", "2.0 envoy") is the HTTP/2 leg itself, named by the hop.
    const h2 = spdy.upgrade.via
      ?.split(',')
      .map((v) => v.trim())
      .find((v) => /^(HTTP\/)?2(\.0)? /i.test(v));
    out.push({
      replaces: 'hop-stripped-upgrade',
      diagnosis: {
        code: 'http2-leg',
        summary: `WebSocket ${OPERATION_WORDS[ws.operation]} upgraded through the path, but SPDY's request reached the API server without its Upgrade (400 ${spdy.upgrade.statusReason ?? 'BadRequest'})${hop ? `, through ${hop.product.name} (${hop.evidence})` : ''}.${h2 ? ` The reply's Via header names an HTTP/2 leg ("${h2}").` : ''}`,
        check: `A hop carries WebSocket and not SPDY/3.1: ${h2 ? 'an HTTP/2 leg' : 'typically an HTTP/2 leg'} (WebSocket has an HTTP/2 mapping, RFC 8441 extended CONNECT; SPDY/3.1 has none), or a proxy told to tunnel only websocket upgrades. kubectl 1.31+ is unaffected; kubectl ≤1.29, and 1.30's port-forward, fail here. ${hopFix('upgrade', hop)}`,
      },
    });
  }
  return out;
}

/** What the RBAC preflight means for each transport, before anything fails. */
export function rbacFindings(
  access: readonly AccessSummary[],
  createForWebSocket: boolean | undefined,
  gitVersion: string | null,
  operations: readonly Operation[] = OPERATIONS,
): Diagnosis[] {
  const out: Diagnosis[] = [];
  const allowed = (sub: string, verb: string) => access.find((a) => a.subresource === sub && a.verb === verb)?.allowed;
  // Only what the plan probes: attach's verbs matter to a plan with attach.
  for (const sub of operations) {
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
