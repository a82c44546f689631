/**
 * One Plan: what a run does (vocabulary.ts RunPlan), parsed by one parser wherever it is written: the CLI's flags,
 * `serve`'s query, the Lambda event, the YAML schedule, the StreamProbe construct's schedule props and the
 * in-cluster runner's ConfigMap (which are flags). Every entry point refuses the same values with the same words
 * (`<source>: <path> <value> <rule>`, a misspelt name with the nearest known one), and every figure that follows
 * from a plan (which runner holds it, how many transfers run, how long they may take) is a function of it here.
 */
import type { Checker } from './checker.js';
import { runnerForHold, transferChainMs, type Runner } from './lambda-limits.js';
import {
  DEFAULT_MATRIX,
  HOLD_SHAPES,
  KEEPALIVES,
  MAX_HOLD_SECONDS,
  OPERATIONS,
  holdSpan,
  TRANSFER_OPERATIONS,
  TRANSFER_SHAPES,
  transferShapesOf,
  TRANSPORTS,
  type RunPlan,
  formatSize,
  parseDurationText,
  parseSizeText,
} from '../vocabulary.js';

export type { RunPlan } from '../vocabulary.js';
export { holdSpan } from '../vocabulary.js';

export const PLAN_FIELDS = ['operations', 'transports', 'keepalives', 'holds', 'transfer', 'holdShapes', 'transferShapes'] as const;
export type PlanField = (typeof PLAN_FIELDS)[number];
/** A plan as written, before parsing: each field as its entry point has it (a list, or for flags a comma-separated string). */
export type RawPlan = Partial<Record<PlanField, unknown>>;

/** How each entry point names the plan's fields. */
export const PLAN_NAMES = {
  /** `run`, `audit`, `invoke`, `manifest` and the runner's CronJob. */
  flags: {
    operations: '--ops',
    transports: '--transports',
    keepalives: '--keepalive',
    holds: '--hold',
    transfer: '--transfer',
    holdShapes: '--hold-shape',
    transferShapes: '--transfer-shape',
  },
  /** `serve`'s /probe?… */
  query: {
    operations: 'ops',
    transports: 'transports',
    keepalives: 'keepalive',
    holds: 'hold',
    transfer: 'transfer',
    holdShapes: 'hold_shape',
    transferShapes: 'transfer_shape',
  },
  /** The Lambda event, the YAML schedule, the construct's schedule props. */
  document: {
    operations: 'operations',
    transports: 'transports',
    keepalives: 'keepalives',
    holds: 'holds',
    transfer: 'transfer',
    holdShapes: 'holdShapes',
    transferShapes: 'transferShapes',
  },
} as const satisfies Record<string, Record<PlanField, string>>;
export type PlanNames = Record<PlanField, string>;

export interface PlanSource {
  readonly checker: Checker;
  readonly names: PlanNames;
  /** Prefix of every path (`schedules[0].`, `event.`); none for flags and the query. */
  readonly at?: string;
  /** Lists are written `a,b` (flags, the query), not as lists; an item is then named by the field alone. */
  readonly commaLists?: boolean;
  /** A limit of this entry point's runner on each hold (the task runner's taskMaxHold), named at the hold. */
  readonly holdRule?: (seconds: number) => string | undefined;
}

const HOLD_EXAMPLES = 'examples: 0s, 65s, 6m, 1h';

/** A comma-separated value's items (`exec, portforward`), blanks dropped: how flags and the query write a list. */
export const commaItems = (text: string): string[] =>
  text
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
export const SIZE_EXAMPLES = '8MiB, 64MiB, 512KiB; 0 or off for none; at most 1GiB';

