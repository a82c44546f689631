/** The clusters of a deployment config, parsed by one set of rules wherever they come from. */
import type { Checker } from './checker.js';
import { DEFAULT_TARGET_PORT, NAME_RULES, RULES } from './rules.js';
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
        clusterName: c.ruled(a, 'clusterName', `${f}.auth`, NAME_RULES.eksClusterName),
        region: c.ruled(a, 'region', `${f}.auth`, NAME_RULES.region, true),
        accessEntryGroup: c.ruled(a, 'accessEntryGroup', `${f}.auth`, NAME_RULES.kubernetesGroup, true),
      };
    } else if (a.type === 'secret') {
      auth = {
        type: 'secret',
        secretArn: c.ruled(a, 'secretArn', `${f}.auth`, NAME_RULES.secretArn),
        kmsKeyArn: c.ruled(a, 'kmsKeyArn', `${f}.auth`, NAME_RULES.kmsKeyArn, true),
      };
    } else c.fail(`${f}.auth.type`, 'must be "eks" or "secret"');
    const t = c.only(o.target, `${f}.target`, ['namespace', 'pod', 'selector', 'container', 'port', 'perNode']);
    return {
      name: c.name(o, f),
      endpoint,
      caData: c.ruled(o, 'caData', f, NAME_RULES.caData, true),
      auth,
      target: {
        namespace: c.ruled(t, 'namespace', `${f}.target`, NAME_RULES.namespace),
        pod: c.ruled(t, 'pod', `${f}.target`, NAME_RULES.pod, true),
        selector: c.ruled(t, 'selector', `${f}.target`, NAME_RULES.selector, true),
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
