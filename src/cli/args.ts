/**
 * Command-line parsing on node:util parseArgs, with validation that names the
 * flag, the value and the rule (USAGE errors, exit code 2).
 */
import { parseArgs, type ParseArgsConfig } from 'node:util';
import { probeError } from '../errors.js';
import { Checker, nearest } from '../config/checker.js';
import { PLAN_NAMES, commaItems, parsePlan } from '../config/plan.js';
import { NAME_RULES } from '../config/rules.js';
import { DEFAULT_MATRIX, type RunPlan } from '../vocabulary.js';

export type OptionSpec = NonNullable<ParseArgsConfig['options']>;

/**
 * kubectl's verbosity flag, as kubectl users type it (`-v=8`, `--v=8`, `-v 8`), where a command has `-v`
 * (`--wire-log`): kubectl logs each request's URL from level 6 and its headers from 7 (k8s.io/client-go/transport
 * round_trippers.go), what --wire-log shows; below 6 it shows nothing of the wire, and neither do we.
 */
const KUBECTL_VERBOSITY = /^--?v(?:=(\d+))?$/;
export function kubectlVerbosity(argv: readonly string[]): string[] {
  const out: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const m = KUBECTL_VERBOSITY.exec(argv[i]!);
    const level = m?.[1] ?? (m && /^\d+$/.test(argv[i + 1] ?? '') ? argv[++i] : undefined);
    if (m && level !== undefined) {
      if (Number(level) >= 6) out.push('--wire-log');
    } else out.push(argv[i]!);
  }
  return out;
}

export function parse<O extends OptionSpec>(argv: readonly string[], options: O, allowPositionals = false) {
  const args = options['wire-log']?.short === 'v' ? kubectlVerbosity(argv) : [...argv];
  try {
    return parseArgs<{ args: string[]; options: O; allowPositionals: boolean; strict: true }>({ args, options, allowPositionals, strict: true });
  } catch (err) {
    // A misspelt flag is named with the nearest known one, as a misspelt field is (config/checker.ts).
    const unknown = (err as { code?: string }).code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION' ? /Unknown option '(--?[^']+)'/.exec((err as Error).message) : null;
    if (unknown) {
      const flags = Object.keys(options).map((k) => `--${k}`);
      const near = unknown[1]!.startsWith('--') ? nearest(unknown[1]!, flags) : undefined;
      throw probeError('USAGE', `${unknown[1]} is not a known flag${near ? `: did you mean "${near}"?` : ''} (--help lists them)`, { field: unknown[1]! });
    }
    throw probeError('USAGE', (err as Error).message.replace(/^TypeError \[[A-Z_]+\]: /, ''), {});
  }
}

/** A comma-separated flag value (`--locations a,b`) as a selection from `allowed`, or `fallback`; the plan's lists' words. */
export function list<T extends string>(flag: string, value: string | undefined, allowed: readonly T[], fallback: readonly T[]): T[] {
  if (value === undefined) return [...fallback];
  const items = commaItems(value).map((v) => ({ value: v, path: `--${flag}` }));
  return new Checker('', { code: 'USAGE' }).selection(`--${flag}`, items, allowed);
}

/**
 * A flag that names something by one of the config's rules (config/rules.ts NAME_RULES): `--namespace`, `--pod`,
 * `--selector`, `--location`, `--cluster-name`, refused with the words the YAML and the construct use.
 */
export function named(flag: string, value: string | undefined, rule: (v: string) => string | undefined): string | undefined {
  if (value === undefined) return undefined;
  const problem = rule(value);
  if (problem) throw probeError('USAGE', `--${flag} ${problem}`, { field: flag });
  return value;
}

/** The target flags run and audit share, each by the config's own rule. */
export function targetFlags(values: { namespace?: string; pod?: string; selector?: string }): void {
  named('namespace', values.namespace, NAME_RULES.namespace);
  named('pod', values.pod, NAME_RULES.pod);
  named('selector', values.selector, NAME_RULES.selector);
}

/** The plan flags' values as parseArgs gives them (MATRIX_FLAGS). */
export interface PlanFlags {
  readonly ops?: string;
  readonly transports?: string;
  readonly hold?: string;
  readonly keepalive?: string;
  readonly transfer?: string;
  readonly 'hold-shape'?: string;
  readonly 'transfer-shape'?: string;
  /** `--tty`: every exec and attach session with a terminal (kubectl's -t): `--hold-shape tty`. */
  readonly tty?: boolean;
}

/** The plan the flags say (config/plan.ts, the one parser), `defaults` where a flag is absent. */
export function planFromFlags(values: PlanFlags, defaults: RunPlan = DEFAULT_MATRIX): RunPlan {
  return parsePlan(
    { checker: new Checker('', { code: 'USAGE' }), names: PLAN_NAMES.flags, commaLists: true },
    {
      operations: values.ops,
      transports: values.transports,
      keepalives: values.keepalive,
      holds: values.hold,
      transfer: values.transfer,
      holdShapes: values.tty ? [values['hold-shape'], 'tty'].filter(Boolean).join(',') : values['hold-shape'],
      transferShapes: values['transfer-shape'],
    },
    defaults,
  );
}

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
  'transfer-shape': { type: 'string' },
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
  tty: { type: 'boolean' },
} as const;
