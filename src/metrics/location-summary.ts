/**
 * What one location's run returns (the Lambda's reply, the task's last log line, what `invoke` prints): defined
 * below both the runners (lambda/) and `invoke`'s task client (aws/task-invoke.ts), which read it.
 */
import type { PerNodeReport } from '../probe/per-node.js';
import type { ProbeReport } from '../probe/types.js';
import type { PublishOutcome } from './cloudwatch.js';

export interface RefusedHold {
  readonly holdSeconds: number;
  /** Set when what did not fit was the transfer (`transfer`), not a hold. */
  readonly transferBytes?: number;
  readonly reason: string;
}

export interface LocationSummary {
  readonly ok: boolean;
  readonly location: string;
  readonly schedule?: string;
  /** The invocation's run id: its log lines (verdicts, evidence) carry it, and a page's evidence link finds them by it. */
  readonly run?: string;
  readonly reports: ProbeReport[];
  readonly refused: RefusedHold[];
  readonly publish?: PublishOutcome;
  /** Per-node probing, for clusters whose target says perNode. */
  readonly perNode?: PerNodeReport[];
  readonly error?: { readonly code: string; readonly message: string };
}
