/**
 * `kube-stream-probe manifest`: the probe target (a pod whose main process is
 * `cat`, with a TCP echo port) and least-privilege RBAC: get + create on
 * pods/exec and pods/portforward for that one pod (WebSocket upgrades are GET,
 * SPDY upgrades POST, and 1.35+ wants create for both), plus
 * SelfSubjectAccessReview for the preflight.
 */
import YAML from 'yaml';
import { probeError } from '../errors.js';
import { integer, parse } from './args.js';
import type { CommandIO } from './io.js';

export const MANIFEST_HELP = `Usage: kube-stream-probe manifest [flags] | kubectl apply -f -

Prints YAML for the probe target and the RBAC the probe needs.

Flags:
  -n, --namespace NS        namespace to create (default kube-stream-probe)
  --pod NAME                target pod name (default probe-target)
  --port N                  TCP echo port (default 8080)
  --group NAME              bind the Role to this group (default kube-stream-probe;
                            map your probe's IAM role to it with an EKS access entry)
  --user NAME               bind to this user instead
  --service-account NS/NAME bind to this service account instead
  -h, --help                this help
`;

export interface ManifestOptions {
  readonly namespace: string;
  readonly pod: string;
  readonly port: number;
  readonly subject: { readonly kind: 'Group' | 'User' | 'ServiceAccount'; readonly name: string; readonly namespace?: string };
}

const DNS_LABEL = /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/;

export function manifestDocuments(o: ManifestOptions): unknown[] {
  const labels = { 'app.kubernetes.io/name': 'kube-stream-probe-target' };
  const subject =
    o.subject.kind === 'ServiceAccount'
      ? { kind: 'ServiceAccount', name: o.subject.name, namespace: o.subject.namespace }
      : { kind: o.subject.kind, name: o.subject.name, apiGroup: 'rbac.authorization.k8s.io' };
  const restricted = {
    allowPrivilegeEscalation: false,
    readOnlyRootFilesystem: true,
    runAsNonRoot: true,
    runAsUser: 65534,
    capabilities: { drop: ['ALL'] },
    seccompProfile: { type: 'RuntimeDefault' },
  };
  const resources = { requests: { cpu: '5m', memory: '8Mi' }, limits: { memory: '32Mi' } };
  return [
    { apiVersion: 'v1', kind: 'Namespace', metadata: { name: o.namespace, labels: { 'pod-security.kubernetes.io/enforce': 'restricted' } } },
    {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: o.pod, namespace: o.namespace, labels, annotations: { 'kubectl.kubernetes.io/default-container': 'main' } },
      spec: {
        automountServiceAccountToken: false,
        enableServiceLinks: false,
        containers: [
          // exec runs `cat` here; attach joins the main process, which is `cat` too.
          { name: 'main', image: 'busybox:1.36', command: ['cat'], stdin: true, securityContext: restricted, resources },
          {
            name: 'echo',
            image: 'alpine/socat:1.8.0.1',
            args: [`TCP-LISTEN:${o.port},fork,reuseaddr`, 'EXEC:cat'],
            ports: [{ name: 'echo', containerPort: o.port, protocol: 'TCP' }],
            securityContext: restricted,
            resources,
          },
        ],
      },
    },
    {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'Role',
      metadata: { name: 'kube-stream-probe', namespace: o.namespace },
      rules: [
        // Only the target pod. kubectl also GETs the pod before it upgrades.
        { apiGroups: [''], resources: ['pods'], resourceNames: [o.pod], verbs: ['get'] },
        // WebSocket = GET ("get"), SPDY = POST ("create"); from 1.35 WebSocket needs both.
        { apiGroups: [''], resources: ['pods/exec', 'pods/portforward'], resourceNames: [o.pod], verbs: ['get', 'create'] },
      ],
    },
    {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'RoleBinding',
      metadata: { name: 'kube-stream-probe', namespace: o.namespace },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'kube-stream-probe' },
      subjects: [subject],
    },
    {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRole',
      metadata: { name: 'kube-stream-probe-access-review' },
      rules: [{ apiGroups: ['authorization.k8s.io'], resources: ['selfsubjectaccessreviews'], verbs: ['create'] }],
    },
    {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRoleBinding',
      metadata: { name: 'kube-stream-probe-access-review' },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'kube-stream-probe-access-review' },
      subjects: [subject],
    },
  ];
}

export function manifestYaml(o: ManifestOptions): string {
  return manifestDocuments(o).map((d) => YAML.stringify(d, { aliasDuplicateObjects: false })).join('---\n');
}

export async function manifestCommand(argv: readonly string[], io: CommandIO): Promise<number> {
  const { values } = parse(argv, {
    namespace: { type: 'string', short: 'n' },
    pod: { type: 'string' },
    port: { type: 'string' },
    group: { type: 'string' },
    user: { type: 'string' },
    'service-account': { type: 'string' },
    help: { type: 'boolean', short: 'h' },
  });
  if (values.help) {
    io.out(MANIFEST_HELP);
    return 0;
  }
  const namespace = values.namespace ?? 'kube-stream-probe';
  const pod = values.pod ?? 'probe-target';
  for (const [flag, v] of [['namespace', namespace], ['pod', pod]] as const) {
    if (!DNS_LABEL.test(v)) throw probeError('USAGE', `--${flag}: "${v}" is not a valid Kubernetes name (lower-case letters, digits and '-', at most 63)`, { field: flag });
  }
  const chosen = [values.group, values.user, values['service-account']].filter((v) => v !== undefined);
  if (chosen.length > 1) throw probeError('USAGE', 'give only one of --group, --user, --service-account', { field: 'subject' });
  let subject: ManifestOptions['subject'] = { kind: 'Group', name: values.group ?? 'kube-stream-probe' };
  if (values.user) subject = { kind: 'User', name: values.user };
  if (values['service-account']) {
    const m = /^([a-z0-9-]+)\/([a-z0-9.-]+)$/.exec(values['service-account']);
    if (!m) throw probeError('USAGE', `--service-account: "${values['service-account']}" is not NAMESPACE/NAME`, { field: 'service-account' });
    subject = { kind: 'ServiceAccount', namespace: m[1]!, name: m[2]! };
  }
  io.out(manifestYaml({ namespace, pod, port: integer('port', values.port, 1, 65535) ?? 8080, subject }));
  return 0;
}
