/**
 * Command-line parsing on node:util parseArgs, with validation that names the
 * flag, the value and the rule (USAGE errors, exit code 2).
 */
import { parseArgs, type ParseArgsConfig } from 'node:util';
import { probeError } from '../errors.js';
import { parseHolds, parseSelection } from '../vocabulary.js';

export type OptionSpec = NonNullable<ParseArgsConfig['options']>;

export function parse<O extends OptionSpec>(argv: readonly string[], options: O, allowPositionals = false) {
  try {
    return parseArgs<{ args: string[]; options: O; allowPositionals: boolean; strict: true }>({ args: [...argv], options, allowPositionals, strict: true });
  } catch (err) {
    throw probeError('USAGE', (err as Error).message.replace(/^TypeError \[[A-Z_]+\]: /, ''), {});
  }
}

/** A comma-separated flag value as a selection from `allowed` (the vocabulary's lists), or `fallback`. */
export function list<T extends string>(flag: string, value: string | undefined, allowed: readonly T[], fallback: readonly T[]): T[] {
  if (value === undefined) return [...fallback];
  return parseSelection(`--${flag}`, splitList(value), allowed);
}

/** Comma-separated hold durations (`0s,65s,6m`) as sorted seconds. */
export function holds(flag: string, value: string | undefined, fallback: readonly number[]): number[] {
  if (value === undefined) return [...fallback];
  return parseHolds(`--${flag}`, splitList(value));
}

const splitList = (value: string) =>
  value
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);

export function integer(flag: string, value: string | undefined, min: number, max: number): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (!Number.isInteger(n) || n < min || n > max)
    throw probeError('USAGE', `--${flag}: "${value}" is not a whole number from ${min} to ${max}`, { field: flag });
  return n;
}

export function oneOf<T extends string>(flag: string, value: string | undefined, allowed: readonly T[], fallback: T): T {
  if (value === undefined) return fallback;
  if (!(allowed as readonly string[]).includes(value)) throw probeError('USAGE', `--${flag}: "${value}" is not one of ${allowed.join(', ')}`, { field: flag });
  return value as T;
}

/** The flags that choose the matrix (operations, transports, holds, keepalives): run, audit and invoke. */
export const MATRIX_FLAGS = {
  ops: { type: 'string' },
  transports: { type: 'string' },
  hold: { type: 'string' },
  keepalive: { type: 'string' },
  transfer: { type: 'string' },
  'hold-shape': { type: 'string' },
} as const;

/** The flags that choose the cluster, the target and the matrix, shared by run and audit. */
export const PLAN_FLAGS = {
  kubeconfig: { type: 'string' },
  context: { type: 'string' },
  namespace: { type: 'string', short: 'n' },
  pod: { type: 'string' },
  selector: { type: 'string' },
  container: { type: 'string' },
  port: { type: 'string' },
  ...MATRIX_FLAGS,
} as const;
