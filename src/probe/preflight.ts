/**
 * Before it upgrades, kubectl fetches the pod (kubectl pkg/cmd/exec and
 * portforward: the builder's GET, and `status.phase` must be Running for
 * port-forward and not Succeeded/Failed for exec). The probe does the same
 * GET, and reads its answer for what would make every session fail for a
 * reason that is the probe's setup, not the path: credentials the API server
 * rejects, a target that is missing, forbidden or not running.
 */
import { errorCodeOf, errorMessage } from '../errors.js';
import { MAX_REST_BODY_BYTES, type RestClient } from '../kube/rest.js';
import type { ClusterTarget, Diagnosis } from './types.js';
import type { PodContainers } from './container-choice.js';

interface PodShape extends PodContainers {
  readonly status?: { readonly phase?: string };
}

interface PodListShape {
  readonly items?: readonly (PodShape & { readonly metadata?: { readonly name?: string } })[];
}

/**
 * The pod to probe when none is named: the first Running pod (by name) matching the selector, as a
 * StatefulSet's or DaemonSet's pods are found. Needs `list` on pods in the namespace.
 */
export async function resolveTarget(
  rest: RestClient,
  namespace: string,
  selector: string,
): Promise<{ pod: string; object: PodContainers } | { notMeasured: Diagnosis } | { unresolved: string }> {
  const path = `/api/v1/namespaces/${encodeURIComponent(namespace)}/pods?labelSelector=${encodeURIComponent(selector)}`;
  let r;
  try {
    r = await rest.request('GET', path, undefined, 10_000);
  } catch (err) {
    // A list larger than the probe reads is the server's answer, not the path's failure: say so, never guess a pod.
    if (errorCodeOf(err) === 'REST_FAILED' && errorCodeOf((err as { cause?: unknown }).cause) === 'UND_ERR_RES_EXCEEDED_MAX_SIZE') {
      return {
        notMeasured: {
          code: 'target-unlisted',
          summary: `The pods labelled ${selector} in ${namespace} are listed in more than ${MAX_REST_BODY_BYTES / 1024 / 1024} MiB, more than the probe reads: it does not guess which one is its target.`,
          check:
            "Name the target with --pod (the config's target.pod), or narrow --selector to the probe's own pods (`kube-stream-probe manifest` labels them).",
        },
      };
    }
    // The path failed, not the target: the sessions will meet the same failure and say what it is.
    return { unresolved: errorMessage(err) };
  }
  // Only the API server's own answer (a Status) says something about the probe's setup; a hop's says something about the path.
  if (r.status !== 200 && !r.kubeStatus) return { unresolved: `GET ${path} answered ${r.status} without a Kubernetes Status` };
  if (r.status === 401) return { notMeasured: credentialsRejected(path, r.kubeStatus?.message ?? 'Unauthorized') };
  if (r.status === 403) {
    return {
      notMeasured: {
        code: 'target-forbidden',
        summary: `The probe may not list pods in ${namespace} to find its target (${selector}): ${r.kubeStatus?.message ?? 'Forbidden'}`,
        check: "Grant list on pods in that namespace (see `kube-stream-probe manifest`), or name the pod with --pod (the config's target.pod).",
      },
    };
  }
  const items = r.status === 200 ? (((r.body ?? {}) as PodListShape).items ?? []) : [];
  const running = items
    .filter((p) => p.status?.phase === 'Running' && p.metadata?.name)
    .sort((a, b) => (a.metadata!.name! < b.metadata!.name! ? -1 : a.metadata!.name! > b.metadata!.name! ? 1 : 0));
  if (running.length === 0) {
    return {
      notMeasured: {
        code: 'target-missing',
        summary: `No Running pod labelled ${selector} in ${namespace} (${podsFound(items)}).`,
        check: 'Deploy the target (`kube-stream-probe manifest | kubectl apply -f -`) and wait for it to run, or name a pod with --pod.',
      },
    };
  }
  return { pod: running[0]!.metadata!.name!, object: running[0]! };
}

