/** The clusters of a deployment config, parsed by one set of rules wherever they come from. */
import { type Checker, REGION } from './checker.js';
import { DEFAULT_TARGET_PORT, RULES } from './rules.js';
import type { ClusterAuth, ClusterConfig } from './types.js';

/** The clusters, by the same rules wherever they come from: the config file, or the deployed function's KSP_LOCATION_CONFIG. */
export function parseClusters(c: Checker, list: readonly unknown[]): ClusterConfig[] {
  return list.map((v, i): ClusterConfig => {
    const f = `clusters[${i}]`;
    const o = c.only(v, f, ['name', 'endpoint', 'caData', 'auth', 'target']);
    const endpoint = c.str(o, 'endpoint', f);
    c.check(`${f}.endpoint`, RULES.endpoint(endpoint));
    const a = c.only(o.auth, `${f}.auth`, ['type', 'clusterName', 'region', 'accessEntryGroup', 'secretArn', 'kmsKeyArn']);
    let auth: ClusterAuth;
    if (a.type === 'eks') {
      auth = {
        type: 'eks',
        clusterName: c.str(a, 'clusterName', `${f}.auth`, /^[0-9A-Za-z][A-Za-z0-9\-_]{0,99}$/, 'is not an EKS cluster name'),
        region: c.optStr(a, 'region', `${f}.auth`, REGION, 'is not an AWS region'),
        accessEntryGroup: c.optStr(a, 'accessEntryGroup', `${f}.auth`, /^[a-z0-9]([-a-z0-9.:]{0,61}[a-z0-9])?$/, 'is not a Kubernetes group name'),
      };
    } else if (a.type === 'secret') {
      auth = {
        type: 'secret',
        secretArn: c.str(
          a,
          'secretArn',
          `${f}.auth`,
          /^arn:aws[a-z-]*:secretsmanager:[a-z0-9-]+:\d{12}:secret:[A-Za-z0-9/_+=.@-]+$/,
          'is not a Secrets Manager secret ARN',
        ),
        kmsKeyArn: c.optStr(a, 'kmsKeyArn', `${f}.auth`, /^arn:aws[a-z-]*:kms:[a-z0-9-]+:\d{12}:key\/[0-9a-f-]{36}$/, 'is not a KMS key ARN'),
      };
    } else c.fail(`${f}.auth.type`, 'must be "eks" or "secret"');
    const t = c.only(o.target, `${f}.target`, ['namespace', 'pod', 'selector', 'container', 'port', 'perNode']);
    return {
      name: c.name(o, f),
      endpoint,
      caData: c.optStr(o, 'caData', f, /^[A-Za-z0-9+/=\s]+$/, 'must be base64'),
      auth,
      target: {
        namespace: c.str(t, 'namespace', `${f}.target`, /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/, 'is not a namespace name'),
        pod: c.optStr(t, 'pod', `${f}.target`, /^[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?$/, 'is not a pod name'),
        selector: c.optStr(
          t,
          'selector',
          `${f}.target`,
          /^[A-Za-z0-9./_-]+=[A-Za-z0-9._-]*(,[A-Za-z0-9./_-]+=[A-Za-z0-9._-]*)*$/,
          'is not a label selector (k=v,k2=v2)',
        ),
        container: c.optStr(t, 'container', `${f}.target`),
        port: (() => {
          const port = t.port ?? DEFAULT_TARGET_PORT;
          c.check(`${f}.target.port`, RULES.port(port));
          return port as number;
        })(),
        perNode: t.perNode === undefined ? undefined : c.bool(t, 'perNode', `${f}.target`, false),
      },
    };
  });
}
