/**
 * The field checker the deployment config parser uses: every failure is CONFIG_INVALID naming the field's path
 * (`locations[1].vpc.subnetIds[0]`), unknown keys are refused with the nearest known name.
 */
import { probeError, type ErrorCode } from '../errors.js';
import { RULES, duplicateName } from './rules.js';

export type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);
export { MAX_FUNCTION_NAME_LENGTH, NAME_PATTERN } from './rules.js';
export const EMAIL = /^[^@\s]+@[^@\s]+\.[^@\s]+$/;

export interface CheckerOptions {
  /** USAGE for flags and `serve`'s query (exit 2, a 400); CONFIG_INVALID (the default) for files, events and props. */
  readonly code?: ErrorCode;
  /**
   * A value not known until deploy (a CDK token such as a created secret's ARN): present, but its pattern is
   * checked by the service that resolves it. Only the construct passes this (Token.isUnresolved).
   */
  readonly unresolved?: (v: string) => boolean;
}

export class Checker {
  constructor(
    private readonly source: string,
    private readonly options: CheckerOptions = {},
  ) {}
  /** `<source>: <path> <value> <rule>` (no source for flags, whose path is the flag). */
  fail(field: string, rule: string): never {
    throw probeError(this.options.code ?? 'CONFIG_INVALID', `${this.source ? `${this.source}: ` : ''}${field} ${rule}`, { field });
  }
  /** A shared rule (rules.ts) applied to a field. */
  check(field: string, problem: string | undefined): void {
    if (problem) this.fail(field, problem);
  }
  /** A name (rules.ts RULES.name), required. */
  name(o: Obj, field: string): string {
    const v = this.str(o, 'name', field);
    this.check(`${field}.name`, RULES.name(v));
    return v;
  }
  obj(v: unknown, field: string): Obj {
    if (!isObj(v)) this.fail(field, 'must be an object');
    return v;
  }
  /**
   * An object with only these keys: a misspelt one (`cadata`, `taget`) is refused with the nearest known name.
   * `field` '' (or 'the document') is the top level: the key is then named alone.
   */
  only(v: unknown, field: string, keys: readonly string[], noun = 'field'): Obj {
    const o = this.obj(v, field);
    for (const k of Object.keys(o)) {
      if (o[k] === undefined || keys.includes(k)) continue;
      const near = nearest(k, keys);
      this.fail(
        `${field === 'the document' || field === '' ? '' : `${field}.`}${k}`,
        `is not a known ${noun}${near ? `: did you mean "${near}"?` : ''} (known: ${keys.join(', ')})`,
      );
    }
    return o;
  }
  str(o: Obj, key: string, field: string, pattern?: RegExp, rule?: string): string {
    const v = o[key];
    if (typeof v !== 'string' || v.length === 0) this.fail(`${field}.${key}`, 'is required (a non-empty string)');
    if (pattern && !pattern.test(v) && !this.options.unresolved?.(v)) this.fail(`${field}.${key}`, `"${v}" ${rule ?? `must match ${pattern}`}`);
    return v;
  }
  /** A string field that must meet a rule (rules.ts NAME_RULES), required unless `optional`. */
  ruled(o: Obj, key: string, field: string, rule: (v: string) => string | undefined): string;
  ruled(o: Obj, key: string, field: string, rule: (v: string) => string | undefined, optional: true): string | undefined;
  ruled(o: Obj, key: string, field: string, rule: (v: string) => string | undefined, optional = false): string | undefined {
    if (optional && o[key] === undefined) return undefined;
    const v = this.str(o, key, field);
    if (!this.options.unresolved?.(v)) this.check(`${field}.${key}`, rule(v));
    return v;
  }
  optStr(o: Obj, key: string, field: string, pattern?: RegExp, rule?: string): string | undefined {
    return o[key] === undefined ? undefined : this.str(o, key, field, pattern, rule);
  }
  arr(o: Obj, key: string, field: string, min = 0): unknown[] {
    const v = o[key];
    if (!Array.isArray(v)) this.fail(`${field}.${key}`, 'must be a list');
    if (v.length < min) this.fail(`${field}.${key}`, `must have at least ${min} item${min === 1 ? '' : 's'}`);
    return v;
  }
  strings(o: Obj, key: string, field: string, min: number, pattern?: RegExp, rule?: string): string[] {
    return this.arr(o, key, field, min).map((v, i) => {
      if (typeof v !== 'string' || (pattern && !pattern.test(v))) this.fail(`${field}.${key}[${i}]`, `"${String(v)}" ${rule ?? 'must be a string'}`);
      return v;
    });
  }
  /**
   * A non-empty selection from `allowed`, de-duplicated in the order given: the plan's lists and `--locations`. Each
   * item is refused at its own path with the nearest known name.
   */
  selection<T extends string>(path: string, items: readonly { readonly value: unknown; readonly path: string }[], allowed: readonly T[]): T[] {
    if (items.length === 0) this.fail(path, `is empty: give at least one of ${allowed.join(', ')}`);
    for (const { value, path: p } of items) {
      if (typeof value === 'string' && (allowed as readonly string[]).includes(value)) continue;
      const near = typeof value === 'string' ? nearest(value, allowed) : undefined;
      this.fail(p, `${JSON.stringify(value)} is not one of ${allowed.join(', ')}${near ? `: did you mean "${near}"?` : ''}`);
    }
    return [...new Set(items.map((x) => x.value as T))];
  }
  bool(o: Obj, key: string, field: string, fallback: boolean): boolean {
    const v = o[key] ?? fallback;
    if (typeof v !== 'boolean') this.fail(`${field}.${key}`, 'must be true or false');
    return v;
  }
  int(o: Obj, key: string, field: string, min: number, max: number, fallback?: number): number {
    const v = o[key] ?? fallback;
    if (typeof v !== 'number' || !Number.isInteger(v) || v < min || v > max) this.fail(`${field}.${key}`, `must be a whole number from ${min} to ${max}`);
    return v;
  }
}

/** The known name closest to a misspelt one (case-insensitive edit distance ≤ 1 per 3 letters, at most 3; a swap of two letters counting one), if any. */
export function nearest(word: string, known: readonly string[]): string | undefined {
  const distance = (a: string, b: string): number => {
    const d: number[][] = Array.from({ length: a.length + 1 }, (_, i) => Array.from({ length: b.length + 1 }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)));
    for (let i = 1; i <= a.length; i++) {
      for (let j = 1; j <= b.length; j++) {
        const cost = a[i - 1] === b[j - 1] ? 0 : 1;
        d[i]![j] = Math.min(d[i - 1]![j]! + 1, d[i]![j - 1]! + 1, d[i - 1]![j - 1]! + cost);
        if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) d[i]![j] = Math.min(d[i]![j]!, d[i - 2]![j - 2]! + 1);
      }
    }
    return d[a.length]![b.length]!;
  };
  // Flags are compared without their dashes; a short word may be one edit off, a longer one up to three.
  const bare = (w: string) => w.replace(/^-+/, '').toLowerCase();
  const scored = known.map((k) => ({ k, n: distance(bare(word), bare(k)) })).sort((x, y) => x.n - y.n);
  const allowed = Math.min(3, Math.max(1, Math.floor(bare(word).length / 3)));
  return scored[0] && scored[0].n <= allowed ? scored[0].k : undefined;
}

export function unique(c: Checker, items: readonly { name: string }[], field: string): void {
  const twice = duplicateName(items);
  if (twice) c.fail(`${field}[${twice.index}].name`, twice.problem);
}