/** The pods a list found, for a sentence: every one when few, else the count, by phase, and the first few (issue 57 §7). */
function podsFound(items: PodListShape['items'] & object): string {
  const named = items.map((p) => `${p.metadata?.name} ${p.status?.phase ?? '?'}`);
  if (items.length <= LISTED_PODS) return `${items.length} found${items.length ? `: ${named.join(', ')}` : ''}`;
  const phases = new Map<string, number>();
  for (const p of items) phases.set(p.status?.phase ?? '?', (phases.get(p.status?.phase ?? '?') ?? 0) + 1);
  const byPhase = [...phases].map(([phase, n]) => `${n.toLocaleString('en-US')} ${phase}`).join(', ');
  return `${items.length.toLocaleString('en-US')} found, ${byPhase}; the first ${LISTED_PODS}: ${named.slice(0, LISTED_PODS).join(', ')}`;
}

/** How many pods a not-found sentence names one by one. */
const LISTED_PODS = 10;

function credentialsRejected(path: string, message: string): Diagnosis {
  return {
    code: 'credentials-rejected',
    summary: `The API server rejected the probe's credentials (401 Unauthorized on GET ${path}): ${message}`,
    check:
      'Fix the kubeconfig user (an expired token, an exec plugin that failed, a client certificate the server does not trust): kubectl with the same kubeconfig gets the same 401.',
  };
}

/**
 * The target pod as kubectl GETs it before it upgrades: why the probe cannot measure it (`notMeasured`), and the pod
 * itself when it was read (its containers decide the container exec and attach run in: container-choice.ts).
 * Neither when the GET itself failed on the path: the sessions will meet the same failure and say how.
 */
export async function readTarget(
  rest: RestClient,
  target: Pick<ClusterTarget, 'namespace' | 'pod' | 'container'>,
): Promise<{ readonly notMeasured?: Diagnosis; readonly pod?: PodContainers }> {
  const path = `/api/v1/namespaces/${encodeURIComponent(target.namespace)}/pods/${encodeURIComponent(target.pod)}`;
  const where = `pod ${target.namespace}/${target.pod}`;
  let r;
  try {
    r = await rest.request('GET', path, undefined, 10_000);
  } catch {
    return {}; // the path failed: the sessions will say how
  }
  const message = r.kubeStatus?.message ?? `HTTP ${r.status}`;
  // A refusal without a Kubernetes Status came from a hop: that is the path, which the sessions measure.
  if (r.status !== 200 && !r.kubeStatus) return {};
  switch (r.status) {
    case 200: {
      const pod = (r.body ?? {}) as PodShape;
      const phase = pod.status?.phase;
      if (phase && phase !== 'Running') {
        return {
          pod,
          notMeasured: {
            code: 'target-not-running',
            summary: `The ${where} is ${phase}, not Running: kubectl refuses to exec into or port-forward to it, and so does the probe's measurement.`,
            check: `Check it with \`kubectl -n ${target.namespace} describe pod ${target.pod}\` (image pull, scheduling, node drain).`,
          },
        };
      }
      // The API server accepts any container of the pod, init and ephemeral ones too (strategy.go podHasContainerWithName).
      const names = [...(pod.spec?.initContainers ?? []), ...(pod.spec?.containers ?? []), ...(pod.spec?.ephemeralContainers ?? [])].map((c) => c.name);
      if (target.container && !names.includes(target.container)) {
        return {
          pod,
          notMeasured: {
            code: 'target-missing',
            summary: `The ${where} has no container "${target.container}" (it has ${names.join(', ') || 'none'}): the API server would refuse every exec and attach (400 "container ${target.container} is not valid for pod ${target.pod}").`,
            check:
              "Fix --container (the config's target.container), or leave it out: the probe then picks the container as kubectl does (the pod's kubectl.kubernetes.io/default-container annotation, else its first container).",
          },
        };
      }
      return { pod };
    }
    case 401:
      return { notMeasured: credentialsRejected(path, message) };
    case 403:
      return {
        notMeasured: {
          code: 'target-forbidden',
          summary: `The probe may not read its target (403 on GET ${path}): ${message}`,
          check:
            'Grant get on the target pod, and get and create on pods/exec and pods/portforward (see `kube-stream-probe manifest`); kubectl needs the same.',
        },
      };
    case 404:
      return {
        notMeasured: {
          code: 'target-missing',
          summary: `The ${where} does not exist (or its namespace does not): ${message}`,
          check:
            "Deploy it (`kube-stream-probe manifest | kubectl apply -f -`), or point --pod / -n (the config's target) at a pod that runs cat and a TCP echo port.",
        },
      };
    default:
      return {};
  }
}
