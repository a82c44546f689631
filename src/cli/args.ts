/**
 * Command-line parsing on node:util parseArgs, with validation that names the
 * flag, the value and the rule (USAGE errors, exit code 2).
 */
import { parseArgs, type ParseArgsConfig } from 'node:util';
import { probeError } from '../errors.js';

export type OptionSpec = NonNullable<ParseArgsConfig['options']>;

export function parse<O extends OptionSpec>(argv: readonly string[], options: O, allowPositionals = false) {
  try {
    return parseArgs<{ args: string[]; options: O; allowPositionals: boolean; strict: true }>({ args: [...argv], options, allowPositionals, strict: true });
  } catch (err) {
    throw probeError('USAGE', (err as Error).message.replace(/^TypeError \[[A-Z_]+\]: /, ''));
  }
}

export function list(flag: string, value: string | undefined, allowed: readonly string[], fallback: readonly string[]): string[] {
  if (value === undefined) return [...fallback];
  const items = value.split(',').map((s) => s.trim()).filter(Boolean);
  for (const item of items) {
    if (!allowed.includes(item)) throw probeError('USAGE', `--${flag}: "${item}" is not one of ${allowed.join(', ')}`, { field: flag });
  }
  if (items.length === 0) throw probeError('USAGE', `--${flag}: give at least one of ${allowed.join(', ')}`, { field: flag });
  return [...new Set(items)];
}

/** Parses kubectl-style durations: 65s, 6m, 1h30m, 500ms, or a bare number of seconds. */
export function parseDurationSeconds(flag: string, text: string): number {
  const t = text.trim();
  if (/^\d+(\.\d+)?$/.test(t)) return Number(t);
  const re = /(\d+(?:\.\d+)?)(ms|s|m|h)/g;
  let total = 0;
  let consumed = 0;
  for (const m of t.matchAll(re)) {
    const n = Number(m[1]);
    total += m[2] === 'ms' ? n / 1000 : m[2] === 's' ? n : m[2] === 'm' ? n * 60 : n * 3600;
    consumed += m[0].length;
  }
  if (consumed !== t.length || t.length === 0) throw probeError('USAGE', `--${flag}: "${text}" is not a duration (examples: 0s, 65s, 6m, 1h)`, { field: flag });
  return total;
}

export function integer(flag: string, value: string | undefined, min: number, max: number): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (!Number.isInteger(n) || n < min || n > max) throw probeError('USAGE', `--${flag}: "${value}" is not a whole number from ${min} to ${max}`, { field: flag });
  return n;
}

export function oneOf<T extends string>(flag: string, value: string | undefined, allowed: readonly T[], fallback: T): T {
  if (value === undefined) return fallback;
  if (!(allowed as readonly string[]).includes(value)) throw probeError('USAGE', `--${flag}: "${value}" is not one of ${allowed.join(', ')}`, { field: flag });
  return value as T;
}
