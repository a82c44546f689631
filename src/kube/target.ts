/**
 * The probe target, as `kube-stream-probe manifest` deploys it and as the
 * probe finds it: a StatefulSet, so its one pod has a stable name
 * (`probe-target-0`) that least-privilege RBAC can name, and is recreated on
 * another node when the upgrade drains this one; and a label the probe
 * resolves it by, so no one has to know the pod's name.
 */
export const TARGET_LABEL = { key: 'app.kubernetes.io/name', value: 'kube-stream-probe-target' } as const;
export const TARGET_SELECTOR = `${TARGET_LABEL.key}=${TARGET_LABEL.value}`;
/** The per-node targets (`manifest --per-node`: a DaemonSet), one pod on each node. */
export const NODE_TARGET_LABEL = { key: 'app.kubernetes.io/name', value: 'kube-stream-probe-node' } as const;
export const NODE_TARGET_SELECTOR = `${NODE_TARGET_LABEL.key}=${NODE_TARGET_LABEL.value}`;

export const TARGET_DEFAULTS = {
  namespace: 'kube-stream-probe',
  /** The StatefulSet; its pod is `<name>-0`. */
  name: 'probe-target',
  container: 'main',
  /** The container with `tty: true` that terminal attach sessions join (its process: hold-shape.ts TTY_SIZE_SCRIPT). */
  ttyContainer: 'tty',
  port: 8080,
  /** Images, overridable for air-gapped registries (manifest --image / --echo-image). */
  image: 'busybox:1.36',
  echoImage: 'alpine/socat:1.8.0.1',
} as const;

/** The pod a StatefulSet of one replica runs. */
export const statefulPodName = (name: string) => `${name}-0`;

/** Parses `k=v,k2=v2` (equality only, what the probe's own selectors use) into pairs. */
export function parseSelector(selector: string): Array<[string, string]> {
  return selector
    .split(',')
    .map((p) => p.trim())
    .filter(Boolean)
    .map((p) => {
      const [k, ...v] = p.split('=');
      return [k!.trim(), v.join('=').trim()] as [string, string];
    });
}
