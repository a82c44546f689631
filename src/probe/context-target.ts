/**
 * The probe target of a kubeconfig context, as every entry point that reads one builds it (`run`, `audit`,
 * `serve`'s /probe and the API's probeCluster): the context's name and namespace, the target flags, port 8080 by
 * default. The connection is the caller's (each resolves credentials its own way).
 */
import type { ResolvedContext } from '../kube/context.js';
import { TARGET_DEFAULTS } from '../kube/target.js';
import type { TargetSpec } from './types.js';

export interface TargetChoice {
  /** The name in results and metrics (default the context's). */
  readonly name?: string;
  readonly pod?: string;
  readonly selector?: string;
  readonly container?: string;
  readonly port?: number;
}

export function contextTarget(ctx: Pick<ResolvedContext, 'contextName' | 'namespace'>, choice: TargetChoice): Omit<TargetSpec, 'connection'> {
  return {
    name: choice.name ?? ctx.contextName,
    namespace: ctx.namespace,
    pod: choice.pod,
    selector: choice.selector,
    container: choice.container,
    port: choice.port ?? TARGET_DEFAULTS.port,
  };
}
