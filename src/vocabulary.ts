/**
 * The probe's vocabulary, defined once: the operations, transports and
 * keepalive modes a plan is made of, how hold durations are written, and the
 * longest hold any runner accepts. Used by the CLI (run, invoke, demo), the
 * Lambda event, the deployment config and the CDK construct alike, so a list
 * or a limit can never differ between them.
 */
import { probeError, type ErrorCode } from './errors.js';

/**
 * What a plan may probe: exec and port-forward (the default), and attach (`kubectl attach`, `kubectl run -it`,
 * `kubectl debug --attach`: the attach subresource, exec's channels without a command), opt-in.
 */
export const OPERATIONS = ['exec', 'portforward', 'attach'] as const;
export type Operation = (typeof OPERATIONS)[number];
/** What a plan probes when it names no operation. */
export const DEFAULT_OPERATIONS: readonly Operation[] = ['exec', 'portforward'];
/** Operations that carry a transfer (`--transfer`): exec (the kubectl cp path) and port-forward; attach has no command to run one. */
export const TRANSFER_OPERATIONS: readonly Operation[] = ['exec', 'portforward'];
/**
 * Operations whose sessions all join ONE process, the container's own: attach. containerd merges every attached
 * client's stdin into it and broadcasts its output to every attached client (pkg/cri/io/container_io.go, Attach:
 * stdoutGroup/stderrGroup), so one attach session's echo is traffic on every other attach session's connection. An
 * attach hold is idle only while no other attach session writes: their holds run one length after another
 * (probe/shared-process.ts), and a run with them lasts the sum of their holds (holdSpan).
 */
export const SHARED_PROCESS_OPERATIONS: readonly Operation[] = ['attach'];

export const TRANSPORTS = ['websocket', 'spdy'] as const;
export type Transport = (typeof TRANSPORTS)[number];

/**
 * What the client sends while a session is held, and how it speaks:
 * `kubectl`: exactly kubectl's keepalive (does kubectl's session survive?);
 * `none`: no pings at all, over both transports (what is the path's real idle timeout?);
 * `sdk`: a WebSocket-only SDK client as it really is (src/probe/sdk-clients.ts): no pings (it answers the server's),
 * exec offering what @kubernetes/client-node offers (v5 first, down to channel.k8s.io), port-forward over the
 * kubelet's legacy WebSocket protocol, not the SPDY tunnel; WebSocket only. It is what the WS-only forecast reads.
 */
export const KEEPALIVES = ['kubectl', 'none', 'sdk'] as const;
export type KeepaliveMode = (typeof KEEPALIVES)[number];

/**
 * What moves during a hold: nothing but the keepalive's pings (`silent`), or output from the pod every few
 * seconds with nothing from the client (`output`, as `tail -f` or `kubectl logs -f` through exec do), or input
 * from the client every few seconds with nothing back (`input`, as a slow upload does). Exec only: a
 * port-forward's pod side is an echo, which answers every byte. And `tty`: a silent hold in a terminal session
 * (`kubectl exec -it`, `kubectl attach -it`), exec and attach, at every hold: the terminal's size is sent as kubectl
 * sends it, checked through the terminal at the start, changed after the hold and checked again (probe/terminal.ts).
 */
export const HOLD_SHAPES = ['silent', 'output', 'input', 'tty'] as const;
export type HoldShape = (typeof HOLD_SHAPES)[number];

/**
 * How a transfer (`--transfer SIZE`) moves its bytes, as `kubectl cp` does on exec: `echo` both ways at once (stdin →
 * `cat` → stdout, the default), `upload` into the pod only (`kubectl cp file pod:`: the pod's `wc -c` counts what
 * arrived after stdin's end), `download` out of it only (`kubectl cp pod:file .`: the pod's `head -c SIZE /dev/zero`),
 * `small` both ways in tar's 512-byte blocks (`kubectl cp` of many small files: many small writes). Port-forward
 * carries `echo` and `small`; each shape is its own row.
 */
