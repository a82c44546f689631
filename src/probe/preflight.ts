/**
 * Before it upgrades, kubectl fetches the pod (kubectl pkg/cmd/exec and
 * portforward: the builder's GET, and `status.phase` must be Running for
 * port-forward and not Succeeded/Failed for exec). The probe does the same
 * GET, and reads its answer for what would make every session fail for a
 * reason that is the probe's setup, not the path: credentials the API server
 * rejects, a target that is missing, forbidden or not running.
 */
import type { RestClient } from '../kube/rest.js';
import type { ClusterTarget, Diagnosis } from './types.js';

interface PodShape {
  readonly status?: { readonly phase?: string };
  readonly spec?: { readonly containers?: readonly { readonly name?: string }[] };
}

/** Why the probe cannot measure this target, or undefined when it can (or when the GET itself failed on the path). */
export async function checkTarget(rest: RestClient, target: Pick<ClusterTarget, 'namespace' | 'pod' | 'container'>): Promise<Diagnosis | undefined> {
  const path = `/api/v1/namespaces/${encodeURIComponent(target.namespace)}/pods/${encodeURIComponent(target.pod)}`;
  const where = `pod ${target.namespace}/${target.pod}`;
  let r;
  try {
    r = await rest.request('GET', path, undefined, 10_000);
  } catch {
    return undefined; // the path failed: the sessions will say how
  }
  const message = r.kubeStatus?.message ?? `HTTP ${r.status}`;
  switch (r.status) {
    case 200: {
      const pod = (r.body ?? {}) as PodShape;
      const phase = pod.status?.phase;
      if (phase && phase !== 'Running') {
        return {
          code: 'target-not-running',
          summary: `The ${where} is ${phase}, not Running: kubectl refuses to exec into or port-forward to it, and so does the probe's measurement.`,
          check: `Check it with \`kubectl -n ${target.namespace} describe pod ${target.pod}\` (image pull, scheduling, node drain).`,
        };
      }
      const names = (pod.spec?.containers ?? []).map((c) => c.name);
      if (target.container && !names.includes(target.container)) {
        return {
          code: 'target-missing',
          summary: `The ${where} has no container "${target.container}" (it has ${names.join(', ') || 'none'}).`,
          check: 'Fix --container (the config\'s target.container), or leave it out to use the first container.',
        };
      }
      return undefined;
    }
    case 401:
      return {
        code: 'credentials-rejected',
        summary: `The API server rejected the probe's credentials (401 Unauthorized on GET ${path}): ${message}`,
        check: 'Fix the kubeconfig user (an expired token, an exec plugin that failed, a client certificate the server does not trust): kubectl with the same kubeconfig gets the same 401.',
      };
    case 403:
      return {
        code: 'target-forbidden',
        summary: `The probe may not read its target (403 on GET ${path}): ${message}`,
        check: 'Grant get on the target pod, and get and create on pods/exec and pods/portforward (see `kube-stream-probe manifest`); kubectl needs the same.',
      };
    case 404:
      return {
        code: 'target-missing',
        summary: `The ${where} does not exist (or its namespace does not): ${message}`,
        check: 'Deploy it (`kube-stream-probe manifest | kubectl apply -f -`), or point --pod / -n (the config\'s target) at a pod that runs cat and a TCP echo port.',
      };
    default:
      return undefined;
  }
}