/** The plan's fields of `raw`, each checked, the defaults' where absent. */
export function parsePlan(src: PlanSource, raw: RawPlan, defaults: RunPlan = DEFAULT_MATRIX): RunPlan {
  const c: Checker = src.checker;
  const path = (f: PlanField) => `${src.at ?? ''}${src.names[f]}`;
  const items = (f: PlanField): { value: unknown; path: string }[] | undefined => {
    const v = raw[f];
    if (v === undefined) return undefined;
    let list: unknown[];
    if (src.commaLists && typeof v === 'string') list = commaItems(v);
    else if (Array.isArray(v)) list = v;
    else c.fail(path(f), src.commaLists ? `${JSON.stringify(v)} must be a comma-separated list` : 'must be a list');
    return list.map((value, i) => ({ value, path: src.commaLists ? path(f) : `${path(f)}[${i}]` }));
  };
  const pick = <T extends string>(f: PlanField, allowed: readonly T[]): T[] | undefined => {
    const list = items(f);
    return list === undefined ? undefined : c.selection(path(f), list, allowed);
  };
  const holds = (): number[] | undefined => {
    const list = items('holds');
    if (list === undefined) return undefined;
    if (list.length === 0) c.fail(path('holds'), `is empty: give at least one hold (${HOLD_EXAMPLES})`);
    const seconds = list.map(({ value, path: p }) => {
      const s = typeof value === 'number' ? value : typeof value === 'string' ? parseDurationText(value) : undefined;
      if (s === undefined || !Number.isFinite(s) || s < 0) c.fail(p, `${JSON.stringify(value)} is not a duration (${HOLD_EXAMPLES})`);
      if (s > MAX_HOLD_SECONDS) c.fail(p, `${JSON.stringify(value)} is longer than the longest hold any runner accepts (${MAX_HOLD_SECONDS / 3600} h)`);
      if (src.holdRule) c.check(p, src.holdRule(s));
      return s;
    });
    return [...new Set(seconds)].sort((a, b) => a - b);
  };
  const transfer = (): number | undefined => {
    if (raw.transfer === undefined) return defaults.transferBytes;
    const bytes = parseSizeText(raw.transfer);
    if (bytes === null) c.fail(path('transfer'), `${JSON.stringify(raw.transfer)} is not a transfer size (${SIZE_EXAMPLES})`);
    return bytes;
  };
  const transferBytes = transfer();
  // Silent alone is what no hold shape says (plan-matrix.ts): one way to write it.
  const shapes = pick('holdShapes', HOLD_SHAPES) ?? defaults.holdShapes;
  const holdShapes = shapes && !(shapes.length === 1 && shapes[0] === 'silent') ? shapes : undefined;
  // Echo alone is what no transfer shape says: one way to write it.
  const moves = pick('transferShapes', TRANSFER_SHAPES) ?? defaults.transferShapes;
  const transferShapes = moves && !(moves.length === 1 && moves[0] === 'echo') ? moves : undefined;
  const plan: RunPlan = {
    operations: pick('operations', OPERATIONS) ?? [...defaults.operations],
    transports: pick('transports', TRANSPORTS) ?? [...defaults.transports],
    keepalives: pick('keepalives', KEEPALIVES) ?? [...defaults.keepalives],
    holdsSeconds: holds() ?? [...defaults.holdsSeconds],
    ...(transferBytes ? { transferBytes } : {}),
    ...(holdShapes ? { holdShapes: [...holdShapes] } : {}),
    ...(transferShapes ? { transferShapes: [...transferShapes] } : {}),
  };
  // Attach's holds run one after another: their sum is a hold of the run's, under the same limits as each one.
  const span = holdSpan(plan);
  if (span > Math.max(0, ...plan.holdsSeconds)) {
    const sum = `with attach the holds run one after another (the attach sessions share the container's one process), ${span} s in all`;
    if (span > MAX_HOLD_SECONDS) c.fail(path('holds'), `${sum}: longer than the longest hold any runner accepts (${MAX_HOLD_SECONDS / 3600} h)`);
    const rule = src.holdRule?.(span);
    if (rule) c.fail(path('holds'), `${sum}: ${rule}`);
  }
  return plan;
}

/**
 * The plan as the Lambda event (and the task's) carries it, what a schedule hands the function: parsePlan(document
 * names) reads it back unchanged. A transfer and hold shapes only when there are any.
 */
export function planEvent(plan: RunPlan): Partial<Record<PlanField, unknown>> {
  return {
    operations: [...plan.operations],
    transports: [...plan.transports],
    keepalives: [...plan.keepalives],
    holds: plan.holdsSeconds.map((h) => `${h}s`),
    ...(plan.transferBytes ? { transfer: formatSize(plan.transferBytes) } : {}),
    ...(plan.holdShapes ? { holdShapes: [...plan.holdShapes] } : {}),
    ...(plan.transferShapes ? { transferShapes: [...plan.transferShapes] } : {}),
  };
}

/** The plan as flag values, each one given (the runner's ConfigMap fills every flag): parsePlan(flags) reads them back unchanged. */
export function planFlagValues(plan: RunPlan): Record<PlanField, string> {
  const values = { transfer: 'off', holdShapes: ['silent'], transferShapes: ['echo'], ...planEvent(plan) };
  return Object.fromEntries(PLAN_FIELDS.map((f) => [f, [values[f]].flat().join(',')])) as Record<PlanField, string>;
}

/** Which runner holds a plan: the Lambda, or (holds longer than a Lambda run allows) the ECS task. */
export const runnerFor = (plan: Pick<RunPlan, 'holdsSeconds' | 'operations'>): Runner => runnerForHold(holdSpan(plan));
/** The transfers one run makes, one after another: one per operation × transport. */
export const transferSessions = (plan: Pick<RunPlan, 'operations' | 'transports' | 'transferShapes'>): number =>
  plan.operations.filter((o) => TRANSFER_OPERATIONS.includes(o)).reduce((n, o) => n + transferShapesOf(o, plan).length, 0) * plan.transports.length;
/** How long those transfers may take at the floor rate, ms (0 without a transfer). */
export const planTransferMs = (plan: Pick<RunPlan, 'operations' | 'transports' | 'transferBytes' | 'transferShapes'>): number =>
  transferChainMs(plan.transferBytes, transferSessions(plan));