export const TRANSFER_SHAPES = ['echo', 'upload', 'download', 'small'] as const;
export type TransferShape = (typeof TRANSFER_SHAPES)[number];
/** The transfer shapes an operation's transfers run (port-forward's pod side is an echo: no upload or download). */
export const transferShapesOf = (operation: Operation, plan: Pick<RunPlan, 'transferShapes'>): TransferShape[] =>
  (plan.transferShapes ?? ['echo']).filter((s) => operation === 'exec' || s === 'echo' || s === 'small');
/** How often a shaped hold moves its few bytes, s. */
export const HOLD_SHAPE_PERIOD_SECONDS = 2;

/**
 * What one run does: operations × transports × keepalives × holds (sessions), optionally a transfer through each
 * operation × transport and what moves during exec holds. Every entry point parses it with one parser
 * (config/plan.ts parsePlan); ProbePlan, the Lambda event, the CLI's selection, the runner and the schedules are it.
 */
export interface RunPlan {
  readonly operations: readonly Operation[];
  readonly transports: readonly Transport[];
  readonly keepalives: readonly KeepaliveMode[];
  /** Sorted, de-duplicated, each within 0..MAX_HOLD_SECONDS. */
  readonly holdsSeconds: readonly number[];
  /** Also stream this many bytes through each operation × transport (the kubectl cp path); absent: no transfer. */
  readonly transferBytes?: number;
  /** What moves during exec holds; absent: silent. */
  readonly holdShapes?: readonly HoldShape[];
  /** How the transfer moves (exec: `kubectl cp`'s directions); absent: echo. */
  readonly transferShapes?: readonly TransferShape[];
}

/**
 * How long a run's holds last, s: its longest hold, all holds running at once; but attach's holds run one length
 * after another (SHARED_PROCESS_OPERATIONS), so with attach in the plan it is at least the sum of the distinct holds.
 * Every time budget of a run (the runner, the Lambda's timeout, the task's, a scrape's) counts from it.
 */
export const holdSpan = (plan: Pick<RunPlan, 'holdsSeconds' | 'operations'>): number => {
  const longest = Math.max(0, ...plan.holdsSeconds);
  if (!plan.operations.some((o) => SHARED_PROCESS_OPERATIONS.includes(o))) return longest;
  return Math.max(
    longest,
    [...new Set(plan.holdsSeconds)].reduce((a, b) => a + b, 0),
  );
};
/** What a plan probes when nothing narrows it. */
export const DEFAULT_MATRIX: RunPlan = {
  operations: DEFAULT_OPERATIONS,
  transports: TRANSPORTS,
  keepalives: ['kubectl'],
  holdsSeconds: [0],
};

/**
 * The keepalives of a run someone reads (`run`, `audit`): kubectl's, and an SDK client's sessions, which the WS-only
 * forecast is read from (after a hold, only a session held without pings says what SDK clients meet). The runners
 * that publish metrics (the Lambda, the task, the in-cluster runner, `serve`) keep DEFAULT_MATRIX: an SDK client's
 * sessions publish nothing (METRIC_KEEPALIVES), and list `sdk` to have their forecasts in the logs.
 */
export const READ_KEEPALIVES: readonly KeepaliveMode[] = ['kubectl', 'sdk'];

/**
 * The longest idle hold any runner accepts, in seconds. Above the kubelet's
 * and API server's 4 h streaming idle timeout, with room for a hold that
 * proves it; runners with a shorter life (Lambda: 15 min) check their own
 * fit on top of this (config/probe-config.ts, LAMBDA_MAX_HOLD_SECONDS).
 */
export const MAX_HOLD_SECONDS = 6 * 3600;

/** Bytes in a MiB: transfer sizes and throughput (MiB/s) are binary, everywhere. */
export const BYTES_PER_MIB = 1024 ** 2;

