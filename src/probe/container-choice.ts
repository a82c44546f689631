/**
 * The container exec and attach run in, chosen as kubectl chooses it before it upgrades (k8s.io/kubectl
 * pkg/cmd/util/podcmd/podcmd.go FindOrDefaultContainerByName): the one named (`--container`, the config's
 * target.container), else the pod's `kubectl.kubernetes.io/default-container` annotation when it names one of its
 * containers, else its first container. The request always carries it: kube-apiserver picks a container only for a
 * pod with exactly one and refuses the rest with 400 "a container name must be specified for pod X, choose one of:
 * [...]" (pkg/registry/core/pod/strategy.go validateContainer), and the manifest's target has three.
 */
import { TARGET_DEFAULTS } from '../kube/target.js';

export const DEFAULT_CONTAINER_ANNOTATION = 'kubectl.kubernetes.io/default-container';

/** What the pod's GET said of its containers (the fields the choice reads). */
export interface PodContainers {
  readonly metadata?: { readonly annotations?: Readonly<Record<string, string>> };
  readonly spec?: {
    readonly containers?: readonly { readonly name?: string }[];
    readonly initContainers?: readonly { readonly name?: string }[];
    readonly ephemeralContainers?: readonly { readonly name?: string }[];
  };
}

/**
 * How the container was chosen: `flag` (named by the user), `annotation`, `first` (kubectl's default, which it
 * announces), `manifest` (the pod could not be read: the manifest's `main`, for the probe's own target found by
 * label), `none` (the pod could not be read and was named by the user: no container is sent and the API server
 * decides, as for a pod of one container).
 */
export type ContainerSource = 'flag' | 'annotation' | 'first' | 'manifest' | 'none';

export interface ContainerChoice {
  readonly container?: string;
  readonly source: ContainerSource;
  /** The pod's containers (spec.containers), when its GET was read. */
  readonly containers?: readonly string[];
  /** kubectl's own line on stderr for this choice, where kubectl prints one ("Defaulted container …"). */
  readonly kubectlSays?: string;
}

/**
 * kubectl's choice for a pod (undefined: its GET failed on the path). `manifestTarget`: the pod is the probe's own
 * target found by its label, whose containers the manifest fixes.
 */
export function chooseContainer(pod: PodContainers | undefined, named: string | undefined, manifestTarget: boolean): ContainerChoice {
  if (!pod) {
    if (named) return { container: named, source: 'flag' };
    return manifestTarget ? { container: TARGET_DEFAULTS.container, source: 'manifest' } : { source: 'none' };
  }
  const containers = names(pod.spec?.containers);
  if (named) return { container: named, source: 'flag', containers };
  const annotated = pod.metadata?.annotations?.[DEFAULT_CONTAINER_ANNOTATION];
  const all = [...containers, ...names(pod.spec?.initContainers), ...names(pod.spec?.ephemeralContainers)];
  if (annotated && all.includes(annotated)) return { container: annotated, source: 'annotation', containers };
  const first = containers[0];
  if (first === undefined) return { source: 'none', containers };
  // podcmd.go: announced when the pod has more than one container, or any init or ephemeral one.
  const announce = containers.length > 1 || all.length > containers.length;
  return {
    container: first,
    source: 'first',
    containers,
    ...(announce ? { kubectlSays: `Defaulted container "${first}" out of: ${allContainerNames(pod)}` } : {}),
  };
}

/** podcmd.go allContainerNames: regular, then ephemeral "(ephem)", then init "(init)". */
function allContainerNames(pod: PodContainers): string {
  return [
    ...names(pod.spec?.containers),
    ...names(pod.spec?.ephemeralContainers).map((n) => `${n} (ephem)`),
    ...names(pod.spec?.initContainers).map((n) => `${n} (init)`),
  ].join(', ');
}

function names(list: readonly { readonly name?: string }[] | undefined): string[] {
  return (list ?? []).map((c) => c.name).filter((n): n is string => typeof n === 'string' && n !== '');
}

/** One line for `-v` and the report: which container, and why. */
export function describeChoice(pod: string, choice: ContainerChoice): string {
  switch (choice.source) {
    case 'flag':
      return `exec and attach in container "${choice.container}" of pod ${pod} (named by --container)`;
    case 'annotation':
      return `exec and attach in container "${choice.container}" of pod ${pod} (its ${DEFAULT_CONTAINER_ANNOTATION} annotation, as kubectl picks it)`;
    case 'first':
      return `exec and attach in container "${choice.container}" of pod ${pod} (its first container, as kubectl picks it: no ${DEFAULT_CONTAINER_ANNOTATION} annotation)`;
    case 'manifest':
      return `exec and attach in container "${choice.container}" of pod ${pod} (the pod could not be read; the manifest's container)`;
    case 'none':
      return `exec and attach in pod ${pod} name no container (the pod could not be read): the API server picks one only for a pod of one container`;
  }
}
