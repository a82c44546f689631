/**
 * The sessions of a plan: operation × keepalive × hold (× hold shape) × transport, and the transfers. The runner
 * runs them; the config counts them (location-size.ts: how many sessions one invocation starts).
 */
import { TRANSFER_OPERATIONS, transferShapesOf, type HoldShape, type RunPlan } from '../vocabulary.js';
import type { SessionSpec } from './types.js';

/** The sessions of a plan's matrix. */
export function expandPlan(plan: RunPlan): SessionSpec[] {
  const specs: SessionSpec[] = [];
  // A hold shape is about what the pod writes or reads: only exec can shape it (port-forward's pod side is an echo);
  // a terminal (tty) is exec's and attach's, at every hold (a 0 s hold still resizes).
  const shapes = (operation: string, holdSeconds: number): (HoldShape | undefined)[] => {
    if (operation === 'portforward') return [undefined];
    const fits = (h: HoldShape) => h === 'silent' || h === 'tty' || (operation === 'exec' && holdSeconds > 0);
    const asked = (plan.holdShapes ?? ['silent']).filter(fits);
    return asked.length ? asked.map((h) => (h === 'silent' ? undefined : h)) : [undefined];
  };
  for (const operation of plan.operations)
    for (const keepalive of plan.keepalives)
      for (const holdSeconds of plan.holdsSeconds)
        for (const holdShape of shapes(operation, holdSeconds))
          for (const transport of plan.transports) {
            // A hold of 0 s sends no keepalive at all, so one of kubectl and none says it all; an SDK client speaks
            // other protocols (port-forward: the kubelet's legacy one), so its session runs at every hold.
            if (holdSeconds === 0 && keepalive !== 'sdk' && keepalive !== plan.keepalives.find((k) => k !== 'sdk')) continue;
            // SDK clients are WebSocket-only, and hold silently.
            if (keepalive === 'sdk' && (transport !== 'websocket' || holdShape)) continue;
            specs.push({ operation, transport, keepalive, holdSeconds, ...(holdShape ? { holdShape } : {}) });
          }
  // The transfer rides on kubectl's own keepalive, as `kubectl cp` does.
  if (plan.transferBytes)
    for (const operation of plan.operations.filter((o) => TRANSFER_OPERATIONS.includes(o)))
      for (const transferShape of transferShapesOf(operation, plan))
        for (const transport of plan.transports)
          specs.push({
            operation,
            transport,
            keepalive: 'kubectl',
            holdSeconds: 0,
            transferBytes: plan.transferBytes,
            ...(transferShape === 'echo' ? {} : { transferShape }),
          });
  return specs;
}