/** The largest transfer any runner accepts: data through NAT gateways and endpoints is billed per GB. */
export const MAX_TRANSFER_BYTES = 1024 ** 3;
const SIZE_UNITS: Readonly<Record<string, number>> = { '': 1, b: 1, kib: 1024, ki: 1024, mib: BYTES_PER_MIB, mi: BYTES_PER_MIB, gib: 1024 ** 3, gi: 1024 ** 3 };

/**
 * A transfer size: 8MiB, 64MiB, 512KiB, 1GiB (Ki/Mi/Gi too), or bytes; `0` or `off` is no transfer (undefined);
 * null when it is not a size or is over MAX_TRANSFER_BYTES. Binary units only, so "8MiB" can never be read as
 * 8 000 000 bytes.
 */
export function parseSizeText(text: unknown): number | undefined | null {
  const t = typeof text === 'number' ? String(text) : typeof text === 'string' ? text.trim() : undefined;
  if (t === 'off') return undefined;
  const m = t === undefined ? null : /^(\d+)\s*([a-zA-Z]*)$/.exec(t);
  const unit = m ? SIZE_UNITS[m[2]!.toLowerCase()] : undefined;
  if (!m || unit === undefined) return null;
  const bytes = Number(m[1]) * unit;
  if (bytes > MAX_TRANSFER_BYTES) return null;
  return bytes === 0 ? undefined : bytes;
}

/** A size in the largest binary unit that divides it: parseSizeText(formatSize(b)) === b. */
export function formatSize(bytes: number): string {
  for (const [unit, n] of [
    ['GiB', 1024 ** 3],
    ['MiB', 1024 ** 2],
    ['KiB', 1024],
  ] as const)
    if (bytes % n === 0) return `${bytes / n}${unit}`;
  return String(bytes);
}

/** A size flag outside the plan (the emulator's), as a USAGE error naming it. */
export function parseSize(field: string, text: unknown, code: ErrorCode = 'USAGE'): number | undefined {
  const bytes = parseSizeText(text);
  if (bytes === null)
    throw probeError(code, `${field} ${JSON.stringify(text)} is not a size (8MiB, 64MiB, 512KiB; 0 or off for none; at most 1GiB)`, { field });
  return bytes;
}

const UNIT_SECONDS: Readonly<Record<string, number>> = { ms: 0.001, s: 1, m: 60, h: 3600 };

/** kubectl-style durations: 65s, 6m, 1h30m, 500ms, or a bare number of seconds; undefined when it is none. */
export function parseDurationText(text: string): number | undefined {
  const t = text.trim();
  if (/^\d+(\.\d+)?$/.test(t)) return Number(t);
  let total = 0;
  let consumed = 0;
  for (const m of t.matchAll(/(\d+(?:\.\d+)?)(ms|s|m|h)/g)) {
    total += Number(m[1]) * UNIT_SECONDS[m[2]!]!;
    consumed += m[0].length;
  }
  return consumed !== t.length || t.length === 0 ? undefined : total;
}

/**
 * A duration outside the plan (`--max-hold`, a YAML hold already checked): `field` names the flag or config field
 * in the error; `code` is USAGE for flags and CONFIG_INVALID for files and events.
 */
export function parseDurationSeconds(field: string, text: string, code: ErrorCode = 'USAGE'): number {
  const s = parseDurationText(text);
  if (s === undefined) throw probeError(code, `${field} ${JSON.stringify(text)} is not a duration (examples: 0s, 65s, 6m, 1h)`, { field });
  return s;
}

/** "exec" / "port-forward", as kubectl's users say it. */
export const OPERATION_WORDS: Readonly<Record<Operation, string>> = { exec: 'exec', portforward: 'port-forward', attach: 'attach' };
export const TRANSPORT_WORDS: Readonly<Record<Transport, string>> = { websocket: 'WebSocket', spdy: 'SPDY' };
