/**
 * The event's plan cut to the time an invocation has: a hold runs only if its whole session fits before publishing
 * (with attach, after the shorter holds it runs behind), the transfers (one after another, alongside the holds) only
 * if their chain does; what does not fit is refused up front, with why, in the run's summary.
 */
import { lambdaSessionMs } from '../config/lambda-limits.js';
import { planTransferMs, transferSessions } from '../config/plan.js';
import type { RefusedHold } from '../metrics/location-summary.js';
import { TRANSFER_FLOOR_BYTES_PER_SECOND } from '../probe/transfer.js';
import { SHARED_PROCESS_OPERATIONS, type RunPlan } from '../vocabulary.js';

export function fitToBudget(plan: RunPlan, sessionBudgetMs: number): { plan: RunPlan; refused: RefusedHold[] } {
  const left = `only ${Math.max(0, Math.floor(sessionBudgetMs / 1000))}s are left before publishing`;
  const refused: RefusedHold[] = [];
  const holdsSeconds: number[] = [];
  // Attach's holds run one after another, shortest first (SHARED_PROCESS_OPERATIONS): each needs the ones before it too.
  const oneAfterAnother = plan.operations.some((o) => SHARED_PROCESS_OPERATIONS.includes(o));
  let before = 0;
  for (const h of plan.holdsSeconds) {
    const needs = before + lambdaSessionMs(h);
    if (needs <= sessionBudgetMs) {
      holdsSeconds.push(h);
      if (oneAfterAnother) before = needs;
    } else {
      const after = before ? `, behind the shorter attach holds (${Math.ceil(before / 1000)}s of it)` : '';
      refused.push({ holdSeconds: h, reason: `a ${h}s hold needs up to ${Math.ceil(needs / 1000)}s with handshakes and echoes${after}; ${left}` });
    }
  }
  let transferBytes = plan.transferBytes;
  const needs = planTransferMs(plan);
  if (transferBytes && needs > sessionBudgetMs) {
    refused.push({
      holdSeconds: 0,
      transferBytes,
      reason: `${transferSessions(plan)} transfers of ${transferBytes} bytes, one after another, may need up to ${Math.ceil(needs / 1000)}s (each limit assumes ${TRANSFER_FLOOR_BYTES_PER_SECOND / 1024} KiB/s); ${left}`,
    });
    transferBytes = undefined;
  }
  const fitted: RunPlan = {
    operations: plan.operations,
    transports: plan.transports,
    keepalives: plan.keepalives,
    holdsSeconds,
    ...(transferBytes ? { transferBytes } : {}),
    ...(plan.holdShapes ? { holdShapes: plan.holdShapes } : {}),
    ...(transferBytes && plan.transferShapes ? { transferShapes: plan.transferShapes } : {}),
  };
  return { plan: fitted, refused };
}
